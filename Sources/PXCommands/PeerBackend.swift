import DICOMWeb
import PX
import PXCommandLine
import PXCore
import PXPlaces

/// The backend a command's peer resolves to: a DIMSE backend (the `--backend` choice, every capability once
/// bound to the node's connection) or a DICOMweb service (PS3.18: only what its transactions give).
public enum ResolvedBackend: Sendable {
    case dimse(any DICOMBackend)
    case web(DICOMWebService)

    /// What the envelope's `backend` reports: `dcmtk`, `native` or `dicomweb`.
    public var name: String {
        switch self {
        case .dimse(let backend): return backend.name
        case .web(let service): return service.name
        }
    }
}

/// What a command asks its peer for: the operation (which backend `--backend` picks for a DIMSE peer,
/// ``BackendOperation``) and the capability the command uses, a peer-bound value (``Verifying``, ``Querying``...)
/// it calls without knowing the protocol. A DIMSE node gives every capability (its backend bound to the
/// connection, ``DIMSEPeer``); a DICOMweb service gives those its type conforms to (``DICOMWebService``): for the
/// others a need can only say ``OnWeb/refused(_:)`` (a DICOMweb service is not a ``Moving`` one, so `given`
/// would not compile), and the command refuses the peer with a usage error saying why.
public struct PeerNeed<Capability>: Sendable {
    /// What a DIMSE peer gives for the need.
    public enum OnDIMSE: Sendable {
        /// The capability of the backend bound to the node (``DIMSEPeer``).
        case peer(@Sendable (DIMSEPeer) -> Capability)
        /// The backend itself, for a need without one node (a receiver, px-sync's places).
        case backend(@Sendable (any DICOMBackend) -> Capability)
    }

    /// What a DICOMweb peer gives for the need.
    public enum OnWeb: Sendable {
        /// The capability, from the DICOMweb service.
        case given(@Sendable (DICOMWebService) -> Capability)
        /// None: why (the usage error's message).
        case refused(String)
    }

    public let operation: BackendOperation
    let dimse: OnDIMSE
    let web: OnWeb

    /// The capability `backend` gives; `connection` is the node's, asked for only when the need binds the
    /// DIMSE backend to a node.
    /// - Throws: ``PXError/usage(_:)`` when the peer is a DICOMweb service without it, or when the need binds a
    ///   node and there is none; what `connection` throws.
    public func capability(
        of backend: ResolvedBackend, connection: () throws(PXError) -> Connection = Self.noNode
    ) throws(PXError) -> Capability {
        switch backend {
        case .dimse(let dimse):
            switch self.dimse {
            case .peer(let capability): return capability(DIMSEPeer(backend: dimse, connection: try connection()))
            case .backend(let capability): return capability(dimse)
            }
        case .web(let service):
            switch web {
            case .given(let capability): return capability(service)
            case .refused(let reason): throw .usage(reason)
            }
        }
    }

    /// The connection of a command that names no node.
    /// - Throws: ``PXError/usage(_:)``, always.
    public static func noNode() throws(PXError) -> Connection {
        throw .usage("the command names no peer to connect to")
    }
}

extension PeerNeed where Capability == any Verifying {
    /// px-echo: C-ECHO, or a QIDO-RS search of a DICOMweb service.
    public static var verify: Self { Self(operation: .echo, dimse: .peer { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Querying {
    /// px-find: C-FIND or QIDO-RS.
    public static var query: Self { Self(operation: .find, dimse: .peer { $0 }, web: .given { $0 }) }

    /// px-find `--queries`: C-FIND or QIDO-RS, many in a row (`auto` is native: ``BackendOperation/findCohort``).
    public static var cohort: Self { Self(operation: .findCohort, dimse: .peer { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Querying & Retrieving {
    /// px-get: C-GET or WADO-RS, and the queries that resolve what to retrieve.
    public static var retrieve: Self { Self(operation: .get, dimse: .peer { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Storing {
    /// px-push: C-STORE or STOW-RS.
    public static var store: Self { Self(operation: .push, dimse: .peer { $0 }, web: .given { $0 }) }
}

extension PeerNeed where Capability == any Receiving {
    /// px-listen: a C-STORE SCP (it has no peer).
    public static var receive: Self {
        Self(
            operation: .listen, dimse: .backend { $0 },
            web: .refused("px-listen is not supported for a DICOMweb peer: it receives DIMSE C-STORE only"))
    }
}

extension PeerNeed where Capability == DIMSEPeer {
    /// px-move: C-MOVEs in a retrieve session on the node (DIMSE only: DICOMweb has no C-MOVE, PS3.18).
    public static var move: Self {
        Self(
            operation: .move, dimse: .peer { $0 },
            web: .refused("C-MOVE is not supported for a DICOMweb peer: use px-get, which retrieves with WADO-RS"))
    }
}

extension PeerNeed where Capability == any DICOMBackend {
    /// px-sync's DIMSE nodes, spoken to with C-FIND, C-GET (`auto` keeps it native, ``BackendOperation/get``),
    /// C-MOVE and C-STORE; its DICOMweb places have their own service.
    public static var nodes: Self {
        Self(
            operation: .get, dimse: .backend { $0 },
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

    /// The backend for a command, chosen in this one place: a DICOMweb peer is its service (QIDO-RS, WADO-RS,
    /// STOW-RS under `timeouts`), any other peer the `--backend` choice for `operation` (with `auto`, the
    /// native backend when a user identity is presented and the operation's DCMTK tool cannot present one).
    /// - Throws: ``PXError/usage(_:)`` for `--backend dcmtk|native` with a DICOMweb peer, and what
    ///   ``BackendOptions/make(executables:for:)`` throws.
    public func backend(
        _ options: BackendOptions, for operation: BackendOperation, timeouts: Timeouts = .standard
    ) throws(PXError) -> ResolvedBackend {
        if let web = try webService(config: PX.config()) {
            guard options.backend == .auto else {
                throw .usage("--backend \(options.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return .web(DICOMWebService(place: web.place, transferSyntax: web.transferSyntax, timeouts: timeouts))
        }
        return .dimse(
            try options.make(
                executables: executables(for: operation), for: operation, userIdentity: try presentsUserIdentity()))
    }
}
