import DICOMWeb
import PX
import PXCore
import PXPlaces

/// The backend a command's peer resolves to: a DIMSE backend (the `--backend` choice, every capability) or a
/// DICOMweb service's (PS3.18: only what its transactions give).
public enum ResolvedBackend: Sendable {
    case dimse(any DICOMBackend)
    case web(DICOMWebBackend)

    /// What the envelope's `backend` reports: `dcmtk`, `native` or `dicomweb`.
    public var name: String {
        switch self {
        case .dimse(let backend): return backend.name
        case .web(let backend): return backend.name
        }
    }
}

/// What a command asks its peer's backend for: the operation (which backend `--backend` picks for a DIMSE peer,
/// ``BackendOperation``) and the capability the command uses. A DIMSE backend has every capability; a DICOMweb
/// service has only those its type conforms to (``DICOMWebBackend``): for the others a need can only say
/// ``OnWeb/refused(_:)`` (a DICOMweb backend is not a ``Moving`` one, so `given` would not compile), and the
/// command refuses the peer with a usage error saying why.
public struct PeerNeed<Capability>: Sendable {
    /// What a DICOMweb peer gives for the need.
    public enum OnWeb: Sendable {
        /// The capability, from the DICOMweb backend.
        case given(@Sendable (DICOMWebBackend) -> Capability)
        /// None: why (the usage error's message).
        case refused(String)
    }

    public let operation: BackendOperation
    let dimse: @Sendable (any DICOMBackend) -> Capability
    let web: OnWeb

    /// The capability `backend` gives.
    /// - Throws: ``PXError/usage(_:)`` when the peer is a DICOMweb service without it.
    public func capability(of backend: ResolvedBackend) throws(PXError) -> Capability {
        switch backend {
        case .dimse(let dimse): return self.dimse(dimse)
        case .web(let service):
            switch web {
            case .given(let capability): return capability(service)
            case .refused(let reason): throw .usage(reason)
            }
        }
    }
}

extension PeerNeed where Capability == any Verifying {
    /// px-echo: C-ECHO, or a QIDO-RS search of a DICOMweb service.
    public static var verify: Self { Self(operation: .echo, dimse: { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Querying {
    /// px-find: C-FIND or QIDO-RS.
    public static var query: Self { Self(operation: .find, dimse: { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Querying & Retrieving {
    /// px-get: C-GET or WADO-RS, and the queries that resolve what to retrieve.
    public static var retrieve: Self { Self(operation: .get, dimse: { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Storing {
    /// px-push: C-STORE or STOW-RS.
    public static var store: Self { Self(operation: .push, dimse: { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Receiving {
    /// px-listen: a C-STORE SCP (it has no peer).
    public static var receive: Self {
        Self(
            operation: .listen, dimse: { $0 },
            web: .refused("px-listen is not supported for a DICOMweb peer: it receives DIMSE C-STORE only"))
    }
}

extension PeerNeed where Capability == any DICOMBackend {
    /// px-move: C-MOVEs in a retrieve session (DIMSE only: DICOMweb has no C-MOVE, PS3.18).
    public static var move: Self {
        Self(
            operation: .move, dimse: { $0 },
            web: .refused("C-MOVE is not supported for a DICOMweb peer: use px-get, which retrieves with WADO-RS"))
    }

    /// px-sync's DIMSE nodes, spoken to with C-FIND, C-GET (`auto` keeps it native, ``BackendOperation/get``),
    /// C-MOVE and C-STORE; its DICOMweb places have their own backend.
    public static var nodes: Self {
        Self(
            operation: .get, dimse: { $0 },
            web: .refused("a DICOMweb service is a place of its own, not a DIMSE node"))
    }
}

extension ConnectionOptions {
    /// The DICOMweb service the peer names (PS3.18): a URL, or a `[nodes.NAME]` with `url`, resolved as
    /// px-sync's places are (``PlaceContext/webService(url:config:)``: credentials from the node's `auth`
    /// and `credentials_env` / `credentials_file`, else `$PX_DICOMWEB_TOKEN` / `$PX_DICOMWEB_BASIC`, and
    /// the node's `transfer_syntax`); `nil` for a DIMSE peer.
    /// - Throws: ``PXError/usage(_:)``.
    public func webService(config: PXConfig) throws(PXError) -> (place: DICOMWebPlace, transferSyntax: String?)? {
        guard let peer, !QueryKey.isAssignment(peer) else { return nil }
        switch try PeerSpec.parse(peer) {
        case .url(let url):
            return try PlaceContext.webService(url: url, config: config)
        case .node(let name):
            guard let entry = config.nodes[name], entry.url != nil else { return nil }
            return try PlaceContext.webService(entry: entry)
        case .address:
            return nil
        }
    }

    /// The backend for a command, chosen in this one place: a DICOMweb peer selects the DICOMweb
    /// backend (QIDO-RS, WADO-RS, STOW-RS), any other peer the `--backend` choice for `operation` (with `auto`, the
    /// native backend when a user identity is presented and the operation's DCMTK tool cannot present one).
    /// - Throws: ``PXError/usage(_:)`` for `--backend dcmtk|native` with a DICOMweb peer, and what
    ///   ``BackendOptions/make(executables:for:)`` throws.
    public func backend(_ options: BackendOptions, for operation: BackendOperation) throws(PXError) -> ResolvedBackend {
        if let web = try webService(config: CommandConfig.value()) {
            guard options.backend == .auto else {
                throw .usage("--backend \(options.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return .web(DICOMWebBackend(place: web.place, transferSyntax: web.transferSyntax))
        }
        return .dimse(
            try options.make(
                executables: executables(for: operation), for: operation, userIdentity: try presentsUserIdentity()))
    }
}
