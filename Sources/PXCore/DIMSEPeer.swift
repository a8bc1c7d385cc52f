import DICOMData
import Logging

/// A DIMSE node bound to the backend that speaks to it: a ``DICOMBackend`` (the DCMTK tools or the native
/// stack) and the ``Connection`` (the node's address and called AE title, the calling AE title, timeouts, TLS,
/// user identity). It is the peer-bound form of the backend's operations, so a command holds it as
/// `any Querying`, `any Retrieving`... exactly as it holds a DICOMweb service, and results that name the
/// node (an echo's called AE title and address) take them from ``connection``.
public struct DIMSEPeer: Verifying, Querying, Retrieving, Moving, Storing {
    public let backend: any DICOMBackend
    public let connection: Connection

    public init(backend: any DICOMBackend, connection: Connection) {
        self.backend = backend
        self.connection = connection
    }

    public var name: String { backend.name }
    public var queryOperation: String { "C-FIND" }
    public var retrieveOperation: String { "C-GET" }

    /// C-ECHO (PS3.7 §9.1.5).
    public func verify(logger: Logger) async throws(PXError) -> Verification {
        .echo(try await backend.echo(connection: connection, logger: logger))
    }

    /// C-FIND (PS3.4 §C.4.1).
    public func find(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        try await backend.find(request, connection: connection, logger: logger, onResponse: onResponse)
    }

    /// Many C-FINDs in a row (``DICOMBackend/withQuerySession(connection:logger:_:)``).
    /// - Throws: ``PXError``: what `body` throws, or the failure to open the shared association.
    public func withQuerySession<T>(
        logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await backend.withQuerySession(connection: connection, logger: logger, body)
    }

    /// C-GET (PS3.4 §C.4.3).
    public func get(
        _ request: GetRequest, logger: Logger, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try await backend.get(request, connection: connection, logger: logger, onProgress: onProgress)
    }

    /// C-MOVE (PS3.4 §C.4.2).
    public func move(
        _ request: MoveRequest, logger: Logger, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        try await backend.move(request, connection: connection, logger: logger, onProgress: onProgress)
    }

    /// C-STORE (PS3.4 Annex B) on one association.
    public func push(
        _ request: PushRequest, logger: Logger, onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        try await backend.push(request, connection: connection, logger: logger, onFile: onFile)
    }

    /// Several requests one after the other in a ``RetrieveSession`` on this node.
    public var retrieval: Retrieval { .inSessions(self) }

    /// Runs `body` with a ``RetrieveSession`` on this node
    /// (``DICOMBackend/withRetrieveSession(connection:logger:_:)``).
    /// - Throws: ``PXError``: what `body` throws.
    public func withRetrieveSession<T>(
        logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await backend.withRetrieveSession(connection: connection, logger: logger, body)
    }
}
