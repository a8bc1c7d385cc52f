import ArgumentParser
import DICOMWeb
import PX
import PXCore
import PXPlaces

/// The peer and AE titles, in px's modern form and in pypx 0.8 / 3.x spellings.
public struct ConnectionOptions: ParsableArguments {
    @Argument(
        help:
            "The peer: host:port, AE@host:port, host:AE:port, a DICOMweb URL (http(s)://host/dicom-web), or a [nodes.NAME] from the config file."
    )
    public var peer: String?

    @Option(name: .customLong("aec"), help: "Called AE title (default: from the peer or config, else ANY-SCP).")
    public var calledAETitle: String?

    @Option(name: .customLong("aet"), help: "Calling AE title (default: [local] ae_title from the config, else PXSCU).")
    public var callingAETitle: String?

    @Option(name: .customLong("serverIP"), help: "pypx: the peer's host.")
    public var serverIP: String?

    @Option(name: .customLong("serverPort"), help: "pypx: the peer's port.")
    public var serverPort: Int?

    @Option(
        name: .customLong("executable"),
        help: "pypx 0.8: path of the DCMTK tool to run (auto: ignored when it is not an executable file).")
    public var executable: String?

    /// DICOM TLS: part of the connection, so every command that connects has it (issue 15).
    @OptionGroup(title: "TLS") public var tls: TLSOptions

    /// User Identity Negotiation (PS3.7 §D.3.3.7): part of the association request, so every command that
    /// connects has it (issue 35).
    @OptionGroup(title: "User identity") public var identity: UserIdentityOptions

    @Option(name: .customLong("echoscu"), help: .hidden) public var echoscuPath: String?
    @Option(name: .customLong("findscu"), help: .hidden) public var findscuPath: String?
    @Option(name: .customLong("movescu"), help: .hidden) public var movescuPath: String?

    public init() {}

    public func validate() throws {
        // A dcm-style Keyword=value standing first (or after --serverIP): px-find moves it to the query and
        // validates again; any other command refuses it in connection(timeouts:).
        if let peer, QueryKey.isAssignment(peer) { return }
        if peer != nil && (serverIP != nil || serverPort != nil) {
            throw ValidationError("give the peer either as an argument or with --serverIP/--serverPort, not both")
        }
        if serverIP != nil && serverPort == nil { throw ValidationError("--serverIP needs --serverPort") }
        if let port = serverPort, !(1...65535).contains(port) {
            throw ValidationError("--serverPort \(port) is out of range 1-65535")
        }
        if let peer {
            do { _ = try PeerSpec.parse(peer) } catch { throw ValidationError(error.message) }
        }
        if let serverIP {
            do { _ = try HostName.parse(serverIP, role: "--serverIP") } catch { throw ValidationError(error.message) }
        }
        for (name, title) in [("--aec", calledAETitle), ("--aet", callingAETitle)] {
            if let title {
                do { try AETitle.validate(title, role: name) } catch { throw ValidationError(error.message) }
            }
        }
    }

    /// Fails when no peer is given: every command that connects calls it from its `validate()` (px-echo not with
    /// `--all-nodes`, which names its peers from the config).
    public func requirePeer() throws {
        if peer == nil && serverIP == nil {
            throw ValidationError(
                "give the peer (host:port, AE@host:port, host:AE:port or a config node), or --serverIP and --serverPort"
            )
        }
    }

    /// The DIMSE connection these options describe, reading the config file when needed: the node, the calling
    /// AE title, `timeouts`, TLS and the user identity.
    /// - Throws: ``PXError/usage(_:)``, also for a DICOMweb peer (a URL, or a `[nodes.NAME]` with `url`), which is
    ///   no DIMSE node: its service is ``backend(_:for:timeouts:)``'s.
    public func connection(timeouts: Timeouts) throws(PXError) -> Connection {
        switch try address(timeouts: timeouts) {
        case .node(let connection): return connection
        case .web(let place, _): throw .usage("\(place.baseURL) is a DICOMweb service, not a DIMSE node")
        }
    }

    /// Where pypx's findscu command line (px-find's `command`) says the query goes: the node, or a DICOMweb
    /// service's host and port with findscu's default called AE title (``FindscuAddress``).
    /// - Throws: ``PXError/usage(_:)``.
    public func findscuAddress(timeouts: Timeouts) throws(PXError) -> FindscuAddress {
        switch try address(timeouts: timeouts) {
        case .node(let connection): return FindscuAddress(connection)
        case .web(let place, let local):
            return FindscuAddress(host: place.host, port: place.port, callingAETitle: local.aeTitle)
        }
    }

    /// What the peer is: a DIMSE node's connection, or a DICOMweb service and the calling AE title.
    private enum Address {
        case node(Connection)
        case web(DICOMWebPlace, local: LocalAE)
    }

    private func address(timeouts: Timeouts) throws(PXError) -> Address {
        let config = try PX.config()
        func local() throws(PXError) -> LocalAE {
            try LocalAE(aeTitle: callingAETitle ?? config.localAETitle ?? LocalAE.defaultTitle)
        }
        var host: String
        var port: Int
        var called: String?
        var configNode: PXConfig.Node?
        if let peer {
            if QueryKey.isAssignment(peer) { throw .usage("'\(peer)' is a query key (Keyword=value), not a peer") }
            switch try PeerSpec.parse(peer) {
            case .address(let h, let p, let ae):
                (host, port, called) = (h, p, ae)
            case .node(let name):
                guard let node = config.nodes[name] else {
                    throw .usage(
                        "'\(name)' is not host:port and not a node in \(PXConfig.defaultPath ?? "the config file")")
                }
                if let url = node.url { return .web(try DICOMWebPlace(url: url), local: try local()) }
                (host, port, called, configNode) = (node.host, node.port, node.aeTitle, node)
            case .url(let url):
                return .web(try DICOMWebPlace(url: url), local: try local())
            }
        } else {
            guard let serverIP, let serverPort else { throw .usage("no peer given") }
            (host, port) = (try HostName.parse(serverIP, role: "--serverIP"), serverPort)
        }
        let node = try DICOMNode(host: host, port: port, calledAETitle: calledAETitle ?? called ?? "ANY-SCP")
        var connection = Connection(node: node, local: try local(), timeouts: timeouts)
        connection.tls = try tls.settings(node: configNode)
        connection.userIdentity = try identity.userIdentity(node: configNode)
        return .node(connection)
    }

    /// Whether the association request presents a user identity: one of the identity options, or a config
    /// node with `user` (for the backend choice: DCMTK's tools other than storescu cannot present one).
    /// - Throws: ``PXError/usage(_:)`` for an unreadable config file.
    public func presentsUserIdentity() throws(PXError) -> Bool {
        if identity.isGiven { return true }
        guard let peer, !QueryKey.isAssignment(peer), case .node(let name) = try PeerSpec.parse(peer) else {
            return false
        }
        return try PX.config().nodes[name]?.user != nil
    }

    /// Explicit tool paths for the DCMTK backend: `--executable` for the tool of `operation`, and pypx 3.x's
    /// `--echoscu`, `--findscu`, `--movescu`.
    public func executables(for operation: BackendOperation) -> [String: String] {
        var out: [String: String] = [:]
        if let echoscuPath { out[BackendOperation.echo.dcmtkTool] = echoscuPath }
        if let findscuPath { out[BackendOperation.find.dcmtkTool] = findscuPath }
        if let movescuPath { out[BackendOperation.move.dcmtkTool] = movescuPath }
        if let executable { out[operation.dcmtkTool] = executable }
        return out
    }
}
