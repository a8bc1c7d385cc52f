import ArgumentParser
import PX
import PXCore
import PXPlaces

/// px-push's storage commitment options (PS3.4 Annex J, Push Model SCU).
public struct CommitOptions: ParsableArguments {
    @Flag(
        name: .customLong("commit"),
        help: "After storing, ask the peer to commit what it stored (storage commitment, native backend).")
    public var commit = false

    @Option(
        name: .customLong("commit-timeout"),
        help: ArgumentHelp("How long to wait for the peer's commitment report (s).", valueName: "s"))
    public var timeout: Double = CommitmentSettings.defaultTimeout

    @Option(
        name: .customLong("commit-port"),
        help: ArgumentHelp(
            "Port px listens on for a report the peer sends on a new association (default: the config's local port).",
            valueName: "port"))
    public var port: Int?

    public init() {}

    public func validate() throws {
        if !commit && (port != nil || timeout != CommitmentSettings.defaultTimeout) {
            throw ValidationError("--commit-port and --commit-timeout need --commit")
        }
        if timeout <= 0 { throw ValidationError("--commit-timeout must be positive") }
        if let port, !(1...65535).contains(port) { throw ValidationError("--commit-port must be 1 to 65535") }
    }

    /// The settings, `nil` without `--commit`; the listening port falls back to the config's local port.
    public func settings() throws(PXError) -> CommitmentSettings? {
        guard commit else { return nil }
        var listenPort = port
        if listenPort == nil { listenPort = try PX.config().localPort }
        return CommitmentSettings(timeout: timeout, listenPort: listenPort)
    }
}

extension ServerOptions {
    /// `AE=host:port` as a node whose called AE title is AE.
    /// - Throws: ``PXError/usage(_:)`` for another form.
    static func commitDestination(_ text: String) throws(PXError) -> DICOMNode {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, case .address(let host, let port, nil) = try PeerSpec.parse(String(parts[1])) else {
            throw .usage("--commit-destination '\(text)': expected AE=host:port")
        }
        let ae = String(parts[0])
        try AETitle.validate(ae, role: "--commit-destination")
        return try DICOMNode(host: host, port: port, calledAETitle: ae)
    }

    /// Where storage commitment reports go by requester AE title, as px-serve names C-MOVE destinations: the
    /// config file's DIMSE nodes, then `--commit-destination` (which wins).
    public func commitmentDestinations() throws(PXError) -> [String: DICOMNode] {
        var table: [String: DICOMNode] = [:]
        for node in try PX.config().nodes.values where node.url == nil {
            table[node.aeTitle] = try DICOMNode(host: node.host, port: node.port, calledAETitle: node.aeTitle)
        }
        for text in commitDestinations {
            let node = try Self.commitDestination(text)
            table[node.calledAETitle] = node
        }
        return table
    }
}
