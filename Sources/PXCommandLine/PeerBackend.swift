import DICOMWeb
import PX
import PXCore

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
    /// backend (QIDO-RS, WADO-RS, STOW-RS), any other peer the `--backend` choice.
    /// - Throws: ``PXError/usage(_:)`` for `--backend dcmtk|native` with a DICOMweb peer, and what
    ///   ``BackendOptions/make(executables:tool:)`` throws.
    public func backend(_ options: BackendOptions, tool: String) throws(PXError) -> any DICOMBackend {
        if let web = try webService(config: PXConfig.load()) {
            guard options.backend == .auto else {
                throw .usage("--backend \(options.backend.rawValue) cannot reach a DICOMweb peer; leave --backend out")
            }
            return DICOMWebBackend(place: web.place, transferSyntax: web.transferSyntax)
        }
        return try options.make(executables: executables(for: tool), tool: tool)
    }
}
