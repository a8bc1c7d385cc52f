import DICOMWeb
import PX
import PXCore

extension ConnectionOptions {
    /// The DICOMweb backend for the peer (a URL, or a config node with `url`), `nil` for a DIMSE peer.
    ///
    /// A URL on the command line takes its credentials from `$PX_DICOMWEB_TOKEN` (bearer) or
    /// `$PX_DICOMWEB_BASIC` (`user:password`) and retrieves in the stored transfer syntax; a node
    /// from its `auth` and `credentials_env` / `credentials_file`, and its `transfer_syntax`.
    /// - Throws: ``PXError/usage(_:)``.
    public func dicomWebBackend() throws(PXError) -> DICOMWebBackend? {
        guard let peer else { return nil }
        switch try PeerSpec.parse(peer) {
        case .url(let url):
            return DICOMWebBackend(
                place: try DICOMWebPlace(url: url, authentication: DICOMWebPlace.authenticationFromEnvironment()))
        case .node(let name):
            guard let node = try PXConfig.load().nodes[name], let place = try node.dicomWebPlace() else { return nil }
            return DICOMWebBackend(place: place, transferSyntax: node.transferSyntax)
        case .address:
            return nil
        }
    }

    /// The backend and connection for a command, chosen in this one place: a DICOMweb peer selects
    /// the DICOMweb backend (QIDO-RS, WADO-RS, STOW-RS), any other peer the `--backend` choice.
    /// - Throws: ``PXError/usage(_:)`` for `--backend dcmtk|native` with a DICOMweb peer, and what
    ///   ``BackendOptions/make(executables:tool:)`` and ``connection(timeouts:)`` throw.
    public func backendAndConnection(
        _ backend: BackendOptions, tool: String, timeouts: Timeouts
    ) throws(PXError) -> (backend: any DICOMBackend, connection: Connection) {
        if let web = try dicomWebBackend() {
            guard backend.backend == .auto else {
                throw .usage("--backend \(backend.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return (web, try connection(timeouts: timeouts))
        }
        return (try backend.make(executables: executables(for: tool), tool: tool), try connection(timeouts: timeouts))
    }
}
