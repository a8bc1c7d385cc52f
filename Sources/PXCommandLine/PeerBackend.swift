import DICOMWeb
import PX
import PXCore

extension ConnectionOptions {
    /// The DICOMweb place the peer names (a URL, or a config node with `url`), `nil` for a DIMSE peer.
    ///
    /// A URL on the command line takes its credentials from `$PX_DICOMWEB_TOKEN` (bearer) or
    /// `$PX_DICOMWEB_BASIC` (`user:password`); a node from its `auth` and `credentials_env` /
    /// `credentials_file`.
    /// - Throws: ``PXError/usage(_:)``.
    public func dicomWebPlace() throws(PXError) -> DICOMWebPlace? {
        guard let peer else { return nil }
        switch try PeerSpec.parse(peer) {
        case .url(let url):
            return try DICOMWebPlace(url: url, authentication: DICOMWebPlace.authenticationFromEnvironment())
        case .node(let name):
            return try PXConfig.load().nodes[name]?.dicomWebPlace()
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
        if let place = try dicomWebPlace() {
            guard backend.backend == .auto else {
                throw .usage("--backend \(backend.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return (DICOMWebBackend(place: place), try connection(timeouts: timeouts))
        }
        return (try backend.make(executables: executables(for: tool), tool: tool), try connection(timeouts: timeouts))
    }
}
