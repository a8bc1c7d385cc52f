import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

#if canImport(Glibc)
import Glibc
#endif

extension NativeBackend {
    /// C-GET SCU (PS3.4 C.4.3) on one association: the storage SOP classes are proposed with the SCP
    /// role (role selection, PS3.7 §D.3.3.4), and each C-STORE sub-operation is streamed to a temporary
    /// file under the root and renamed into the ``StorageLayout`` tree *before* its C-STORE-RSP is sent,
    /// as px-listen does.
    public func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws -> GetResult {
        let incoming = request.root + "/.px-incoming"
        try InstancePlacer.makeDirectories(incoming)
        defer { rmdir(incoming) }
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        var identifier = DataSet()
        for key in request.keys {
            guard let tag = DataDictionary.tag(forKeyword: key.keyword), let entry = DataDictionary.entry(for: tag) else { continue }
            identifier.set(tag, vr: entry.vr, string: key.value)
        }
        let keys = identifier
        let events = ListenEventChannel()
        // Like getscu, which overwrites a file of the same name.
        let placer = InstancePlacer(root: request.root, layout: request.layout, duplicates: .overwrite, fsync: false)
        let storage = LayoutStorage(
            placer: placer, book: nil, logger: logger, events: events,
            reportsDataSetLength: true, senderAETitle: connection.node.calledAETitle)
        let (stream, continuation) = AsyncStream<MoveProgress>.makeStream()
        let model = request.model.network
        async let result: RetrieveResult = run("C-GET", connection) {
            defer {
                continuation.finish()
                events.finish()
            }
            return try await client.withAssociation(to: peer, proposing: ProposedPresentationContext.get(model)) { association in
                try await association.get(keys, model: model, storage: storage, directory: incoming) { counts in
                    continuation.yield(Self.getProgress(counts, status: 0xFF00))
                }
            }
        }
        var responses = 0
        for await progress in stream {
            responses += 1
            await onProgress(progress)
        }
        let final = try await result
        var instances: [PXCore.ReceivedInstance] = []
        var failures: [ListenEvent] = []
        while let event = await events.next() {
            switch event {
            case .instanceReceived(let instance): instances.append(instance)
            case .storeFailed: failures.append(event)
            default: break
            }
        }
        let last = Self.getProgress(final.subOperations, status: final.status.rawValue)
        await onProgress(last)
        return GetResult(
            request: request, status: last.status, remaining: last.remaining ?? 0, completed: last.completed, failed: last.failed,
            warning: last.warning, responses: responses + 1, instances: instances, storeFailures: failures)
    }

    static func getProgress(_ counts: SubOperationCounts, status: UInt16) -> MoveProgress {
        MoveProgress(
            remaining: counts.remaining.map(Int.init), completed: Int(counts.completed ?? 0),
            failed: Int(counts.failed ?? 0), warning: Int(counts.warning ?? 0),
            status: PXCore.DIMSEStatus(code: status, service: .get))
    }
}
