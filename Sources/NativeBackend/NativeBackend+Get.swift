import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore
import PXStorage

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
    ) async throws(PXError) -> GetResult {
        let (placer, incoming) = try request.placerAndStagingFolder()
        defer { rmdir(incoming) }
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        let keys = Self.identifier(request.keys)
        let events = ListenEventChannel()
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
            return try await client.withAssociation(to: peer, proposing: ProposedPresentationContext.get(model)) {
                association in
                try await association.get(keys, model: model, storage: storage, directory: incoming) { counts in
                    continuation.yield(Self.progress(counts, status: DIMSEStatus(code: 0xFF00, service: .get)))
                }
            }
        }
        var responses = 0
        for await progress in stream {
            responses += 1
            await onProgress(progress)
        }
        let final: RetrieveResult
        do { final = try await result } catch { throw PXError.from(error) }
        var instances: [PXCore.ReceivedInstance] = []
        var failures: [ListenEvent] = []
        while let event = await events.next() {
            switch event {
            case .instanceReceived(let instance): instances.append(instance)
            case .storeFailed: failures.append(event)
            default: break
            }
        }
        let last = Self.progress(final.subOperations, status: final.status)
        await onProgress(last)
        return GetResult(
            request: request, status: last.status, remaining: last.remaining ?? 0, completed: last.completed,
            failed: last.failed,
            warning: last.warning, responses: responses + 1, instances: instances, storeFailures: failures)
    }
}
