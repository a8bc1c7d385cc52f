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

    /// The backend for a command, chosen in this one place: a DICOMweb peer selects the DICOMweb
    /// backend (QIDO-RS, WADO-RS, STOW-RS), any other peer the `--backend` choice.
    /// - Throws: ``PXError/usage(_:)`` for `--backend dcmtk|native` with a DICOMweb peer, and what
    ///   ``BackendOptions/make(executables:tool:)`` throws.
    public func backend(_ options: BackendOptions, tool: String) throws(PXError) -> any DICOMBackend {
        if let web = try dicomWebBackend() {
            guard options.backend == .auto else {
                throw .usage("--backend \(options.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return web
        }
        return try options.make(executables: executables(for: tool), tool: tool)
    }
}
