import DICOMData
import DICOMProtocol

/// A ``QueryRetrieveProvider`` made of closures, for a small Query/Retrieve SCP (PS3.4 Annex C) without a type of
/// its own:
///
/// ```swift
/// var configuration = DICOMServer.Configuration(port: 0, aeTitle: "MYQR", temporaryDirectory: "/tmp")
/// configuration.queryRetrieve = QueryRetrieveSCPConfiguration(
///     provider: QueryRetrieveHandlers(
///         onFind: { request in studies.filter { $0.matches(request.identifier) } },   // C-FIND responses
///         onRetrieve: { request in try files(for: request).map(StorableFile.init(readingHeaderOf:)) },
///         onMoveDestination: { aeTitle in aeTitle == "VIEWER" ? viewer : nil }))
/// ```
///
/// The server does the DIMSE side (pending and final responses, sub-operations and their counts, C-CANCEL); the
/// closures only match and name instances.
public struct QueryRetrieveHandlers: QueryRetrieveProvider {
    /// C-FIND (PS3.4 §C.4.1): the response identifiers, one per entity matching the request at its level
    /// (§C.2.2.2), each sent as a pending response. Throw ``QueryRetrieveFailure`` to answer a failure status.
    public var onFind: @Sendable (QueryRetrieveRequest) async throws -> [DataSet]
    /// C-MOVE and C-GET (PS3.4 §C.4.2, §C.4.3): the instances to send as C-STORE sub-operations.
    public var onRetrieve: @Sendable (QueryRetrieveRequest) async throws -> [StorableFile]
    /// The address of a C-MOVE destination AE title; `nil` answers 0xA801 (Refused: Move Destination unknown).
    public var onMoveDestination: @Sendable (String) async -> DICOMPeer?

    /// A provider of these closures; by default no C-MOVE destination is known.
    public init(
        onFind: @escaping @Sendable (QueryRetrieveRequest) async throws -> [DataSet],
        onRetrieve: @escaping @Sendable (QueryRetrieveRequest) async throws -> [StorableFile],
        onMoveDestination: @escaping @Sendable (String) async -> DICOMPeer? = { _ in nil }
    ) {
        self.onFind = onFind
        self.onRetrieve = onRetrieve
        self.onMoveDestination = onMoveDestination
    }

    /// ``onFind``'s matches, in order.
    public func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error> {
        let matches = try await self.onFind(request)
        return AsyncThrowingStream { continuation in
            for match in matches { continuation.yield(match) }
            continuation.finish()
        }
    }

    /// ``onRetrieve``'s files.
    public func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile] {
        try await self.onRetrieve(request)
    }

    /// ``onMoveDestination``'s answer.
    public func moveDestination(_ aeTitle: String) async -> DICOMPeer? {
        await self.onMoveDestination(aeTitle)
    }
}
