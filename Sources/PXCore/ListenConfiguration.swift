import DICOMData
import PXStorage

/// How px-listen receives: the port and AE title to answer to, and where files go.
public struct ListenConfiguration: Hashable, Sendable {
    public var port: Int
    /// The called AE title this receiver answers to.
    public var aeTitle: String
    /// The root of the storage tree (see ``StorageLayout``).
    public var root: String
    public var layout: StorageLayout
    public var timeouts: Timeouts
    /// What to do when an instance with the same SOP Instance UID (the same final path) arrives again.
    public var duplicates: DuplicatePolicy
    /// `fsync` each file before renaming it into place, and its directory after.
    public var fsync: Bool
    /// A series with no new instance for this long (seconds) is complete even if its association is
    /// still open; `nil` waits for the association to end.
    public var seriesTimeout: Double?
    /// Associations served at once; more are rejected (A-ASSOCIATE-RJ, transient). Native backend.
    public var maximumAssociations: Int
    /// Answer any called AE title, not only ``aeTitle`` (storescp's behaviour). Native backend.
    public var acceptsAnyCalledAETitle: Bool
    /// Calling AE titles allowed; `nil` allows any.
    public var allowedCallingAETitles: Set<String>?
    /// After a stop request, how long (seconds) associations in progress may run before they are aborted.
    public var shutdownGrace: Double
    /// What a peer may cost (native backend): limits it cannot reset by trickling bytes.
    public var limits = ListenLimits()
    /// DICOM TLS (PS3.15 Annex B.9): our certificate and key, and the CA for client certificates; `nil`: plain TCP.
    public var tls: TLSSettings? = nil
    /// The users whose identity (username and password, PS3.7 §D.3.3.7) an association must present; `nil`:
    /// no identity required. Native backend (storescp cannot check one).
    public var userAccounts: UserAccounts? = nil
    /// Where to send a storage commitment report (PS3.4 §J.3.3) when the requester did not take it on its own
    /// association: its AE at `host:port`, by calling AE title (``DICOMNode/calledAETitle`` is that title).
    public var commitmentDestinations: [String: DICOMNode] = [:]

    public init(
        port: Int, aeTitle: String, root: String, layout: StorageLayout = StorageLayout(),
        timeouts: Timeouts = Timeouts(deadline: nil), duplicates: DuplicatePolicy = .keep, fsync: Bool = false,
        seriesTimeout: Double? = nil, maximumAssociations: Int = 32, acceptsAnyCalledAETitle: Bool = false,
        allowedCallingAETitles: Set<String>? = nil, shutdownGrace: Double = 10
    ) throws(PXError) {
        guard (0...65535).contains(port) else { throw .usage("port \(port) out of range 1-65535") }
        try AETitle.validate(aeTitle, role: "listener AE title")
        guard !root.isEmpty else { throw .usage("empty storage root") }
        guard maximumAssociations >= 1 else { throw .usage("--max-associations must be at least 1") }
        if let seriesTimeout, !(seriesTimeout > 0) { throw .usage("--series-timeout must be positive") }
        guard shutdownGrace >= 0 else { throw .usage("--shutdown-grace must not be negative") }
        self.port = port
        self.aeTitle = aeTitle
        self.root = root
        self.layout = layout
        self.timeouts = timeouts
        self.duplicates = duplicates
        self.fsync = fsync
        self.seriesTimeout = seriesTimeout
        self.maximumAssociations = maximumAssociations
        self.acceptsAnyCalledAETitle = acceptsAnyCalledAETitle
        self.allowedCallingAETitles = allowedCallingAETitles
        self.shutdownGrace = shutdownGrace
    }
}

/// px-listen's defences against hostile or broken peers (native backend, issue 14).
public struct ListenLimits: Hashable, Sendable {
    /// Bytes per second a peer must send while a PDU or DIMSE message is in progress, averaged over
    /// `transferRateWindow` seconds; 0 disables the check.
    public var minimumTransferRate = 1024
    public var transferRateWindow: Double = 20
    /// Seconds a write may make no progress (the peer does not read) before the connection is closed.
    public var writeTimeout: Double = 60
    /// Connections that have not yet sent a complete A-ASSOCIATE-RQ; beyond it the oldest is closed.
    public var maximumPendingConnections = 64
    /// Bytes all associations together may spend decoding received headers; beyond it a C-STORE is
    /// refused with 0xA700.
    public var decodingMemory = 256 << 20
    /// Seconds one association may last, whatever it does (an endless stream of valid C-ECHOs included);
    /// then px-listen aborts it and frees its slot. 0: no limit.
    public var maximumAssociationSeconds: Double = 3600

    /// The defaults.
    public init() {}

    /// These limits, if they make sense.
    /// - Throws: ``PXError/usage(_:)`` naming the px-listen option that is out of range.
    public func validated() throws(PXError) -> ListenLimits {
        guard minimumTransferRate >= 0 else { throw .usage("--min-transfer-rate must not be negative") }
        guard transferRateWindow > 0 else { throw .usage("--transfer-rate-window must be positive") }
        guard writeTimeout > 0 else { throw .usage("--write-timeout must be positive") }
        guard maximumPendingConnections >= 1 else { throw .usage("--max-pending-connections must be at least 1") }
        guard decodingMemory >= 1 << 20 else { throw .usage("--decoding-memory must be at least 1 MiB") }
        guard maximumAssociationSeconds >= 0 else { throw .usage("--max-association-seconds must not be negative") }
        return self
    }
}

/// Something px-listen observed; one NDJSON line each.
public enum ListenEvent: Hashable, Sendable {
    /// The receiver is ready for associations.
    case listening(port: Int, aeTitle: String)
    /// A peer opened an association.
    /// `userIdentity`: what it presented, when the receiver requires one (``ListenConfiguration/userAccounts``).
    case associationOpened(
        peerHost: String?, callingAETitle: String?, calledAETitle: String?, association: UInt64? = nil,
        userIdentity: PresentedUserIdentity? = nil)
    /// A peer's association was refused with an A-ASSOCIATE-RJ (PS3.8 §9.3.4): `result`, `source` and `reason`
    /// in px's words, as ``PXError/associationRejected(result:source:reason:)`` names them ("Rejected
    /// Permanent", "Service User", "Called AE Title Not Recognized"). An association accepted with every
    /// presentation context rejected (nothing the peer proposed is served) is refused too, between its
    /// `associationOpened` and `associationClosed`: ``noPresentationContextAccepted(peerHost:callingAETitle:calledAETitle:)``.
    case associationRejected(
        peerHost: String?, callingAETitle: String?, calledAETitle: String?, result: String, source: String,
        reason: String)
    /// The association ended; `aborted` when it was not released normally.
    case associationClosed(peerHost: String?, callingAETitle: String?, aborted: Bool, association: UInt64? = nil)
    /// An instance is stored at its final path.
    case instanceReceived(ReceivedInstance)
    /// The associations that brought a series ended, or it was idle for the series timeout; its
    /// `receiving.series` is now `series.info`.
    case seriesComplete(SeriesCompletion)
    /// A received file could not be stored. `status` is the failure status px answered the C-STORE with
    /// (0xA900 for a data set that holds another SOP Instance UID, 0xC000 for one it cannot read, 0xA700 when
    /// it could not write it): the sender then counts the sub-operation as failed itself. `nil` when the
    /// sender was told it was stored (getscu and storescp answer before px places the file) or there was no
    /// C-STORE (a WADO-RS part): then nobody else counts it.
    case storeFailed(path: String?, sopInstanceUID: String?, error: PXError, status: DIMSEStatus? = nil)
    /// A peer asked for storage commitment (N-ACTION, PS3.4 §J.3.2) and was answered: which instances are
    /// committed (their files are in place) and which failed, with their Failure Reason.
    case storageCommitment(
        callingAETitle: String, transactionUID: String, committed: [CommitmentInstance], failed: [CommitmentInstance],
        association: UInt64)
    /// A storage commitment report went (or could not go) on a new association to the requester (PS3.4
    /// §J.3.3): `destination` is where, `error` why it did not reach it.
    case storageCommitmentReported(
        callingAETitle: String, transactionUID: String, destination: String?, status: DIMSEStatus?, error: PXError?)
}

/// One stored instance.
public struct ReceivedInstance: Hashable, Sendable {
    public var path: String
    public var sopClassUID: String
    public var sopInstanceUID: String
    public var studyInstanceUID: String
    public var seriesInstanceUID: String
    public var callingAETitle: String?
    public var bytes: Int
    public var transferSyntaxUID: String
    /// Set when the instance was already stored: what the ``DuplicatePolicy`` did (`path` is then the
    /// kept file for ``DuplicatePolicy/keep``, the new name for ``DuplicatePolicy/rename``).
    public var duplicate: DuplicatePolicy?
    /// The association that brought it, when the backend knows.
    public var association: UInt64?
    /// The file's header (meta information and the data set before Pixel Data) as the receiver parsed it
    /// on receipt, so that an index records the instance without reading the file again; `nil` when the
    /// backend did not parse it (DCMTK's tools write the files), and then the file is read. Not part of
    /// equality: two reports of the same stored instance are equal whether or not one carries it.
    public var header: Part10File?

    public init(
        path: String, sopClassUID: String, sopInstanceUID: String, studyInstanceUID: String,
        seriesInstanceUID: String, callingAETitle: String?, bytes: Int, transferSyntaxUID: String,
        duplicate: DuplicatePolicy? = nil, association: UInt64? = nil, header: Part10File? = nil
    ) {
        self.duplicate = duplicate
        self.association = association
        self.header = header
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.callingAETitle = callingAETitle
        self.bytes = bytes
        self.transferSyntaxUID = transferSyntaxUID
    }
}

extension ReceivedInstance {
    public static func == (lhs: ReceivedInstance, rhs: ReceivedInstance) -> Bool {
        lhs.path == rhs.path && lhs.sopClassUID == rhs.sopClassUID && lhs.sopInstanceUID == rhs.sopInstanceUID
            && lhs.studyInstanceUID == rhs.studyInstanceUID && lhs.seriesInstanceUID == rhs.seriesInstanceUID
            && lhs.callingAETitle == rhs.callingAETitle && lhs.bytes == rhs.bytes
            && lhs.transferSyntaxUID == rhs.transferSyntaxUID && lhs.duplicate == rhs.duplicate
            && lhs.association == rhs.association
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(sopInstanceUID)
        hasher.combine(duplicate)
        hasher.combine(association)
    }
}

extension ListenEvent {
    /// The refusal of an association accepted with every presentation context rejected (PS3.8 §9.3.3.2):
    /// result "Accepted", source "Service User", reason "No Presentation Context Accepted". Both backends accept
    /// such an association (storescp logs "(but no valid presentation contexts)"); the requestor then
    /// releases or aborts it.
    public static func noPresentationContextAccepted(
        peerHost: String?, callingAETitle: String?, calledAETitle: String?
    ) -> ListenEvent {
        .associationRejected(
            peerHost: peerHost, callingAETitle: callingAETitle, calledAETitle: calledAETitle, result: "Accepted",
            source: "Service User", reason: "No Presentation Context Accepted")
    }
}
