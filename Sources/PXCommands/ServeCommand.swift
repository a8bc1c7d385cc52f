import ArgumentParser
import DICOMData
import DICOMNetwork
import Logging
import NIOCore
import NativeBackend
import PX
import PXCommandLine
import PXCore
import PXIndex
import PXPlaces
import PXStorage
import ServiceLifecycle
import UnixSignals

/// px-serve's options: the place, where to listen, the C-MOVE destinations, the layout of stored files, TLS.
public struct ServeOptions: ParsableArguments {
    @Argument(help: "The folder place to serve (made and indexed in PLACE/.px/ on first use).")
    public var place: String
    @Option(
        name: [.customShort("p"), .long], help: "TCP port to listen on (0: any free port, see the listening event).")
    public var port: Int = 11112
    @Option(name: .customLong("aet"), help: "The AE title to answer to.") public var aeTitle: String = "PXSERVE"
    @Option(
        name: .customLong("move-destination"),
        help: ArgumentHelp(
            "A C-MOVE destination AE=host:port (repeatable); the config file's [nodes.*] are destinations too.",
            valueName: "AE=host:port"))
    public var moveDestinations: [String] = []
    @Option(
        name: .customLong("layout"),
        help:
            "Path template under the place for stored files, {Keyword} fields, e.g. {PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm."
    )
    public var layout: String?
    @OptionGroup(title: "TLS") public var tls: ListenTLSOptions
    /// Associations, timeouts and the defences against hostile peers: px-listen's (``ServerOptions``).
    @OptionGroup public var server: ServerOptions

    public init() {}

    public func validate() throws {
        if !(0...65535).contains(port) { throw ValidationError("--port \(port) is out of range 0-65535") }
        do { try AETitle.validate(aeTitle, role: "--aet") } catch { throw ValidationError(error.message) }
        if let layout { do { _ = try StorageLayout(template: layout) } catch { throw ValidationError(error.message) } }
        for text in moveDestinations {
            do { _ = try Self.destination(text) } catch { throw ValidationError(error.message) }
        }
    }

    /// `AE=host:port` as a peer.
    /// - Throws: ``PXError/usage(_:)`` for another form.
    static func destination(_ text: String) throws(PXError) -> (String, DICOMPeer) {
        let parts = text.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, case .address(let host, let port, nil) = try PeerSpec.parse(String(parts[1])) else {
            throw .usage("--move-destination '\(text)': expected AE=host:port")
        }
        let ae = String(parts[0])
        try AETitle.validate(ae, role: "--move-destination")
        return (ae, DICOMPeer(host: host, port: port, aeTitle: ae))
    }

    /// The C-MOVE destinations: the config file's nodes, then `--move-destination` (which wins).
    func destinations(config: PXConfig) throws(PXError) -> [String: DICOMPeer] {
        var table: [String: DICOMPeer] = [:]
        for node in config.nodes.values where node.url == nil {
            table[node.aeTitle] = DICOMPeer(host: node.host, port: node.port, aeTitle: node.aeTitle)
        }
        for text in moveDestinations {
            let (ae, peer) = try Self.destination(text)
            table[ae] = peer
        }
        return table
    }

    /// The receiving side of the server (the place's root made absolute).
    func configuration(layout: StorageLayout) throws(PXError) -> ListenConfiguration {
        var configuration = try ListenConfiguration(
            port: port, aeTitle: aeTitle, root: absolutePath(place), layout: layout, timeouts: server.timeouts,
            duplicates: .keep, maximumAssociations: server.maxAssociations, shutdownGrace: server.shutdownGrace)
        configuration.limits = try server.limits()
        configuration.userAccounts = try server.userAccounts()
        configuration.commitmentDestinations = try server.commitmentDestinations()
        return try tls.applied(to: configuration)
    }

    func storageLayout() throws(PXError) -> StorageLayout {
        guard let layout else { return StorageLayout() }
        do throws(StorageError) { return try StorageLayout(template: layout) } catch { throw .storage(error) }
    }
}

/// px-serve: a folder place served over DIMSE (C-ECHO, C-FIND at every level of both models, C-MOVE, C-GET from
/// the place's index; C-STORE into the place through px-listen's placement, each file recorded in the index so
/// the next query sees it). One NDJSON event per line on stdout (px-listen's, and `indexed` once at start).
public enum ServeCommand {
    public static func run(serve: ServeOptions, logging: LoggingOptions) async throws {
        let logger = logging.makeLogger(label: "px-serve")
        let output = CommandOutput(pretty: false)
        var failure: PXError?
        do {
            let layout = try serve.storageLayout()
            let place = try FolderPlace(root: absolutePath(serve.place), layout: layout, logger: logger)
            let report = try await place.refresh()
            output.write(JSONValueEncoder.encode(IndexedEvent(root: place.root, report: report)), pretty: false)
            let configuration = try serve.configuration(layout: layout)
            let provider = FolderPlaceProvider(
                place: place, moveDestinations: try serve.destinations(config: try PX.config()))
            var queryRetrieve = QueryRetrieveSCPConfiguration(provider: provider)
            queryRetrieve.acseTimeout = .milliseconds(Int64(serve.server.acse * 1000))
            queryRetrieve.dimseTimeout = .milliseconds(Int64(serve.server.dimse * 1000))
            let service = ServeService(
                configuration: configuration, queryRetrieve: queryRetrieve, place: place, logger: logger
            ) { event in
                output.write(PXOutput.json(event), pretty: false)
            }
            let group = ServiceGroup(
                configuration: ServiceGroupConfiguration(
                    services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } catch is CancellationError {
            failure = nil
        } catch {
            failure = error.asPXError
        }
        let status = output.finish(backend: "native", data: nil, error: failure)
        if status != PXExit.success { throw ExitCode(status) }
    }
}

/// px-serve's server as a `Service`: SIGTERM/SIGINT stop accepting, let associations finish, then end.
struct ServeService: Service {
    let configuration: ListenConfiguration
    let queryRetrieve: QueryRetrieveSCPConfiguration
    let place: FolderPlace
    let logger: Logger
    let onEvent: @Sendable (ListenEvent) -> Void

    func run() async throws {
        let place = self.place
        let logger = self.logger
        do {
            try await cancelWhenGracefulShutdown {
                try await NativeBackend().serve(
                    configuration, queryRetrieve: queryRetrieve,
                    onPlaced: { path, header in
                        do {
                            try await place.record([FolderPlace.PlacedFile(path: path, header: header)])
                        } catch {
                            // The file is placed; the next refresh() indexes it.
                            logger.warning(
                                "placed file not recorded in the index",
                                metadata: ["file": "\(path)", "error": "\(error)"])
                        }
                    }, logger: logger, onEvent: { event in onEvent(event) })
            }
        } catch is CancellationError {
            // The graceful shutdown we asked for: a normal end.
        }
    }
}

/// px-serve's first event, once the place's index is up to date: `{"event": "indexed", "root", "added",
/// "updated", "removed", "unreadable", "instances"}`.
struct IndexedEvent: Encodable {
    let event = "indexed"
    var root: String
    var added: Int
    var updated: Int
    var removed: Int
    var unreadable: Int
    var instances: Int

    init(root: String, report: FolderPlace.RefreshReport) {
        self.root = root
        added = report.added
        updated = report.updated
        removed = report.removed
        unreadable = report.unreadable
        instances = report.instances
    }
}
