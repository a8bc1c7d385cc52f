import ArgumentParser
import PXCore

/// What a DICOM server of px (px-listen, px-serve) allows its peers: how many associations at once, how long
/// each wait may last (ARTIM/ACSE, DIMSE, a write to a peer that does not read, the whole association), how
/// slowly a peer may send, and how much memory decoding what they send may take. One definition, used through
/// `@OptionGroup` by every server, so that a guard added here holds for all of them.
public struct ServerOptions: ParsableArguments {
    @Option(
        name: .customLong("max-associations"), help: "Associations served at once; more are rejected (native backend).")
    public var maxAssociations: Int = 32
    @Option(
        name: .customLong("require-user"),
        help: ArgumentHelp(
            "Accept only associations presenting a username and password listed in this file (lines USER:sha256:SALT_HEX:HASH_HEX, see --hash-password); reject others (PS3.7 D.3.3.7). Native backend.",
            valueName: "file"))
    public var requireUser: String?
    @Option(name: .customLong("acse-timeout"), help: "Association negotiation and release timeout (s).") public
        var acse: Double = 30
    @Option(name: .customLong("dimse-timeout"), help: "How long a peer may stay silent on an association (s).") public
        var dimse: Double = 60
    @Option(
        name: .customLong("shutdown-grace"),
        help: "On SIGTERM/SIGINT, seconds the associations in progress may run before they are aborted.")
    public var shutdownGrace: Double = 10
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
        name: .customLong("commit-destination"),
        help: ArgumentHelp(
            "Where a storage commitment report goes when the requester did not take it on its association: AE=host:port (repeatable; native); the config file's [nodes.*] are destinations too.",
            valueName: "AE=host:port"))
    public var commitDestinations: [String] = []

    public init() {}

    public func validate() throws {
        if maxAssociations < 1 { throw ValidationError("--max-associations must be at least 1") }
        if !(acse > 0) { throw ValidationError("--acse-timeout must be positive") }
        if !(dimse > 0) { throw ValidationError("--dimse-timeout must be positive") }
        if shutdownGrace < 0 { throw ValidationError("--shutdown-grace must not be negative") }
        do { _ = try self.limits() } catch { throw ValidationError(error.message) }
        for text in commitDestinations {
            do { _ = try Self.commitDestination(text) } catch { throw ValidationError(error.message) }
        }
    }

    /// The ACSE and DIMSE timeouts (the connect timeout is the server's own C-MOVE sub-associations').
    public var timeouts: Timeouts { Timeouts(connect: 10, acse: acse, dimse: dimse, deadline: nil) }

    /// The defences against hostile peers these options describe.
    /// - Throws: ``PXError/usage(_:)`` for a value out of range.
    /// The accounts of `--require-user`, read now; `nil` without it.
    /// - Throws: ``PXError/usage(_:)`` for an unreadable or malformed file.
    public func userAccounts() throws(PXError) -> UserAccounts? {
        try requireUser.map { (path: String) throws(PXError) in try UserAccounts.load(path) }
    }

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
}
