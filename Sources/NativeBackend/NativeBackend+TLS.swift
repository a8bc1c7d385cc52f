import DICOMNetwork
import PXCore

extension TLSSettings {
    /// These settings for the native pipelines (PS3.15 Annex B.9).
    var network: DICOMTLSConfiguration {
        DICOMTLSConfiguration(
            trustRootsFile: self.caFile, certificateFile: self.certificateFile, privateKeyFile: self.keyFile,
            peerVerification: self.verification == .none ? .none : .peer,
            requiresClientCertificate: self.requiresClientCertificate)
    }
}

extension NativeBackend {
    /// A TLS failure of the network layer as its named ``PXError``; `nil` for other errors.
    static func pxTLSError(_ error: DICOMNetworkError) -> PXError? {
        let failure: PXError.TLSFailure
        switch error.code {
        case .tlsUntrustedCertificate: failure = .untrustedCertificate
        case .tlsHostnameMismatch: failure = .hostnameMismatch
        case .tlsExpiredCertificate: failure = .expiredCertificate
        case .tlsPeerNotTLS: failure = .peerNotTLS
        case .tlsPeerExpectsTLS: failure = .peerExpectsTLS
        case .tlsCertificateRequired: failure = .certificateRequired
        case .tlsHandshakeFailed: failure = .handshakeFailed
        case .tlsConfiguration: failure = .configuration
        default: return nil
        }
        return .tls(failure, error.detail)
    }
}
