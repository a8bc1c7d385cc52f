import PXCore

/// DICOM TLS with DCMTK 3.6.7's tools (PS3.15 Annex B.9): the same ``TLSSettings`` as the native backend,
/// as the tools' options. echoscu, findscu, storescu and storescp have them; movescu and getscu of 3.6.7 do
/// not, so TLS with those is an error (``PXError/TLSFailure/unsupported``), never a plain connection.
///
/// DCMTK's default security profile `+py` (BCP 195 non-downgrading, TLS 1.2+) is kept. DCMTK 3.6.7 does not
/// check the server's host name against its certificate, and does not tell an expired certificate from an
/// untrusted one ("certificate verify failed"): the native backend does both.
extension DCMTKBackend {
    /// Where the system's trusted CAs are, as a hashed OpenSSL directory, when no `--tls-ca` is given.
    static let systemCADirectory = "/etc/ssl/certs"

    /// The client options for `settings`: `+tls KEY CERT` (our certificate, mutual TLS) or `+tla` (TLS without
    /// one), `-pw` (unencrypted key: never a password prompt), `+cf CA` or `+cd` the system's CAs, and `-rc`
    /// (verify the server) or `-ic` (`--tls-verify none`).
    static func clientTLSArguments(_ settings: TLSSettings?) -> [String] {
        guard let settings else { return [] }
        var arguments: [String]
        if let key = settings.keyFile, let certificate = settings.certificateFile {
            arguments = ["+tls", key, certificate, "-pw"]
        } else {
            arguments = ["+tla"]
        }
        arguments += settings.caFile.map { ["+cf", $0] } ?? ["+cd", systemCADirectory]
        arguments.append(settings.verification == .none ? "-ic" : "-rc")
        return arguments
    }

    /// storescp's options: `+tls KEY CERT -pw`, `+cf CA`, and `-rc` (client certificate required), `-vc`
    /// (checked when presented, with a CA) or `-ic` (no CA: not checked).
    static func serverTLSArguments(_ settings: TLSSettings?) -> [String] {
        guard let settings, let key = settings.keyFile, let certificate = settings.certificateFile else { return [] }
        var arguments = ["+tls", key, certificate, "-pw"]
        if let ca = settings.caFile {
            arguments += ["+cf", ca, settings.requiresClientCertificate ? "-rc" : "-vc"]
        } else {
            arguments.append("-ic")
        }
        return arguments
    }

    /// Refuses TLS for a tool without TLS support (movescu, getscu in DCMTK 3.6.7).
    static func requirePlain(_ connection: Connection, tool: String) throws(PXError) {
        if connection.tls != nil {
            throw PXError.tls(.unsupported, "\(tool) (DCMTK 3.6.7) cannot use DICOM TLS: use --backend native")
        }
    }

    /// The TLS failure DCMTK's diagnostics describe, or `nil` (texts of DCMTK 3.6.7 with OpenSSL 3).
    ///
    /// Without TLS, ``plainToTLSFailure(_:)``.
    static func tlsFailure(_ lines: [DCMTKLogLine], settings: TLSSettings?) -> PXError? {
        guard let settings else { return plainToTLSFailure(lines) }
        let texts = lines.map(\.text)
        func line(_ needle: String) -> String? { texts.first { $0.lowercased().contains(needle.lowercased()) } }
        if let text = line("Unable to load private TLS key") ?? line("unable to load certificate")
            ?? line("Unable to load certificate") ?? line("private key does not match")
        {
            return .tls(.configuration, "DCMTK cannot use the TLS files: \(text)")
        }
        if let text = line("certificate verify failed") {
            return .tls(
                .untrustedCertificate,
                "the peer's certificate failed verification: not signed by a trusted CA, or expired (DCMTK does not say which): \(text)"
            )
        }
        if let text = line("alert certificate expired") {
            return .tls(.expiredCertificate, "the peer refused our certificate as expired: \(text)")
        }
        if let text = line("alert unknown ca") ?? line("alert bad certificate") {
            return .tls(.untrustedCertificate, "the peer does not trust our certificate: \(text)")
        }
        if let text = line("certificate required") ?? line("did not return a certificate") {
            return .tls(.certificateRequired, "the peer requires a client certificate: \(text)")
        }
        if let text = line("wrong version number") ?? line("SSL_ERROR_SYSCALL") ?? line("packet length too long") {
            return .tls(.peerNotTLS, "the peer does not speak TLS (plain DICOM?): \(text)")
        }
        if let text = line("Connection reset by peer") ?? line("never connected") {
            // A TLS 1.3 server that refuses our certificate (or its absence) closes after the client's Finished.
            if settings.certificateFile == nil {
                return .tls(
                    .certificateRequired,
                    "the peer closed the TLS connection: it probably requires a client certificate (--tls-cert, --tls-key): \(text)"
                )
            }
            return .tls(
                .handshakeFailed, "the peer closed the TLS connection: it may not accept our certificate: \(text)")
        }
        if let text = line("TLS error") {
            return .tls(.handshakeFailed, "TLS failure: \(text)")
        }
        return nil
    }

    /// A plain A-ASSOCIATE-RQ to a TLS-only acceptor, ``PXError/TLSFailure/peerExpectsTLS`` as the native backend
    /// names it: the peer answered with a TLS record (content type 0x15 alert or 0x16 handshake, which DCMTK
    /// reads as a PDU type: "Association Request Failed: 0006:0321 Unrecognized PDU type: 15"), or closed the
    /// connection without answering, as storescp +tls does ("0006:0317 Peer aborted Association (or never
    /// connected)").
    static func plainToTLSFailure(_ lines: [DCMTKLogLine]) -> PXError? {
        let requestFailures = lines.filter { $0.isFailure && $0.text.contains("Association Request Failed") }
        if let line = requestFailures.first(where: {
            $0.text.hasSuffix("Unrecognized PDU type: 15") || $0.text.hasSuffix("Unrecognized PDU type: 16")
        }) {
            return .tls(
                .peerExpectsTLS,
                "the peer answered the A-ASSOCIATE-RQ in TLS: it expects DICOM TLS (use --tls) (\(line.text))")
        }
        if let line = requestFailures.first(where: { $0.text.contains("Peer aborted Association (or never connected)") }
        ) {
            return .tls(
                .peerExpectsTLS,
                "the peer closed the connection without answering the A-ASSOCIATE-RQ, as a TLS-only peer does: it probably expects DICOM TLS (use --tls), or it refuses connections (\(line.text))"
            )
        }
        return nil
    }
}
