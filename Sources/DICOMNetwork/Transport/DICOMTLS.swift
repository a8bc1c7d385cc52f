import Logging
import NIOCore
import NIOSSL
import NIOTLS
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// DICOM over TLS: the settings of one side of a Secure Transport Connection (PS3.15 Annex B.9, the
/// BCP 195 TLS Secure Transport Connection Profile, and §B.10, its non-downgrading variant).
///
/// TLS is added to the pipeline *below* the PDU framing (PS3.8 §9.1: the upper layer runs on a TLS
/// connection exactly as on TCP), so the PDU codec, the state machine and the timeouts are the same
/// with and without it.
///
/// - **Versions**: TLS 1.2 and TLS 1.3 only (BCP 195 / RFC 8996 forbid TLS 1.0 and 1.1; PS3.15 §B.10 does
///   not fall back below 1.2).
/// - **Cipher suites** (TLS 1.2, ``bcp195CipherSuites``): `TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256`,
///   `TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256`, `TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384`,
///   `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`: the suites BCP 195 (RFC 9325 §4.2) recommends, all
///   with forward secrecy (ephemeral ECDH) and AEAD encryption, which is what PS3.15 §B.9/§B.10 take
///   from BCP 195. The `TLS_DHE_RSA_*_GCM_*` suites BCP 195 also lists are not offered: BoringSSL, under
///   swift-nio-ssl, has no finite-field DHE; DCMTK's `+py` profile and pynetdicom's defaults negotiate the
///   ECDHE suites above. TLS 1.3 suites are not configurable in BoringSSL: AES-GCM and ChaCha20-Poly1305,
///   all AEAD with forward secrecy, as BCP 195 asks.
/// - **Peer verification** is on by default: the peer's chain must lead to a root in ``trustRootsFile``
///   (or the system's roots when no file is given), and a client also checks that the server's certificate
///   names the host it dialled (subjectAltName DNS name, or IP address for a numeric host).
///   ``PeerVerification/none`` turns verification off and only when asked.
public struct DICOMTLSConfiguration: Sendable, Hashable {
    /// How the peer's certificate is checked.
    public enum PeerVerification: String, Sendable, Hashable, CaseIterable {
        /// Chain to a trusted root, validity dates, and (client side) the host name or IP address.
        case peer
        /// No check at all: encryption without authentication (testing only).
        case none
    }

    /// PEM file of the certificate authorities trusted for the peer's certificate; `nil`: the system's roots.
    public var trustRootsFile: String?
    /// PEM file of this side's certificate (chain); required for a server, and for mutual TLS on a client.
    public var certificateFile: String?
    /// PEM file of the private key of ``certificateFile``.
    public var privateKeyFile: String?
    /// How the peer's certificate is checked; a server checks a client certificate only when one is
    /// presented, unless ``requiresClientCertificate``.
    public var peerVerification: PeerVerification
    /// Server side: refuse clients that present no certificate (mutual TLS).
    public var requiresClientCertificate: Bool

    public init(
        trustRootsFile: String? = nil,
        certificateFile: String? = nil,
        privateKeyFile: String? = nil,
        peerVerification: PeerVerification = .peer,
        requiresClientCertificate: Bool = false
    ) {
        self.trustRootsFile = trustRootsFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.peerVerification = peerVerification
        self.requiresClientCertificate = requiresClientCertificate
    }

    /// The TLS 1.2 cipher suites offered, in OpenSSL/BoringSSL notation (see the type's documentation).
    public static let bcp195CipherSuites = [
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
    ].joined(separator: ":")

    /// Builds the TLS context of a client (`server == false`) or a server.
    ///
    /// - Throws: ``DICOMNetworkError/Code/tlsConfiguration`` when a file cannot be read or a server has no
    ///   certificate and key.
    func makeContext(server: Bool) throws(DICOMNetworkError) -> NIOSSLContext {
        var tls: TLSConfiguration
        do {
            let chain =
                try self.certificateFile.map {
                    try NIOSSLCertificate.fromPEMFile($0).map { NIOSSLCertificateSource.certificate($0) }
                } ?? []
            let key = try self.privateKeyFile.map {
                NIOSSLPrivateKeySource.privateKey(try NIOSSLPrivateKey(file: $0, format: .pem))
            }
            if (self.certificateFile == nil) != (self.privateKeyFile == nil) {
                throw DICOMNetworkError.tlsConfiguration(
                    "a certificate needs its private key and a key its certificate (give both files)")
            }
            if server {
                guard let key, !chain.isEmpty else {
                    throw DICOMNetworkError.tlsConfiguration("a TLS server needs a certificate and its private key")
                }
                tls = .makeServerConfiguration(certificateChain: chain, privateKey: key)
                switch (self.peerVerification, self.requiresClientCertificate) {
                case (.none, _): tls.certificateVerification = .none
                case (.peer, true): tls.certificateVerification = .noHostnameVerification
                case (.peer, false):
                    tls.certificateVerification = self.trustRootsFile == nil ? .none : .optionalVerification
                }
                tls.sendCANameList = self.trustRootsFile != nil
            } else {
                tls = .makeClientConfiguration()
                tls.certificateChain = chain
                tls.privateKey = key
                tls.certificateVerification = self.peerVerification == .peer ? .fullVerification : .none
            }
            if let trustRootsFile = self.trustRootsFile {
                tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(trustRootsFile))
            }
        } catch let error as DICOMNetworkError {
            throw error
        } catch {
            throw DICOMNetworkError.tlsConfiguration("cannot load the TLS files: \(error)")
        }
        tls.minimumTLSVersion = .tlsv12
        tls.maximumTLSVersion = .tlsv13
        tls.cipherSuites = Self.bcp195CipherSuites
        do {
            return try NIOSSLContext(configuration: tls)
        } catch {
            throw DICOMNetworkError.tlsConfiguration("invalid TLS settings: \(error)")
        }
    }
}

/// A TLS context built once for a client or a server, and the handlers it adds to each connection.
struct DICOMTLSContext: Sendable {
    let configuration: DICOMTLSConfiguration
    let context: NIOSSLContext

    init(_ configuration: DICOMTLSConfiguration, server: Bool) throws(DICOMNetworkError) {
        self.configuration = configuration
        self.context = try configuration.makeContext(server: server)
    }
}

/// What the TLS layer of one connection observed: the handshake's outcome, and the first TLS failure, also
/// one after the handshake (a TLS 1.3 server refuses a missing client certificate only after the client
/// has finished its handshake, so the client learns it when it next reads or writes).
final class TLSConnectionState: Sendable {
    /// Completes when the handshake does: success, or a named ``DICOMNetworkError``.
    let handshake: EventLoopFuture<Void>
    private let failure = Mutex<DICOMNetworkError?>(nil)

    init(handshake: EventLoopFuture<Void>) {
        self.handshake = handshake
    }

    /// The first TLS failure named on this connection.
    var firstFailure: DICOMNetworkError? { self.failure.withLock { $0 } }

    func record(_ error: DICOMNetworkError) {
        self.failure.withLock { if $0 == nil { $0 = error } }
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the TLS handler and a watcher at the front of the pipeline, before the PDU framing.
    ///
    /// - Parameters:
    ///   - serverHostname: The host the client dialled (SNI and the certificate's name check); an IP address
    ///     is checked against the certificate's IP subjectAltName and not sent as SNI. `nil` on a server.
    ///   - handshakeTimeout: How long the handshake may take once TCP is up; then the connection is closed.
    func addTLSHandlers(
        _ tls: DICOMTLSContext, serverHostname: String?, handshakeTimeout: TimeAmount
    ) throws -> TLSConnectionState {
        let promise = self.eventLoop.makePromise(of: Void.self)
        let state = TLSConnectionState(handshake: promise.futureResult)
        let dates = CertificateDateCheck()
        let sslHandler: NIOSSLHandler
        if let serverHostname {
            sslHandler = try (NIOSSLClientHandler.self as any PreverifyingClientHandler.Type).init(
                context: tls.context, serverHostname: Self.isIPAddress(serverHostname) ? nil : serverHostname,
                verificationCallback: dates.callback)
        } else {
            sslHandler = NIOSSLServerHandler(context: tls.context)
        }
        try self.addHandler(sslHandler, position: .first)
        try self.addHandler(
            TLSWatcher(
                promise: promise, state: state, dates: dates, timeout: handshakeTimeout, isClient: serverHostname != nil
            ),
            position: .after(sslHandler))
        return state
    }

    /// Whether `host` is an IPv4 or IPv6 address literal (checked against the certificate's IP
    /// subjectAltName by swift-nio-ssl, and never sent as SNI, RFC 6066 §3).
    static func isIPAddress(_ host: String) -> Bool {
        SocketAddress.literal(host, port: 0) != nil
    }
}

/// swift-nio-ssl hands a client the per-certificate pre-verification result (which tells an expired
/// certificate from an untrusted one) only through an initializer it marks deprecated in favour of
/// custom verification, which would replace its own checks; called through this protocol, it keeps them.
protocol PreverifyingClientHandler: NIOSSLHandler {
    init(context: NIOSSLContext, serverHostname: String?, verificationCallback: NIOSSLVerificationCallback?) throws
}

extension NIOSSLClientHandler: PreverifyingClientHandler {}

/// Notes, during verification, whether a certificate that failed is outside its validity dates.
/// Used on the channel's event loop only.
final class CertificateDateCheck {
    private(set) var outOfDate = false

    var callback: NIOSSLVerificationCallback {
        { result, certificate in
            if result == .failed {
                let now = time(nil)
                if certificate.notValidAfter < now || certificate.notValidBefore > now {
                    self.outOfDate = true
                }
            }
            return result
        }
    }
}

/// Watches the TLS layer: succeeds the handshake promise on completion, fails it with a named error on a
/// handshake error, an early close or the timeout, and records the first TLS failure afterwards.
final class TLSWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let promise: EventLoopPromise<Void>
    private let state: TLSConnectionState
    private let dates: CertificateDateCheck
    private let timeout: TimeAmount
    private let isClient: Bool
    private var timer: Scheduled<Void>?
    private var done = false

    init(
        promise: EventLoopPromise<Void>, state: TLSConnectionState, dates: CertificateDateCheck, timeout: TimeAmount,
        isClient: Bool
    ) {
        self.promise = promise
        self.state = state
        self.dates = dates
        self.timeout = timeout
        self.isClient = isClient
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive {
            self.startTimer(context: context)
        }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.startTimer(context: context)
        context.fireChannelActive()
    }

    /// The timeout counts from the TCP connection, not from the connect attempt.
    private func startTimer(context: ChannelHandlerContext) {
        guard self.timer == nil, !self.done else { return }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        self.timer = context.eventLoop.assumeIsolated().scheduleTask(in: self.timeout) {
            self.finish(.failure(DICOMNetworkError.tlsHandshakeTimeout()))
            loopBound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.finish(.failure(DICOMNetworkError.connectionClosed("the TLS handshake did not complete")))
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? TLSUserEvent, case .handshakeCompleted = event {
            self.finish(.success(()))
        }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        var named = DICOMNetworkError.tls(classifying: error, isClient: self.isClient, outOfDate: self.dates.outOfDate)
        if !self.done && named.code == .connectionClosed {
            named = DICOMNetworkError.tlsHandshakeInterrupted(by: error)
        }
        if named.code != .connectionClosed {
            self.state.record(named)
        }
        self.finish(.failure(named))
        context.fireErrorCaught(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.finish(.failure(DICOMNetworkError.tlsHandshakeInterrupted(by: nil)))
        context.fireChannelInactive()
    }

    private func finish(_ result: Result<Void, any Error>) {
        guard !self.done else { return }
        self.done = true
        self.timer?.cancel()
        if case .failure(let error as DICOMNetworkError) = result {
            self.state.record(error)
        }
        self.promise.completeWith(result)
    }
}

extension DICOMNetworkError {
    /// Names a TLS failure from swift-nio-ssl's error: certificate checks, a peer that does not speak TLS,
    /// an alert from the peer (which refused our certificate, or required one).
    static func tls(classifying error: any Error, isClient: Bool, outOfDate: Bool = false) -> DICOMNetworkError {
        if let error = error as? DICOMNetworkError { return error }
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return .tlsHostnameMismatch("the peer's certificate does not name the host we connected to (\(extra))")
        }
        let text = "\(error)"
        let peerSide = isClient ? "server" : "client"
        if text.contains("CERTIFICATE_VERIFY_FAILED") {
            if outOfDate {
                return .tlsExpiredCertificate("the \(peerSide)'s certificate has expired (\(text))")
            }
            return .tlsUntrustedCertificate("the \(peerSide)'s certificate is not signed by a trusted CA (\(text))")
        }
        if text.contains("WRONG_VERSION_NUMBER") || text.contains("UNKNOWN_PROTOCOL") || text.contains("HTTP_REQUEST")
            || text.contains("PACKET_LENGTH_TOO_LONG") || text.contains("RECORD_LENGTH_MISMATCH")
            || text.contains("UNEXPECTED_RECORD") || text.contains("WRONG_VERSION")
        {
            return .tlsPeerNotTLS("the \(peerSide) does not speak TLS (plain DICOM?): \(text)")
        }
        if text.contains("ALERT_CERTIFICATE_EXPIRED") {
            return .tlsExpiredCertificate("the \(peerSide) refused our certificate as expired (\(text))")
        }
        if text.contains("ALERT_UNKNOWN_CA") || text.contains("ALERT_BAD_CERTIFICATE") {
            return .tlsUntrustedCertificate("the \(peerSide) does not trust our certificate (\(text))")
        }
        if text.contains("CERTIFICATE_REQUIRED") || text.contains("PEER_DID_NOT_RETURN_A_CERTIFICATE") {
            return .tlsCertificateRequired(
                "the \(isClient ? "server requires a client certificate" : "client sent no certificate") (\(text))")
        }
        if error is NIOSSLError || error is BoringSSLError {
            return .tlsHandshakeFailed("TLS failure: \(text)")
        }
        return .connectionClosed("TLS connection failed: \(text)")
    }

    /// A transport error or a close before the handshake finished: a peer that does not speak TLS (plain
    /// DICOM resets or aborts on a ClientHello), or one that dropped us without an alert.
    static func tlsHandshakeInterrupted(by error: (any Error)?) -> DICOMNetworkError {
        .tlsPeerNotTLS(
            "the peer closed the connection during the TLS handshake: it probably does not speak TLS (plain DICOM?), or it refused us without an alert"
                + (error.map { " (\($0))" } ?? ""))
    }
}

extension DICOMNetworkError {
    /// Runs the association's opening and names the TLS failures that show only there: with TLS, a failure
    /// the TLS layer recorded after the handshake (TLS 1.3 servers refuse a missing client certificate after
    /// the client finished); without TLS, a peer that answers the A-ASSOCIATE-RQ with a TLS record (content
    /// type 0x15 alert or 0x16 handshake, read as a PDU type) or closes without a word, as TLS-only
    /// acceptors do.
    static func namingTLSFailures(_ tls: TLSConnectionState?, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as DICOMNetworkError where error.code != .connectionClosed && error.code != .protocolError {
            throw error
        } catch {
            if let tls {
                throw tls.firstFailure ?? error
            }
            let detail = "\(error)"
            let tlsRecord =
                detail.contains("unrecognized PDU type 0x15") || detail.contains("unrecognized PDU type 0x16")
            if let error = error as? DICOMNetworkError, error.code == .protocolError, !tlsRecord {
                throw error
            }
            throw DICOMNetworkError.tlsPeerExpectsTLS(
                tlsRecord
                    ? "the peer answered the A-ASSOCIATE-RQ in TLS: it expects DICOM TLS (use --tls) (\(detail))"
                    : "the peer closed the connection without answering the A-ASSOCIATE-RQ, as a TLS-only peer does: it probably expects DICOM TLS (use --tls), or it refuses connections (\(detail))"
            )
        }
    }
}
