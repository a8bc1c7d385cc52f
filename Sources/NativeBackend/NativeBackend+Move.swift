import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-MOVE (PS3.4 C.4.2): every pending response's sub-operation counts go to `onProgress`. A session of
    /// one request (``NativeSession``).
    public func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        try await withRetrieveSession(connection: connection, logger: logger) { session throws(PXError) in
            try await session.move(request, onProgress: onProgress)
        }
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
