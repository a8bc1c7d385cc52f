/// How px-listen receives: the port and AE title to answer to, and where files go.
public struct ListenConfiguration: Hashable, Sendable {
    public var port: Int
    /// The called AE title this receiver answers to.
    public var aeTitle: String
    /// The root of the storage tree (see ``StorageLayout``).
    public var root: String
    public var layout: StorageLayout
    public var timeouts: Timeouts

    public init(port: Int, aeTitle: String, root: String, layout: StorageLayout = StorageLayout(), timeouts: Timeouts = Timeouts(deadline: nil)) throws(PXError) {
        guard (1...65535).contains(port) else { throw .usage("port \(port) out of range 1-65535") }
        try AETitle.validate(aeTitle, role: "listener AE title")
        guard !root.isEmpty else { throw .usage("empty storage root") }
        self.port = port
        self.aeTitle = aeTitle
        self.root = root
        self.layout = layout
        self.timeouts = timeouts
    }
}

/// Something px-listen observed; one NDJSON line each.
public enum ListenEvent: Hashable, Sendable {
    /// The receiver is ready for associations.
    case listening(port: Int, aeTitle: String)
    /// A peer opened an association.
    case associationOpened(peerHost: String?, callingAETitle: String?, calledAETitle: String?)
    /// The association ended; `aborted` when it was not released normally.
    case associationClosed(peerHost: String?, callingAETitle: String?, aborted: Bool)
    /// An instance is stored at its final path.
    case instanceReceived(ReceivedInstance)
    /// The association that brought a series ended.
    case seriesComplete(directory: String, seriesInstanceUID: String, instances: Int)
    /// A received file could not be stored.
    case storeFailed(path: String?, sopInstanceUID: String?, error: PXError)
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

    public init(
        path: String, sopClassUID: String, sopInstanceUID: String, studyInstanceUID: String,
        seriesInstanceUID: String, callingAETitle: String?, bytes: Int, transferSyntaxUID: String
    ) {
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
