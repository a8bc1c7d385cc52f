import ArgumentParser
import PXCore
import PXPlaces

/// DICOM TLS for the commands that connect to a peer (px-echo, px-find, px-move, px-get, px-push):
/// `--tls`, `--tls-ca FILE`, `--tls-cert FILE`, `--tls-key FILE`, `--tls-verify peer|none`.
///
/// The same per node in the config file: `tls = true`, `ca = "..."`, `cert = "..."`, `key = "..."`,
/// `verify = "none"`; a flag given on the command line wins over the node's key.
public struct TLSOptions: ParsableArguments {
    @Flag(name: .customLong("tls"), help: "Use DICOM TLS (PS3.15 Annex B.9: TLS 1.2/1.3, BCP 195 cipher suites).")
    public var enabled = false

    @Option(
        name: .customLong("tls-ca"),
        help: ArgumentHelp(
            "PEM file of the CA(s) trusted for the peer's certificate (implies --tls).", valueName: "file"))
    public var caFile: String?

    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp("PEM file of our certificate, for mutual TLS (implies --tls).", valueName: "file"))
    public var certificateFile: String?

    @Option(
        name: .customLong("tls-key"),
        help: ArgumentHelp("PEM file of our certificate's private key (unencrypted).", valueName: "file"))
    public var keyFile: String?

    @Option(
        name: .customLong("tls-verify"),
        help:
            "peer: check the peer's certificate, and with the native backend its host name or IP (default); none: no check (testing only). Implies --tls."
    )
    public var verification: TLSSettings.Verification?

    public init() {}

    public func validate() throws {
        if (certificateFile == nil) != (keyFile == nil) {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
    }

    /// The TLS settings: the command line's, over the config node's (when the peer is a node).
    /// - Throws: ``PXError/usage(_:)``.
    public func settings(node: PXConfig.Node?) throws(PXError) -> TLSSettings? {
        let fromNode = node?.tls
        let asked = enabled || caFile != nil || certificateFile != nil || verification != nil
        guard asked || fromNode != nil else { return nil }
        return try TLSSettings(
            caFile: caFile ?? fromNode?.caFile,
            certificateFile: certificateFile ?? fromNode?.certificateFile,
            keyFile: keyFile ?? fromNode?.keyFile,
            verification: verification ?? fromNode?.verification ?? .peer)
    }
}

/// px-listen's DICOM TLS: `--tls-cert FILE --tls-key FILE` (turns TLS on), `--tls-ca FILE` (trust for client
/// certificates, checked when presented) and `--tls-require-client-cert` (mutual TLS).
public struct ListenTLSOptions: ParsableArguments {
    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp("PEM file of the listener's certificate: serve DICOM TLS only.", valueName: "file"))
    public var certificateFile: String?

    @Option(
        name: .customLong("tls-key"),
        help: ArgumentHelp("PEM file of its private key (unencrypted).", valueName: "file"))
    public var keyFile: String?

    @Option(
        name: .customLong("tls-ca"),
        help: ArgumentHelp("PEM file of the CA(s) that sign client certificates.", valueName: "file"))
    public var caFile: String?

    @Flag(
        name: .customLong("tls-require-client-cert"),
        help: "Refuse TLS clients without a certificate signed by --tls-ca (mutual TLS).")
    public var requiresClientCertificate = false

    public init() {}

    public func validate() throws {
        if (certificateFile == nil) != (keyFile == nil) {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        if certificateFile == nil && (caFile != nil || requiresClientCertificate) {
            throw ValidationError("--tls-ca and --tls-require-client-cert need --tls-cert and --tls-key")
        }
        if requiresClientCertificate && caFile == nil {
            throw ValidationError("--tls-require-client-cert needs --tls-ca")
        }
    }

    /// `configuration` with these settings.
    /// - Throws: ``PXError/usage(_:)``.
    public func applied(to configuration: ListenConfiguration) throws(PXError) -> ListenConfiguration {
        guard certificateFile != nil else { return configuration }
        var configuration = configuration
        configuration.tls = try TLSSettings(
            caFile: caFile, certificateFile: certificateFile, keyFile: keyFile,
            requiresClientCertificate: requiresClientCertificate)
        return configuration
    }
}

extension TLSSettings.Verification: ExpressibleByArgument {}
