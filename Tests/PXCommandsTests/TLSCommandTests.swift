import DICOMData
import Foundation
import PXTestSupport
import Testing

/// DICOM TLS from the command line (issue 15): px-echo / px-push on both backends against px-listen over
/// TLS on both backends, DCMTK's echoscu and storescu `+tls`, pynetdicom's TLS SCP, the config file's
/// `tls = true`, and the errors people hit, named in the JSON. Certificates are made per test by
/// scripts/make-test-certs.sh.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct TLSCommandTests {
    static let backends = ["native", "dcmtk"]

    static func withWork(_ body: (String, TestSupport.TestCertificates) async throws -> Void) async throws {
        guard PeerHarness.requireTools(["storescu", "echoscu", "storescp", "openssl"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tls-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await body(work, try await TestSupport.makeCertificates(in: work + "/certs"))
    }

    /// px-listen's TLS options with the test server certificate; `requireClient`: mutual TLS.
    static func listenTLS(_ c: TestSupport.TestCertificates, requireClient: Bool = true) -> [String] {
        ["--tls-cert", c.pem("server"), "--tls-key", c.key("server"), "--tls-ca", c.pem("ca")]
            + (requireClient ? ["--tls-require-client-cert"] : [])
    }

    /// A client's TLS options: trust the test CA, present the client certificate.
    static func clientTLS(_ c: TestSupport.TestCertificates, ca: String = "ca") -> [String] {
        ["--tls-ca", c.pem(ca), "--tls-cert", c.pem("client"), "--tls-key", c.key("client")]
    }

    static func dcmtkTLS(_ c: TestSupport.TestCertificates) -> [String] {
        ["+tls", c.key("client"), c.pem("client"), "-pw", "+cf", c.pem("ca")]
    }

    static func code(_ run: PeerHarness.Run) -> String? { run.json?["error"]?["code"]?.stringValue }

    @Test(arguments: backends) func clientsToATLSListener(listenBackend: String) async throws {
        try await Self.withWork { work, c in
            let corpus = try await ListenerFiles.makeCorpus(["many", "3", "2", work + "/corpus"])
            let listener = try await ListenerProcess.start(
                backend: listenBackend, root: work + "/root", work: work, extra: Self.listenTLS(c),
                echoExtra: Self.dcmtkTLS(c))
            do {
                try await Self.sendAndRefuse(
                    listener: listener, listenBackend: listenBackend, corpus: corpus, work: work, c)
            } catch {
                await listener.stop(signal: SIGKILL)
                throw error
            }
            #expect(await listener.stop() == 0)
        }
    }

    static func sendAndRefuse(
        listener: ListenerProcess, listenBackend: String, corpus: [String], work: String,
        _ c: TestSupport.TestCertificates
    ) async throws {
        do {
            let peer = "PXLISTEN@localhost:\(listener.port)"
            var expected = 0
            for backend in Self.backends {
                let echo = try await PeerHarness.runAsync("px-echo", [peer, "--backend", backend] + Self.clientTLS(c))
                #expect(echo.exitCode == 0, "\(backend) → \(listenBackend): \(echo.stdout) \(echo.stderr)")
                let push = try await PeerHarness.runAsync(
                    "px-push", [peer] + corpus + ["--backend", backend] + Self.clientTLS(c))
                #expect(push.exitCode == 0, "\(backend) → \(listenBackend): \(push.stdout) \(push.stderr)")
                expected += corpus.count
                #expect(
                    await listener.waitFor(seconds: 20) {
                        $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == expected
                    })
            }
            let store = try await PeerHarness.runAsync(
                TestSupport.locate("storescu") ?? "/usr/bin/storescu",
                Self.dcmtkTLS(c) + ["-aec", "PXLISTEN", "127.0.0.1", "\(listener.port)"] + corpus)
            #expect(store.exitCode == 0, "storescu +tls → \(listenBackend): \(store.stderr)")
            expected += corpus.count
            #expect(
                await listener.waitFor(seconds: 20) {
                    $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == expected
                })
            #expect(
                try ListenerFiles.dataSets(ListenerFiles.placed(under: work + "/root"))
                    == ListenerFiles.dataSets(corpus))

            // Negative cases; the listener serves the next good client after each.
            for backend in Self.backends {
                let wrongCA = try await PeerHarness.runAsync(
                    "px-echo", [peer, "--backend", backend] + Self.clientTLS(c, ca: "other-ca"))
                #expect(Self.code(wrongCA) == "tlsUntrustedCertificate", "\(backend): \(wrongCA.stdout)")
                #expect(wrongCA.exitCode == 1)
                let noCert = try await PeerHarness.runAsync(
                    "px-echo", [peer, "--backend", backend, "--tls-ca", c.pem("ca")])
                #expect(
                    Self.code(noCert) == "tlsCertificateRequired", "\(backend) → \(listenBackend): \(noCert.stdout)")
            }
            let plain = try await PeerHarness.runAsync("px-echo", [peer, "--backend", "native", "--acse-timeout", "5"])
            #expect(Self.code(plain) == "tlsPeerExpectsTLS", "plain → \(listenBackend): \(plain.stdout)")
            let again = try await PeerHarness.runAsync("px-echo", [peer, "--backend", "native"] + Self.clientTLS(c))
            #expect(again.exitCode == 0, "\(again.stdout)")
        }
    }

    @Test(arguments: backends) func errorsAgainstOtherServers(backend: String) async throws {
        try await Self.withWork { work, c in
            // TLS client to a plain listener.
            let plain = try await ListenerProcess.start(backend: "native", root: work + "/plain", work: work)
            let toPlain = try await PeerHarness.runAsync(
                "px-echo", ["PXLISTEN@localhost:\(plain.port)", "--backend", backend] + Self.clientTLS(c))
            #expect(Self.code(toPlain) == "tlsPeerNotTLS", "\(backend): \(toPlain.stdout)")
            #expect(await plain.stop() == 0)
            // A listener whose certificate has expired: named by the native backend; DCMTK cannot tell why.
            let expired = try await ListenerProcess.start(
                backend: "native", root: work + "/expired", work: work,
                extra: ["--tls-cert", c.pem("expired"), "--tls-key", c.key("expired")])
            let toExpired = try await PeerHarness.runAsync(
                "px-echo", ["PXLISTEN@localhost:\(expired.port)", "--backend", backend] + Self.clientTLS(c))
            #expect(
                Self.code(toExpired) == (backend == "native" ? "tlsExpiredCertificate" : "tlsUntrustedCertificate"),
                "\(toExpired.stdout)")
            let unchecked = try await PeerHarness.runAsync(
                "px-echo", ["PXLISTEN@localhost:\(expired.port)", "--backend", backend, "--tls-verify", "none"])
            #expect(unchecked.exitCode == 0, "--tls-verify none: \(unchecked.stdout)")
            #expect(await expired.stop() == 0)
            // DCMTK 3.6.7's movescu and getscu have no TLS: a clear error, never a plain connection.
            if backend == "dcmtk" {
                for command in ["px-move", "px-get"] {
                    let args = command == "px-move" ? ["--destination", "PXLISTEN"] : ["-d", work + "/get"]
                    let run = try await PeerHarness.runAsync(
                        command,
                        [
                            "PXLISTEN@127.0.0.1:\(try TestSupport.freePort())", "--backend", "dcmtk", "--tls",
                            "--StudyInstanceUID", "1.2.3",
                        ] + args)
                    #expect(Self.code(run) == "tlsUnsupported", "\(command): \(run.stdout) \(run.stderr)")
                    #expect(run.exitCode == 69)
                }
            }
        }
    }

    @Test(arguments: backends) func pynetdicomTLSSCPAndConfigNode(backend: String) async throws {
        try await Self.withWork { work, c in
            let scp = try PeerProcess(
                TestSupport.python,
                [
                    TestSupport.repositoryRoot + "/scripts/pynetdicom-tls.py", "scp", "0", "PYTLS", "--cert",
                    c.pem("server"), "--key", c.key("server"),
                    "--ca", c.pem("ca"), "--require-client-cert",
                ],
                logFile: work + "/pyscp.log")
            defer { scp.kill() }
            let ready = try await scp.waitForEvent { $0["event"]?.stringValue == "ready" }
            let port = try #require(ready["port"]?.intValue)
            let echo = try await PeerHarness.runAsync(
                "px-echo", ["PYTLS@localhost:\(port)", "--backend", backend] + Self.clientTLS(c))
            #expect(echo.exitCode == 0, "\(echo.stdout) \(echo.stderr)")
            // The same through a config node: tls = true, ca, cert, key.
            let config = work + "/config.toml"
            try """
            [nodes.secure]
            host = "localhost"
            port = \(port)
            ae_title = "PYTLS"
            tls = true
            ca = "\(c.pem("ca"))"
            cert = "\(c.pem("client"))"
            key = "\(c.key("client"))"
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let viaNode = try await PeerHarness.runAsync(
                "px-echo", ["secure", "--backend", backend], environment: ["PX_CONFIG": config])
            #expect(viaNode.exitCode == 0, "\(viaNode.stdout) \(viaNode.stderr)")
            #expect(
                await scp.waitFor(seconds: 10) { scp.events.filter { $0["event"]?.stringValue == "echo" }.count == 2 })
            // A node with TLS keys but without tls = true is a usage error, not a plain connection.
            try "[nodes.half]\nhost = \"localhost\"\nport = \(port)\nae_title = \"PYTLS\"\nca = \"\(c.pem("ca"))\"\n"
                .write(toFile: config, atomically: true, encoding: .utf8)
            let half = try await PeerHarness.runAsync(
                "px-echo", ["half", "--backend", backend], environment: ["PX_CONFIG": config])
            #expect(half.exitCode == 64 && Self.code(half) == "usage", "\(half.stdout)")
        }
    }
    /// Orthanc with DicomTlsEnabled (client certificates required): px-push, px-find on both backends, and
    /// a plain px-echo told that Orthanc expects TLS.
    @Test func orthancWithDicomTLS() async throws {
        try await Self.withWork { work, c in
            guard PeerHarness.requireTools(["Orthanc"]) else { return }
            let corpus = try await ListenerFiles.makeCorpus(["many", "2", "1", work + "/corpus"])
            let port = try TestSupport.freePort()
            let config = work + "/orthanc.json"
            try """
            { "Name": "px-tls-test", "StorageDirectory": "\(work)/db", "IndexDirectory": "\(work)/db", "Plugins": [],
              "HttpServerEnabled": false, "DicomAet": "ORTHANC", "DicomPort": \(port), "DefaultEncoding": "Utf8",
              "DicomAlwaysAllowEcho": true, "DicomAlwaysAllowStore": true, "DicomAlwaysAllowFind": true,
              "SaveJobs": false, "DicomAssociationCloseDelay": 0,
              "DicomTlsEnabled": true, "DicomTlsCertificate": "\(c.pem("server"))", "DicomTlsPrivateKey": "\(c.key("server"))",
              "DicomTlsTrustedCertificates": "\(c.pem("ca"))", "DicomTlsRemoteCertificateRequired": true }
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let orthanc = try PeerProcess("Orthanc", [config], logFile: work + "/orthanc.log")
            defer { orthanc.kill() }
            let peer = "ORTHANC@localhost:\(port)"
            let ready = try await TestSupport.poll(seconds: 30) {
                try await PeerHarness.runAsync("px-echo", [peer, "--backend", "native"] + Self.clientTLS(c)).exitCode
                    == 0
            }
            try #require(ready, "Orthanc with DICOM TLS did not answer: \(orthanc.log)")
            let push = try await PeerHarness.runAsync(
                "px-push", [peer] + corpus + ["--backend", "native"] + Self.clientTLS(c))
            #expect(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
            for backend in Self.backends {
                let find = try await PeerHarness.runAsync("px-find", [peer, "--backend", backend] + Self.clientTLS(c))
                #expect(find.exitCode == 0, "\(backend): \(find.stdout) \(find.stderr)")
                #expect(find.json?["data"]?.arrayValue?.count == 1, "\(backend): \(find.stdout)")
            }
            let plain = try await PeerHarness.runAsync("px-echo", [peer, "--backend", "native"])
            #expect(Self.code(plain) == "tlsPeerExpectsTLS", "\(plain.stdout)")
        }
    }
}
