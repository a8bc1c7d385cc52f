import DICOMData
import DICOMProtocol

/// What ``DICOMServer`` consults to serve C-FIND, C-MOVE and C-GET as a Query/Retrieve SCP (PS3.4 Annex C):
/// the matching (§C.2.2.2) and the instances behind the matches are the provider's; the DIMSE exchanges,
/// statuses, sub-operations and cancellation are the server's.
///
/// Set it through ``DICOMServer/Configuration/queryRetrieve``. ``DirectoryArchive`` is an implementation over a
/// folder of Part 10 files; ``QueryRetrieveHandlers`` one made of closures.
public protocol QueryRetrieveProvider: Sendable {
    /// C-FIND (PS3.4 §C.4.1): the response identifiers, one per matching entity at ``QueryRetrieveRequest/level``,
    /// produced as they are found; the server sends one pending response per element and stops reading the
    /// sequence when the requestor cancels.
    ///
    /// - Throws: ``QueryRetrieveFailure`` to answer with a particular failure status; any other error is answered
    ///   with 0xC000 (Unable to process).
    func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error>

    /// C-MOVE and C-GET (PS3.4 §C.4.2, §C.4.3): the instances to send as C-STORE sub-operations.
    func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile]

    /// The address of a C-MOVE destination (Move Destination (0000,0600)); `nil` answers 0xA801 (Refused: Move
    /// Destination unknown).
    func moveDestination(_ aeTitle: String) async -> DICOMPeer?

    /// A file ``retrieve(_:)`` gave was not sent because it is no longer the file the provider indexed
    /// (``DICOMNetworkError/Code/notTheIndexedFile``: a link on its way, replaced or changed): its sub-operation
    /// failed, and the provider brings what it holds of that file up to date. By default nothing is done.
    func indexedFileChanged(_ file: StorableFile) async
}

extension QueryRetrieveProvider {
    public func indexedFileChanged(_ file: StorableFile) async {}
}

/// One C-FIND, C-MOVE or C-GET request, decoded and checked by the server.
public struct QueryRetrieveRequest: Sendable {
    /// The information model (from the request's Affected SOP Class UID).
    public var model: QueryRetrieveModel
    /// Query/Retrieve Level (0008,0052), valid for the model (PS3.4 §C.6).
    public var level: QueryRetrieveLevel
    /// The identifier as received (its Specific Character Set included).
    public var identifier: DataSet
    /// The requestor's AE title.
    public var callingAETitle: String
    /// The AE title the requestor called (this SCP), e.g. for Retrieve AE Title (0008,0054).
    public var calledAETitle: String

    public init(
        model: QueryRetrieveModel, level: QueryRetrieveLevel, identifier: DataSet, callingAETitle: String,
        calledAETitle: String
    ) {
        self.model = model
        self.level = level
        self.identifier = identifier
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
    }
}

/// A provider's refusal of a request, with the DIMSE status to answer (PS3.4 Tables C.4-1, C.4-2, C.4-3).
public struct QueryRetrieveFailure: Error, Sendable, CustomStringConvertible {
    /// A failure status: 0xA900 (Identifier does not match SOP Class), 0xA700, 0xC000 ...
    public var status: DIMSEStatus
    /// Error Comment (0000,0902), at most 64 characters are sent.
    public var comment: String
    /// Offending Element (0000,0901).
    public var offendingElement: Tag?

    public init(status: DIMSEStatus, comment: String, offendingElement: Tag? = nil) {
        self.status = status
        self.comment = comment
        self.offendingElement = offendingElement
    }

    public var description: String { "\(self.status): \(self.comment)" }
}
