import ArgumentParser
import PXCore
import PXStorage

/// px-listen's receiver: port, AE titles, the storage tree, series completion, timeouts and the hook.
public struct ListenOptions: ParsableArguments {
    @Option(
        name: [.customShort("p"), .long], help: "TCP port to listen on (0: any free port, see the listening event).")
    public var port: Int = 11113
    @Option(name: .customLong("aet"), help: "The AE title to answer to.") public var aeTitle: String = "PXLISTEN"
    @Flag(
        name: .customLong("any-called-aet"),
        help: "Accept associations whatever AE title they call (native; dcmtk always does).")
    public var anyCalledAET = false
    @Option(
        name: .customLong("allow-calling"),
        help: "Accept only these calling AE titles (comma-separated; native backend).")
    public var allowCalling: String?
    @Option(
        name: .customLong("max-associations"), help: "Associations served at once; more are rejected (native backend).")
    public var maxAssociations: Int = 32
    @Option(name: [.customShort("d"), .customLong("datadir")], help: "Root of the storage tree.") public var root:
        String = "./px-data"
    @Option(
        name: .customLong("layout"),
        help:
            "Path template under the root, {Keyword} fields, e.g. {PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm.")
    public var layout: String?
    @Option(
        name: .customLong("on-duplicate"),
        help: "An instance received again: keep (the first), overwrite, or rename (store as -1, -2...).")
    public var onDuplicate: DuplicatePolicy = .keep
    @Flag(name: .customLong("fsync"), help: "fsync each file before renaming it into place, and its folder after.")
    public var fsync = false
    @Option(
        name: .customLong("series-timeout"), help: "A series with no new instance for this many seconds is complete.")
    public var seriesTimeout: Double?
    @Option(
        name: .customLong("shutdown-grace"),
        help: "On SIGTERM/SIGINT, seconds the associations in progress may run before they are aborted.")
    public var shutdownGrace: Double = 10
    @Option(name: [.customShort("t"), .customLong("tmpdir")], help: .hidden) public var tmpdir: String?
    @Option(name: [.customShort("l"), .customLong("logdir")], help: .hidden) public var logdir: String?
    @Option(name: [.customShort("e"), .customLong("executable")], help: "pypx: path of storescp.") public
        var executable: String?
    @Option(name: .customLong("acse-timeout"), help: "Association negotiation and release timeout (s).") public
        var acse: Double = 30
    @Option(name: .customLong("dimse-timeout"), help: "How long a peer may stay silent on an association (s).") public
        var dimse: Double = 60
    @OptionGroup(title: "TLS") public var tls: ListenTLSOptions
    @Option(
        name: .customLong("min-transfer-rate"),
        help:
            "Bytes/s a peer must keep sending while a PDU or message is in progress, over --transfer-rate-window; a trickling peer is aborted (native; 0: off)."
    )
    public var minTransferRate: Int = ListenLimits().minimumTransferRate
    @Option(
        name: .customLong("transfer-rate-window"), help: "Seconds over which --min-transfer-rate is measured (native).")
    public var transferRateWindow: Double = ListenLimits().transferRateWindow
    @Option(
        name: .customLong("write-timeout"),
        help: "Seconds a response may wait for a peer that does not read before it is disconnected (native).")
    public var writeTimeout: Double = ListenLimits().writeTimeout
    @Option(
        name: .customLong("max-pending-connections"),
        help: "Connections that have not yet sent their A-ASSOCIATE-RQ; beyond it the oldest is closed (native).")
    public var maxPendingConnections: Int = ListenLimits().maximumPendingConnections
    @Option(
        name: .customLong("decoding-memory"),
        help:
            "MiB all associations together may use to read received headers; beyond it a C-STORE is refused with 0xA700 (native)."
    )
    public var decodingMemory: Int = ListenLimits().decodingMemory >> 20
    @Option(
        name: .customLong("max-association-seconds"),
        help:
            "Seconds one association may last, whatever it does; then it is aborted and its slot freed (native; 0: no limit)."
    )
    public var maxAssociationSeconds: Double = ListenLimits().maximumAssociationSeconds
    @Option(
        name: .customLong("on-series-complete"), parsing: .remaining,
        help: ArgumentHelp(
            "CMD ARGS...: run once per completed series (no shell), with PX_SERIES_DIR, PX_SERIES_UID, PX_STUDY_UID, PX_PATIENT_ID, PX_INSTANCES and PX_COMPLETION_REASON set. Must come last.",
            valueName: "command"))
    public var onSeriesComplete: [String] = []

    public init() {}

    public func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port \(port) is out of range 0-65535") }
        do { try AETitle.validate(aeTitle, role: "--aet") } catch { throw ValidationError(error.message) }
        if maxAssociations < 1 { throw ValidationError("--max-associations must be at least 1") }
        if let layout { do { _ = try StorageLayout(template: layout) } catch { throw ValidationError(error.message) } }
        if let seriesTimeout, !(seriesTimeout > 0) { throw ValidationError("--series-timeout must be positive") }
        if shutdownGrace < 0 { throw ValidationError("--shutdown-grace must not be negative") }
        do { _ = try self.limits() } catch { throw ValidationError(error.message) }
    }

    /// The defences against hostile peers these options describe.
    /// - Throws: ``PXError/usage(_:)`` for a value out of range.
    public func limits() throws(PXError) -> ListenLimits {
        var limits = ListenLimits()
        limits.minimumTransferRate = minTransferRate
        limits.transferRateWindow = transferRateWindow
        limits.writeTimeout = writeTimeout
        limits.maximumPendingConnections = maxPendingConnections
        limits.decodingMemory = decodingMemory << 20
        limits.maximumAssociationSeconds = maxAssociationSeconds
        return try limits.validated()
    }

    /// The receiver these options describe, the root made absolute.
    /// - Throws: ``PXError/usage(_:)`` for a bad layout or AE title.
    public func configuration() throws(PXError) -> ListenConfiguration {
        let allowed: Set<String>? = allowCalling.map { Set($0.split(separator: ",").map { String($0) }) }
        var configuration = try ListenConfiguration(
            port: port, aeTitle: aeTitle, root: absolutePath(root),
            layout: try layout.map { (template: String) throws(PXError) in
                do throws(StorageError) { return try StorageLayout(template: template) } catch { throw .storage(error) }
            } ?? StorageLayout(),
            timeouts: Timeouts(connect: 10, acse: acse, dimse: dimse, deadline: nil),
            duplicates: onDuplicate, fsync: fsync, seriesTimeout: seriesTimeout,
            maximumAssociations: maxAssociations, acceptsAnyCalledAETitle: anyCalledAET,
            allowedCallingAETitles: allowed, shutdownGrace: shutdownGrace)
        configuration.limits = try self.limits()
        return try tls.applied(to: configuration)
    }
}
