import DICOMData
import Logging
import PXCore

/// A DIMSE node as a place: what it holds, asked with C-FIND in the Study Root model (PS3.4 §C.6.2) at
/// STUDY level (with NumberOfStudyRelatedSeries / NumberOfStudyRelatedInstances, PS3.4 §C.6.2.1.2), SERIES
/// level (NumberOfSeriesRelatedInstances) and IMAGE level (the SOP Instance UIDs).
///
/// The counts are optional for an SCP (dcmqrscp leaves them empty): an empty or unreadable count is `nil`,
/// and the planner then goes one level down instead of trusting it.
public struct NodePlace: MatchingInventory {
    public let backend: any DICOMBackend
    public let connection: Connection
    public let logger: Logger
    /// Bound on the responses to one query (``FindRequest/maxResponses``).
    public var maxResponses: Int? = FindRequest.defaultMaxResponses

    public init(backend: any DICOMBackend, connection: Connection, logger: Logger) {
        self.backend = backend
        self.connection = connection
        self.logger = logger
    }

    /// The node as a peer (``DIMSEPeer``): the backend bound to ``connection``.
    public var peer: DIMSEPeer { DIMSEPeer(backend: backend, connection: connection) }

    /// One C-FIND; a failure status is thrown (a partial answer would make the plan wrong).
    public func matches(_ level: QueryLevel, _ identifier: DataSet) async throws(PXError) -> [DataSet] {
        let request = FindRequest(level: level, model: .studyRoot, identifier: identifier, maxResponses: maxResponses)
        let result = try await peer.find(request, logger: logger) { _ in }
        if result.status.isFailure {
            throw .dimseFailure(result.status, operation: "\(peer.queryOperation) (\(level.dicomValue))")
        }
        if let maxResponses, result.matches.count > maxResponses { throw .tooManyResponses(limit: maxResponses) }
        return result.matches
    }
}
