import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-MOVE (PS3.4 C.4.2): every pending response's sub-operation counts go to `onProgress`.
    public func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        let keys = Self.identifier(request.keys)
        let (stream, continuation) = AsyncStream<MoveProgress>.makeStream()
        async let result: RetrieveResult = run("C-MOVE", connection) {
            defer { continuation.finish() }
            return try await client.withAssociation(to: peer, proposing: [.move(request.model.network)]) {
                association in
                try await association.move(keys, model: request.model.network, destination: request.destination) {
                    counts in
                    continuation.yield(Self.progress(counts, status: DIMSEStatus(code: 0xFF00, service: .move)))
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
        let last = Self.progress(final.subOperations, status: final.status)
        await onProgress(last)
        return MoveResult(
            request: request, status: last.status, completed: last.completed, failed: last.failed,
            warning: last.warning, responses: responses + 1)
    }

    /// Sub-operation counts of a C-MOVE-RSP or C-GET-RSP (PS3.7 §9.1.3.1, §9.1.4.1) in PXCore's shape.
    static func progress(_ counts: SubOperationCounts, status: DIMSEStatus) -> MoveProgress {
        MoveProgress(
            remaining: counts.remaining.map(Int.init), completed: Int(counts.completed ?? 0),
            failed: Int(counts.failed ?? 0), warning: Int(counts.warning ?? 0),
            status: status)
    }

    /// The identifier of a C-MOVE or C-GET: each key with its dictionary VR.
    static func identifier(_ keys: [(keyword: String, value: String)]) -> DataSet {
        var identifier = DataSet()
        for key in keys {
            guard let tag = DataDictionary.tag(forKeyword: key.keyword), let entry = DataDictionary.entry(for: tag)
            else { continue }
            identifier.set(tag, vr: entry.vr, string: key.value)
        }
        return identifier
    }
}
