import DICOMData
import DICOMProtocol
import NIOCore

/// A SOP instance received by a C-STORE SCP (``DICOMServer``, or the C-GET sub-operations of
/// ``DICOMAssociation/get(_:model:level:storage:directory:progress:)``), already on disk as a Part 10 file
/// (PS3.10 §7: preamble, file meta information, then the data set as received). Its header (file meta
/// information and data set up to Pixel Data) is ``readHeader()``.
public struct IncomingInstance: Sendable, Hashable {
    /// The temporary Part 10 file: move it to keep it (``DICOMServer/Handlers/onStore`` removes what is left; a
    /// ``StorageDelegate`` moves or deletes it).
    public var path: String
    /// Affected SOP Class UID of the C-STORE-RQ.
    public var sopClassUID: String
    /// Affected SOP Instance UID of the C-STORE-RQ.
    public var sopInstanceUID: String
    /// The transfer syntax of the presentation context: the data set's encoding.
    public var transferSyntaxUID: String
    /// The peer's AE title (the calling AE title when the peer requested the association).
    public var callingAETitle: String
    /// The AE title the peer called.
    public var calledAETitle: String
    /// The size of the data set in bytes, as received.
    public var dataSetLength: Int
    /// The size of the whole file (preamble, meta information and data set).
    public var fileLength: Int
    /// Move Originator AE Title and Message ID, for C-STOREs that are sub-operations of a C-MOVE.
    public var moveOriginatorAETitle: String?
    /// The ``ServedAssociation/id`` of the association that brought it (0 for C-GET sub-operations).
    public var associationID: UInt64
    /// The file's first bytes (up to ``InstanceFileWriter/keptPrefixLength``), kept as they were written
    /// so that the header can be read without reading the file back (see
    /// `Part10File.readHeader(contentsOf:stopBefore:knownPrefix:fileLength:)`); empty when not kept.
    package var filePrefix: [UInt8] = []
    /// What ``readHeader()`` may cost: the receiving server's ``DICOMServer/Configuration/headerLimits``.
    public var headerLimits = HeaderLimits()
    /// The receiving server's budget for ``readHeader()``; `nil` for none.
    public var decodingBudget: DecodingBudget?

    public init(
        path: String,
        sopClassUID: String,
        sopInstanceUID: String,
        transferSyntaxUID: String,
        callingAETitle: String,
        calledAETitle: String,
        dataSetLength: Int,
        fileLength: Int,
        moveOriginatorAETitle: String? = nil,
        associationID: UInt64 = 0
    ) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
        self.dataSetLength = dataSetLength
        self.fileLength = fileLength
        self.moveOriginatorAETitle = moveOriginatorAETitle
        self.associationID = associationID
    }
}

/// Places received instances and decides the C-STORE-RSP status (PS3.4 §B.2.3).
///
/// Called once per complete instance, after its file has been written and closed. The C-STORE-RSP is sent
/// only when this returns, so returning ``DIMSEStatus/success`` promises the instance is safely stored.
/// A thrown error is answered with ``DIMSEStatus/outOfResources`` (0xA700); the temporary file is then removed
/// if it still exists.
public protocol StorageDelegate: Sendable {
    /// Places the file of a received instance.
    func didReceive(_ instance: IncomingInstance) async throws -> DIMSEStatus

    /// An association was accepted (after A-ASSOCIATE-AC was sent). Called by ``DICOMServer`` only.
    func associationOpened(_ association: ServedAssociation) async

    /// An accepted association ended: released (`aborted` false), or aborted, timed out or lost. Called once
    /// per ``associationOpened(_:)``, after the last ``didReceive(_:)`` of that association has returned.
    func associationClosed(_ association: ServedAssociation, aborted: Bool) async

    /// An instance could not even be written to its temporary file (disk full, folder unwritable): it was
    /// answered 0xA700 without ``didReceive(_:)`` being called.
    func didFailToStore(sopInstanceUID: String, associationID: UInt64, reason: String) async
}

extension StorageDelegate {
    public func associationOpened(_ association: ServedAssociation) async {}
    public func associationClosed(_ association: ServedAssociation, aborted: Bool) async {}
    public func didFailToStore(sopInstanceUID: String, associationID: UInt64, reason: String) async {}
}

/// An association a ``DICOMServer`` refused with an A-ASSOCIATE-RJ (PS3.8 §9.3.4), as
/// ``DICOMServer/Handlers/onAssociationRejected`` is told of it.
public struct RejectedAssociation: Sendable, Hashable {
    /// The peer's IP address, when known.
    public var peerHost: String?
    /// The Calling AE Title of the A-ASSOCIATE-RQ (PS3.8 §9.3.2): the peer's AE title.
    public var callingAETitle: String
    /// The Called AE Title of the A-ASSOCIATE-RQ: the AE title the peer asked for.
    public var calledAETitle: String
    /// The A-ASSOCIATE-RJ the server sends: result, source and reason (PS3.8 Table 9-21).
    public var rejection: AssociateRJ

    package init(peerHost: String?, callingAETitle: String, calledAETitle: String, rejection: AssociateRJ) {
        self.peerHost = peerHost
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
        self.rejection = rejection
    }
}

/// An association a ``DICOMServer`` accepted: who is on the other side, as ``DICOMServer/Handlers`` are told of
/// it (``DICOMServer/Handlers/onAssociationAccepted``, ``DICOMServer/Handlers/onAssociationClosed``).
public struct ServedAssociation: Sendable, Hashable {
    /// Unique within the process; ``IncomingInstance/associationID`` refers to it.
    public var id: UInt64
    /// The peer's IP address, when known.
    public var peerHost: String?
    /// The Calling AE Title of the A-ASSOCIATE-RQ (PS3.8 §9.3.2): the peer's AE title.
    public var callingAETitle: String
    /// The Called AE Title of the A-ASSOCIATE-RQ: the AE title the peer asked for (this server's, unless
    /// ``DICOMServer/Configuration/acceptsAnyCalledAETitle``).
    public var calledAETitle: String
    /// The user identity the requestor presented and the server accepted (PS3.7 §D.3.3.7); `nil` when the
    /// server does not check identities (``DICOMServer/Handlers/checkUserIdentity``).
    public var userIdentity: PresentedIdentity?
    /// How many of the requestor's presentation contexts were accepted: 0 when the association was accepted with
    /// every context rejected (PS3.8 §9.3.3.2; DCMTK accepts such an association too, and the requestor then
    /// releases or aborts it).
    public var acceptedPresentationContexts: Int

    /// What a requestor's User Identity sub-item (0x58) says about who it is: never the passcode or a token.
    public struct PresentedIdentity: Sendable, Hashable {
        /// User-Identity-Type (PS3.7 Table D.3-14).
        public var type: UInt8
        /// The Primary-field as UTF-8 text for types 1 and 2 (the username); `nil` for token types.
        public var username: String?

        package init(_ request: UserIdentityRQ) {
            self.type = request.identityType.rawValue
            let isUsername = request.identityType == .username || request.identityType == .usernameAndPasscode
            self.username =
                isUsername ? String(decoding: request.primaryField.readableBytesView, as: UTF8.self) : nil
        }
    }

    package init(
        id: UInt64, peerHost: String?, callingAETitle: String, calledAETitle: String,
        userIdentity: PresentedIdentity? = nil, acceptedPresentationContexts: Int = 1
    ) {
        self.acceptedPresentationContexts = acceptedPresentationContexts
        self.id = id
        self.peerHost = peerHost
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
        self.userIdentity = userIdentity
    }
}
