/// DICOM TLS settings of one connection or listener (PS3.15 Annex B.9, the BCP 195 TLS Secure Transport
/// Connection Profile), whichever backend runs it.
///
/// The native backend speaks TLS itself (TLS 1.2 and 1.3, BCP 195 cipher suites); the DCMTK backend passes
/// the same settings to the tools as `+tls`/`+tla`, `+cf`, `-rc`/`-vc`/`-ic` (their default profile `+py`
/// is BCP 195's non-downgrading one).
public struct TLSSettings: Hashable, Sendable {
    /// How the peer's certificate is checked.
    public enum Verification: String, Hashable, Sendable, CaseIterable {
        /// Chain to a trusted CA, validity dates, and (native client) the host name or IP address.
        case peer
        /// No check (encryption without authentication): only when asked for.
        case none
    }

    /// PEM file of the trusted certificate authorities; `nil`: the system's (native backend only).
    public var caFile: String?
    /// PEM file of our certificate: a listener's identity, or a client's for mutual TLS.
    public var certificateFile: String?
    /// PEM file of our certificate's private key (unencrypted).
    public var keyFile: String?
    public var verification: Verification
    /// Listener: refuse a client that presents no certificate (mutual TLS).
    public var requiresClientCertificate: Bool

    /// - Throws: ``PXError/usage(_:)`` when a certificate comes without its key (or the reverse), or a
    ///   client certificate is required but no CA to check it is given.
    public init(
        caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil,
        verification: Verification = .peer,
        requiresClientCertificate: Bool = false
    ) throws(PXError) {
        if (certificateFile == nil) != (keyFile == nil) {
            throw .usage("TLS: give the certificate and its private key together (--tls-cert and --tls-key)")
        }
        if requiresClientCertificate && caFile == nil {
            throw .usage("TLS: --tls-require-client-cert needs --tls-ca (the CA that signs client certificates)")
        }
        if requiresClientCertificate && verification == .none {
            throw .usage("TLS: --tls-require-client-cert cannot be combined with --tls-verify none")
        }
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
        self.verification = verification
        self.requiresClientCertificate = requiresClientCertificate
    }
}
