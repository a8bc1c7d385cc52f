import Logging

/// Several C-MOVEs and C-GETs run one after another (PS3.4 §C.4.2, §C.4.3), on one association where the
/// backend can: px-move and px-get of several targets, px-sync's node → folder (C-GET) and node → node
/// (C-MOVE) transfers.
///
/// Open one with ``DICOMBackend/withRetrieveSession(connection:logger:_:)``. Requests are run one at a time,
/// in the order they are given (a session is not for concurrent use: open one session per parallel lane).
/// Results and errors are those of ``DICOMBackend/move(_:connection:logger:onProgress:)`` and
/// ``DICOMBackend/get(_:connection:logger:onProgress:)``: a failure status is in the result, an association
/// or transport failure is thrown, and the session goes on with the next request on a new association.
/// The connection's overall deadline (``Timeouts/deadline``) bounds each request, not the session.
public protocol RetrieveSession: Sendable {
    /// Runs one C-MOVE on the session's association.
    /// - Throws: ``PXError`` for association and transport failures.
    func move(
        _ request: MoveRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult

    /// Runs one C-GET on the session's association.
    /// - Throws: ``PXError`` for association and transport failures.
    func get(
        _ request: GetRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult
}

/// The session of a backend that has no long-lived association (the DCMTK tools): each request runs on its
/// own, as ``DICOMBackend/move(_:connection:logger:onProgress:)`` or
/// ``DICOMBackend/get(_:connection:logger:onProgress:)`` would.
public struct OneAssociationPerRequest: RetrieveSession {
    public let backend: any DICOMBackend
    public let connection: Connection
    public let logger: Logger

    public init(backend: any DICOMBackend, connection: Connection, logger: Logger) {
        self.backend = backend
        self.connection = connection
        self.logger = logger
    }

    public func move(
        _ request: MoveRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        try await backend.move(request, connection: connection, logger: logger, onProgress: onProgress)
    }

    public func get(
        _ request: GetRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try await backend.get(request, connection: connection, logger: logger, onProgress: onProgress)
    }
}
