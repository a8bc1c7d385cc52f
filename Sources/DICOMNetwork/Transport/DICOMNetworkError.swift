import DICOMData
import DICOMProtocol

/// An error of the network layer: connecting, negotiating, or running DIMSE operations (PS3.8 §7, PS3.7 §9).
public struct DICOMNetworkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of error.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case connectionRefused, unknownHost, connectTimeout, connectionFailed
            case acseTimeout, dimseTimeout, idleTimeout
            case associationRejected, noAcceptablePresentationContext
            case aborted, protocolError, connectionClosed
            case invalidArgument, fileError, operationFailed, notTheIndexedFile
            case tlsConfiguration, tlsUntrustedCertificate, tlsHostnameMismatch, tlsExpiredCertificate
            case tlsPeerNotTLS, tlsPeerExpectsTLS, tlsCertificateRequired, tlsHandshakeTimeout, tlsHandshakeFailed
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The peer refused the TCP connection (ECONNREFUSED).
        public static let connectionRefused = Code(.connectionRefused)
        /// The host name could not be resolved.
        public static let unknownHost = Code(.unknownHost)
        /// The TCP connection did not complete within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The TCP connection failed for another reason.
        public static let connectionFailed = Code(.connectionFailed)
        /// No A-ASSOCIATE-AC/RJ (or A-RELEASE-RP) arrived within the ACSE timeout.
        public static let acseTimeout = Code(.acseTimeout)
        /// No DIMSE message arrived within the DIMSE timeout.
        public static let dimseTimeout = Code(.dimseTimeout)
        /// The peer stayed silent longer than the idle (ARTIM) timeout.
        public static let idleTimeout = Code(.idleTimeout)
        /// The peer rejected the association; see ``DICOMNetworkError/rejection``.
        public static let associationRejected = Code(.associationRejected)
        /// No proposed presentation context suitable for the operation was accepted.
        public static let noAcceptablePresentationContext = Code(.noAcceptablePresentationContext)
        /// The association was aborted (A-ABORT from the peer, or A-P-ABORT); see ``DICOMNetworkError/abort``.
        public static let aborted = Code(.aborted)
        /// The peer violated PS3.8 or PS3.7; this side sent an A-ABORT.
        public static let protocolError = Code(.protocolError)
        /// The transport closed while the association was in use.
        public static let connectionClosed = Code(.connectionClosed)
        /// An argument cannot be used (an unreadable file, a missing SOP instance UID, ...).
        public static let invalidArgument = Code(.invalidArgument)
        /// A local file could not be read or written.
        public static let fileError = Code(.fileError)
        /// The operation was refused or failed with a DIMSE status; see ``DICOMNetworkError/status``.
        public static let operationFailed = Code(.operationFailed)
        /// A file to send from a place is not the one the place's index recorded (a symbolic link on its way,
        /// replaced or changed since indexed, or holding another SOP instance): nothing of it was sent.
        public static let notTheIndexedFile = Code(.notTheIndexedFile)
        /// The TLS files or settings cannot be used (PS3.15 Annex B.9).
        public static let tlsConfiguration = Code(.tlsConfiguration)
        /// The peer's certificate does not chain to a trusted CA (or the peer does not trust ours).
        public static let tlsUntrustedCertificate = Code(.tlsUntrustedCertificate)
        /// The server's certificate does not name the host or IP address that was dialled.
        public static let tlsHostnameMismatch = Code(.tlsHostnameMismatch)
        /// A certificate is outside its validity period.
        public static let tlsExpiredCertificate = Code(.tlsExpiredCertificate)
        /// TLS was asked for, but the peer answered in plain DICOM (or something else that is not TLS).
        public static let tlsPeerNotTLS = Code(.tlsPeerNotTLS)
        /// Plain DICOM was used, but the peer answered in TLS or closed at once: it expects TLS.
        public static let tlsPeerExpectsTLS = Code(.tlsPeerExpectsTLS)
        /// The server requires a client certificate (mutual TLS) and none was given.
        public static let tlsCertificateRequired = Code(.tlsCertificateRequired)
        /// The TLS handshake did not complete within the connect (client) or ARTIM (server) timeout.
        public static let tlsHandshakeTimeout = Code(.tlsHandshakeTimeout)
        /// Another TLS failure (an alert from the peer, no common cipher suite or version).
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)

        public var description: String { self.base.rawValue }
    }

    /// The kind of error.
    public let code: Code
    /// A human-readable explanation.
    public let detail: String
    /// The A-ASSOCIATE-RJ, for ``Code/associationRejected``.
    public let rejection: AssociateRJ?
    /// The A-ABORT received, for ``Code/aborted`` when the peer aborted.
    public let abort: Abort?
    /// The DIMSE status, for ``Code/operationFailed``.
    public let status: DIMSEStatus?

    private init(
        _ code: Code, _ detail: String, rejection: AssociateRJ? = nil, abort: Abort? = nil, status: DIMSEStatus? = nil
    ) {
        self.code = code
        self.detail = detail
        self.rejection = rejection
        self.abort = abort
        self.status = status
    }

    public var description: String { "DICOMNetworkError.\(self.code): \(self.detail)" }

    public static func connectionRefused(host: String, port: Int) -> Self {
        Self(.connectionRefused, "connection refused by \(host):\(port)")
    }
    public static func unknownHost(_ host: String) -> Self {
        Self(.unknownHost, "cannot resolve host \(host)")
    }
    public static func connectTimeout(host: String, port: Int) -> Self {
        Self(.connectTimeout, "no connection to \(host):\(port) within the connect timeout")
    }
    public static func connectionFailed(host: String, port: Int, _ underlying: any Error) -> Self {
        Self(.connectionFailed, "cannot connect to \(host):\(port): \(underlying)")
    }
    public static func acseTimeout(_ waitingFor: String) -> Self {
        Self(.acseTimeout, "no \(waitingFor) within the ACSE timeout")
    }
    public static func dimseTimeout(_ waitingFor: String) -> Self {
        Self(.dimseTimeout, "no \(waitingFor) within the DIMSE timeout")
    }
    public static func idleTimeout() -> Self {
        Self(.idleTimeout, "the peer was silent longer than the idle timeout")
    }
    public static func associationRejected(_ rejection: AssociateRJ) -> Self {
        Self(.associationRejected, "association rejected: \(rejection)", rejection: rejection)
    }
    public static func noAcceptablePresentationContext(_ what: String) -> Self {
        Self(.noAcceptablePresentationContext, "no accepted presentation context for \(what)")
    }
    public static func aborted(by abort: Abort) -> Self {
        Self(.aborted, "association aborted by the peer (source \(abort.source), reason \(abort.reason))", abort: abort)
    }
    public static func protocolError(_ detail: String) -> Self {
        Self(.protocolError, detail)
    }
    public static func connectionClosed(_ detail: String) -> Self {
        Self(.connectionClosed, detail)
    }
    public static func invalidArgument(_ detail: String) -> Self {
        Self(.invalidArgument, detail)
    }
    public static func fileError(_ detail: String) -> Self {
        Self(.fileError, detail)
    }
    public static func notTheIndexedFile(_ detail: String) -> Self {
        Self(.notTheIndexedFile, detail)
    }
    public static func tlsConfiguration(_ detail: String) -> Self { Self(.tlsConfiguration, detail) }
    public static func tlsUntrustedCertificate(_ detail: String) -> Self { Self(.tlsUntrustedCertificate, detail) }
    public static func tlsHostnameMismatch(_ detail: String) -> Self { Self(.tlsHostnameMismatch, detail) }
    public static func tlsExpiredCertificate(_ detail: String) -> Self { Self(.tlsExpiredCertificate, detail) }
    public static func tlsPeerNotTLS(_ detail: String) -> Self { Self(.tlsPeerNotTLS, detail) }
    public static func tlsPeerExpectsTLS(_ detail: String) -> Self { Self(.tlsPeerExpectsTLS, detail) }
    public static func tlsCertificateRequired(_ detail: String) -> Self { Self(.tlsCertificateRequired, detail) }
    public static func tlsHandshakeTimeout() -> Self {
        Self(.tlsHandshakeTimeout, "the TLS handshake did not complete in time")
    }
    public static func tlsHandshakeFailed(_ detail: String) -> Self { Self(.tlsHandshakeFailed, detail) }
    public static func operationFailed(_ operation: String, status: DIMSEStatus, comment: String? = nil) -> Self {
        Self(.operationFailed, "\(operation) failed: \(status)" + (comment.map { " (\($0))" } ?? ""), status: status)
    }
}
