import DICOMWeb
import Logging
import PXCore
import PXIndex
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

/// What a command needs to turn the places it is given into endpoints, read once per command (like SwiftPM's
/// `SwiftCommandState`): the config file, the calling AE title, the timeouts, the DIMSE backend and the logger.
/// Each place's text is parsed (``Place/parse(_:config:)``) and resolved (``resolve(_:asDestination:layout:)``)
/// here and nowhere else.
public struct PlaceContext: Sendable {
    public let config: PXConfig
    public let calling: LocalAE
    public let timeouts: Timeouts
    /// The backend DIMSE nodes are spoken to with.
    public let backend: any DICOMBackend
    public let logger: Logger

    public init(config: PXConfig, calling: LocalAE, timeouts: Timeouts, backend: any DICOMBackend, logger: Logger) {
        self.config = config
        self.calling = calling
        self.timeouts = timeouts
        self.backend = backend
        self.logger = logger
    }

    /// Parses and resolves a place as the command line names it.
    /// - Parameters:
    ///   - asDestination: a missing folder or zip folder is made.
    ///   - layout: `--layout` for a folder destination.
    ///   - dryRun: a destination only planned against: nothing is made or written in it (a folder's index is
    ///     its own when it has one, else a temporary one; a missing folder holds nothing).
    public func resolve(_ text: String, asDestination: Bool, layout: String? = nil, dryRun: Bool = false)
        async throws(PXError) -> Endpoint
    {
        var place = try Place.parse(text, config: config)
        if asDestination { place = try place.withLayout(layout) }
        return try await resolve(place, asDestination: asDestination, dryRun: dryRun)
    }

    /// Resolves a parsed place: a node's connection, a DICOMweb service's credentials, a folder's index
    /// refreshed.
    public func resolve(_ place: Place, asDestination: Bool, dryRun: Bool = false) async throws(PXError) -> Endpoint {
        switch place {
        case .node(let peer):
            var tls: TLSSettings?
            var identity: UserIdentity?
            let node: DICOMNode
            switch peer {
            case .address(let host, let port, let ae):
                node = try DICOMNode(host: host, port: port, calledAETitle: ae ?? "ANY-SCP")
            case .node(let name):
                guard let entry = config.nodes[name] else { throw .usage("no [nodes.\(name)] in the config file") }
                if entry.url != nil { return try web(entry: entry) }
                node = try DICOMNode(host: entry.host, port: entry.port, calledAETitle: entry.aeTitle)
                tls = entry.tls
                identity = try entry.userIdentity()
            case .url(let url):
                return try await resolve(.web(url: url), asDestination: asDestination)
            }
            var connection = Connection(node: node, local: calling, timeouts: timeouts)
            connection.tls = tls
            connection.userIdentity = identity
            return .node(NodePlace(backend: backend, connection: connection, logger: logger))
        case .folder(let path, let template):
            let layout: StorageLayout
            do {
                layout =
                    try template.map { (t: String) throws(StorageError) in try StorageLayout(template: t) }
                    ?? StorageLayout()
            } catch { throw .usage("layout: \(error)") }
            if asDestination && dryRun {
                let own = FolderPlace.inPlaceIndexPath(root: path)
                let index: FolderPlace.IndexLocation = access(own, W_OK) == 0 ? .readOnly : .temporary
                return try await Endpoint.folder(at: path, layout: layout, index: index, logger: logger)
            }
            return try await Endpoint.folder(at: path, layout: layout, create: asDestination, logger: logger)
        case .zip(let path):
            return try Endpoint.zip(at: path, create: asDestination && !dryRun)
        case .web(let url):
            let service = try Self.webService(url: url, config: config)
            return .web(
                WebPlace(
                    place: service.place, transferSyntax: service.transferSyntax, timeouts: timeouts, logger: logger))
        }
    }

    /// A `[nodes.NAME]` with a `url`: its credentials read now, its WADO-RS transfer syntax.
    func web(entry: PXConfig.Node) throws(PXError) -> Endpoint {
        let service = try Self.webService(entry: entry)
        return .web(
            WebPlace(place: service.place, transferSyntax: service.transferSyntax, timeouts: timeouts, logger: logger))
    }

    /// The DICOMweb service (PS3.18) at `url`, for every command: a `[nodes.NAME]` with this url brings its
    /// credentials and transfer syntax; a URL alone takes them from `$PX_DICOMWEB_TOKEN` /
    /// `$PX_DICOMWEB_BASIC` and retrieves in the stored transfer syntax.
    /// - Throws: ``PXError/usage(_:)`` for a bad URL or unreadable credentials.
    public static func webService(url: String, config: PXConfig) throws(PXError) -> (
        place: DICOMWebPlace, transferSyntax: String?
    ) {
        if let entry = config.nodes.values.first(where: { $0.url == url }) { return try webService(entry: entry) }
        return (try DICOMWebPlace(url: url, authentication: DICOMWebPlace.authenticationFromEnvironment()), nil)
    }

    /// The DICOMweb service of a `[nodes.NAME]` with a `url`: its `auth` and credentials read now, its
    /// `transfer_syntax`.
    /// - Throws: ``PXError/usage(_:)`` for a node without `url`, a bad URL or unreadable credentials.
    public static func webService(entry: PXConfig.Node) throws(PXError) -> (
        place: DICOMWebPlace, transferSyntax: String?
    ) {
        guard let service = try entry.dicomWebPlace() else { throw .usage("the node has no url") }
        return (service, entry.transferSyntax)
    }
}
