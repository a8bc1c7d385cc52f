import DICOMData
import PXCommandLine
import PXCore
import PXPlaces
import PXTestSupport
import Testing

/// The TLS options and config keys (issue 15), without a network.
@Suite(.timeLimit(.minutes(10))) struct TLSOptionsParsingTests {
    @Test func configNodeKeys() throws {
        let config = try PXConfig(
            parsing: """
                [nodes.secure]
                host = "pacs"
                port = 2762
                ae_title = "PACS"
                tls = true
                ca = "/etc/px/ca.pem"
                cert = "/etc/px/me.pem"
                key = "/etc/px/me.key"

                [nodes.open]
                host = "pacs"
                port = 104
                ae_title = "PACS"
                tls = true
                verify = "none"

                [nodes.plain]
                host = "pacs"
                port = 104
                ae_title = "PACS"
                """)
        let secure = try #require(config.nodes["secure"]?.tls)
        #expect(
            secure.caFile == "/etc/px/ca.pem" && secure.certificateFile == "/etc/px/me.pem"
                && secure.keyFile == "/etc/px/me.key")
        #expect(secure.verification == .peer)
        #expect(config.nodes["open"]?.tls?.verification == TLSSettings.Verification.none)
        #expect(config.nodes["plain"]?.tls == nil)
    }

    @Test(arguments: [
        "tls = false\nca = \"/ca.pem\"",  // TLS keys without tls = true: never a silent plain connection
        "ca = \"/ca.pem\"",
        "tls = \"yes\"",
        "tls = true\nverify = \"maybe\"",
        "tls = true\ncert = \"/me.pem\"",  // a certificate without its key
    ])
    func badNodeKeys(_ keys: String) {
        #expect(throws: PXError.self) {
            try PXConfig(parsing: "[nodes.n]\nhost = \"h\"\nport = 1\nae_title = \"A\"\n" + keys)
        }
    }

    /// Option combinations the commands refuse as usage errors (exit 64), before any connection.
    @Test(arguments: [
        ["px-echo", "127.0.0.1:104", "--tls-cert", "/me.pem"],
        ["px-echo", "127.0.0.1:104", "--tls-verify", "sometimes"],
        ["px-push", "127.0.0.1:104", "/nonexistent.dcm", "--tls-key", "/me.key"],
        ["px-listen", "--port", "0", "--tls-require-client-cert"],
        ["px-listen", "--port", "0", "--tls-cert", "/s.pem", "--tls-key", "/s.key", "--tls-require-client-cert"],
        ["px-listen", "--port", "0", "--tls-ca", "/ca.pem"],
    ])
    func usageErrors(_ command: [String]) async throws {
        let run = try await PeerHarness.run(command[0], Array(command.dropFirst()))
        #expect(run.exitCode == 64, "\(command): \(run.stdout) \(run.stderr)")
    }

    /// A TLS file that cannot be read is `tlsConfiguration` (exit 64) on both backends.
    @Test(.tags(.integration), .integrationTier, arguments: ["native", "dcmtk"]) func unreadableFiles(backend: String)
        async throws
    {
        let run = try await PeerHarness.run(
            "px-echo",
            [
                "127.0.0.1:\(try TestSupport.freePort())", "--backend", backend, "--tls-cert", "/nonexistent.pem",
                "--tls-key", "/nonexistent.key",
            ])
        #expect(run.json?["error"]?["code"]?.stringValue == "tlsConfiguration", "\(run.stdout) \(run.stderr)")
        #expect(run.exitCode == 64)
    }

    @Test func exitCodes() {
        #expect(PXExit.code(for: .tls(.configuration, "x")) == PXExit.usage)
        #expect(PXExit.code(for: .tls(.unsupported, "x")) == PXExit.unavailable)
        #expect(PXExit.code(for: .tls(.untrustedCertificate, "x")) == PXExit.dicomFailure)
        #expect(PXError.tls(.hostnameMismatch, "x").code.description == "tlsHostnameMismatch")
    }
}
