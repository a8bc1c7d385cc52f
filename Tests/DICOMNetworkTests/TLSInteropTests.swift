import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// DICOM TLS (PS3.15 Annex B.9) on the native pipelines, against real peers on 127.0.0.1: DCMTK's storescp,
/// echoscu and storescu with `+tls`, pynetdicom with an ssl context, and our own server. Certificates are
/// made per suite run by scripts/make-test-certs.sh.
@Suite(
    "DICOM TLS", .tags(.integration), .integrationTier, .serialized,
    .requires("openssl", "storescp", "echoscu", "storescu", pythonModules: ["pynetdicom"]),
    .timeLimit(.minutes(10))
)
struct TLSInteropTests {
    static func client(tls: DICOMTLSConfiguration?, connectTimeout: TimeAmount = .seconds(5)) -> DICOMClient {
        var configuration = DICOMClient.Configuration(
            callingAETitle: "PXTLS", connectTimeout: connectTimeout, acseTimeout: .seconds(10),
            dimseTimeout: .seconds(30))
        configuration.tls = tls
        return DICOMClient(configuration: configuration, logger: TestSupport.logger("px.test.client"))
    }

    /// Runs `body` with fresh certificates in a temporary folder.
    static func withCertificates(_ body: (TestSupport.TestCertificates, String) async throws -> Void) async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-tls-") { dir in
            let certificates = try await TestSupport.makeCertificates(in: dir + "/certs")
            try await body(certificates, dir)
        }
    }

    static func serverTLS(_ c: TestSupport.TestCertificates, name: String = "server", requireClient: Bool = false)
        -> DICOMTLSConfiguration
    {
        DICOMTLSConfiguration(
            trustRootsFile: c.pem("ca"), certificateFile: c.pem(name), privateKeyFile: c.key(name),
            requiresClientCertificate: requireClient)
    }

    static func clientTLS(_ c: TestSupport.TestCertificates, ca: String = "ca", identity: Bool = true)
        -> DICOMTLSConfiguration
    {
        DICOMTLSConfiguration(
            trustRootsFile: c.pem(ca), certificateFile: identity ? c.pem("client") : nil,
            privateKeyFile: identity ? c.key("client") : nil)
    }

    /// Our TLS server (port 0) for `body`.
    static func withTLSServer(
        _ tls: DICOMTLSConfiguration?, directory: String, artim: TimeAmount = .seconds(10),
        _ body: @Sendable (DICOMServer) async throws -> Void
    ) async throws {
        func configure(_ configuration: inout DICOMServer.Configuration) {
            configuration.tls = tls
            configuration.artimTimeout = artim
        }
        try await TestSupport.withServer(directory: directory, configure: configure, body)
    }

    static func expectCode(_ code: DICOMNetworkError.Code, _ body: () async throws -> Void) async {
        do {
            try await body()
            Issue.record("expected \(code), got success")
        } catch let error as DICOMNetworkError {
            #expect(error.code == code, "\(error)")
        } catch {
            Issue.record("expected \(code), got \(error)")
        }
    }

    // MARK: our client -> DCMTK storescp +tls (mutual TLS: storescp requires our certificate)

    @Test("C-ECHO and C-STORE to storescp +tls with mutual TLS; data sets arrive identical")
    func storeToStorescp() async throws {
        try await Self.withCertificates { c, dir in
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let files = Array(
                try await TestSupport.makeCorpus(in: dir + "/corpus").filter { $0.hasSuffix("-explicit-le.dcm") }
                    .prefix(5))
            try #require(!files.isEmpty)
            let port = try TestSupport.freePort()
            let storescp = try PeerProcess(
                "storescp",
                [
                    "-aet", "STORESCP", "-od", received, "--accept-all", "+tls", c.key("server"), c.pem("server"),
                    "+cf", c.pem("ca"), "-rc", "\(port)",
                ],
                logFile: dir + "/storescp.log")
            defer { storescp.kill() }
            try await TestSupport.waitForPort(port)
            let peer = DICOMPeer(host: "localhost", port: port, aeTitle: "STORESCP")
            #expect(try await Self.client(tls: Self.clientTLS(c)).echo(peer) == .success)
            let results = try await Self.client(tls: Self.clientTLS(c)).store(files: files, to: peer)
            for result in results {
                #expect(result.status == .success, "\(result.path): \(result.error ?? "")")
            }
            try TestSupport.expectIdenticalDataSets(files, receivedIn: received)
            // Without our certificate storescp (-rc) refuses the handshake: a named error, not a hang.
            await Self.expectCode(.tlsCertificateRequired) {
                _ = try await Self.client(tls: Self.clientTLS(c, identity: false)).echo(peer)
            }
        }
    }

    @Test("TLS client to a plain storescp: tlsPeerNotTLS; plain client to storescp +tls: tlsPeerExpectsTLS")
    func plainAndTLSMismatchWithStorescp() async throws {
        try await Self.withCertificates { c, dir in
            let plainPort = try TestSupport.freePort()
            let plain = try PeerProcess(
                "storescp", ["-aet", "STORESCP", "-od", dir, "\(plainPort)"], logFile: dir + "/plain.log")
            defer { plain.kill() }
            let tlsPort = try TestSupport.freePort()
            let secure = try PeerProcess(
                "storescp",
                [
                    "-aet", "STORESCP", "-od", dir, "+tls", c.key("server"), c.pem("server"), "+cf", c.pem("ca"), "-vc",
                    "\(tlsPort)",
                ],
                logFile: dir + "/tls.log")
            defer { secure.kill() }
            try await TestSupport.waitForPort(plainPort)
            try await TestSupport.waitForPort(tlsPort)
            await Self.expectCode(.tlsPeerNotTLS) {
                _ = try await Self.client(tls: Self.clientTLS(c)).echo(
                    DICOMPeer(host: "127.0.0.1", port: plainPort, aeTitle: "STORESCP"))
            }
            await Self.expectCode(.tlsPeerExpectsTLS) {
                _ = try await Self.client(tls: nil).echo(
                    DICOMPeer(host: "127.0.0.1", port: tlsPort, aeTitle: "STORESCP"))
            }
        }
    }

    // MARK: DCMTK clients -> our TLS server

    @Test("echoscu and storescu +tls to our TLS server (client certificate required)")
    func dcmtkClientsToOurServer() async throws {
        try await Self.withCertificates { c, dir in
            let files = Array(
                try await TestSupport.makeCorpus(in: dir + "/corpus").filter { $0.hasSuffix("-explicit-le.dcm") }
                    .prefix(3))
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            try await Self.withTLSServer(Self.serverTLS(c, requireClient: true), directory: received) { server in
                let port = "\(server.localPort)"
                let tls = ["+tls", c.key("client"), c.pem("client"), "+cf", c.pem("ca")]
                let echo = try await TestSupport.run("echoscu", ["-aec", "PXSCP"] + tls + ["127.0.0.1", port])
                #expect(echo.status == 0, "\(echo.output)")
                let store = try await TestSupport.run(
                    "storescu", ["-aec", "PXSCP"] + tls + ["127.0.0.1", port] + files)
                #expect(store.status == 0, "\(store.output)")
                // Anonymous TLS (no client certificate): refused by the handshake, and the server goes on.
                let anonymous = try await TestSupport.run(
                    "echoscu", ["-aec", "PXSCP", "+tla", "+cf", c.pem("ca"), "127.0.0.1", port])
                #expect(anonymous.status != 0, "\(anonymous.output)")
                let plain = try await TestSupport.run("echoscu", ["-aec", "PXSCP", "-to", "5", "127.0.0.1", port])
                #expect(plain.status != 0, "\(plain.output)")
                let again = try await TestSupport.run("echoscu", ["-aec", "PXSCP"] + tls + ["127.0.0.1", port])
                #expect(again.status == 0, "\(again.output)")
            }
            try TestSupport.expectIdenticalDataSets(files, receivedIn: received)
        }
    }

    // MARK: our client <-> our server

    @Test("our client and server: mutual TLS C-ECHO, by host name and by IP address")
    func ourClientToOurServer() async throws {
        try await Self.withCertificates { c, dir in
            try await Self.withTLSServer(Self.serverTLS(c, requireClient: true), directory: dir) { server in
                for host in ["localhost", "127.0.0.1"] {
                    let status = try await Self.client(tls: Self.clientTLS(c)).echo(
                        DICOMPeer(host: host, port: server.localPort, aeTitle: "PXSCP"))
                    #expect(status == .success)
                }
            }
        }
    }

    @Test("negative cases name the failure, and the server keeps serving the next good client")
    func negativeCases() async throws {
        try await Self.withCertificates { c, dir in
            try await Self.withTLSServer(Self.serverTLS(c, requireClient: true), directory: dir) { server in
                let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP")
                await Self.expectCode(.tlsUntrustedCertificate) {
                    _ = try await Self.client(tls: Self.clientTLS(c, ca: "other-ca")).echo(peer)
                }
                await Self.expectCode(.tlsCertificateRequired) {
                    _ = try await Self.client(tls: Self.clientTLS(c, identity: false)).echo(peer)
                }
                await Self.expectCode(.tlsPeerExpectsTLS) { _ = try await Self.client(tls: nil).echo(peer) }
                let good = try await Self.client(tls: Self.clientTLS(c)).echo(peer)
                #expect(good == .success)
            }
            // A server whose certificate has expired, is from another CA, or does not name the host.
            for (name, code) in [
                ("expired", DICOMNetworkError.Code.tlsExpiredCertificate), ("other", .tlsUntrustedCertificate),
                ("client", .tlsHostnameMismatch),
            ] {
                try await Self.withTLSServer(Self.serverTLS(c, name: name), directory: dir) { server in
                    let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP")
                    await Self.expectCode(code) { _ = try await Self.client(tls: Self.clientTLS(c)).echo(peer) }
                    // Verification off (asked for): the same server is reachable.
                    var none = Self.clientTLS(c)
                    none.peerVerification = .none
                    let unchecked = try await Self.client(tls: none).echo(peer)
                    #expect(unchecked == .success, "\(name)")
                }
            }
            // TLS client to our plain server.
            try await Self.withTLSServer(nil, directory: dir) { server in
                let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP")
                await Self.expectCode(.tlsPeerNotTLS) { _ = try await Self.client(tls: Self.clientTLS(c)).echo(peer) }
                let plain = try await Self.client(tls: nil).echo(peer)
                #expect(plain == .success)
            }
        }
    }

    @Test("a peer that accepts TCP but never answers the handshake: tlsHandshakeTimeout")
    func handshakeTimeout() async throws {
        try await Self.withCertificates { c, _ in
            let (fd, port) = try TestSupport.silentListener()
            defer { close(fd) }
            let started = ContinuousClock.now
            await Self.expectCode(.tlsHandshakeTimeout) {
                _ = try await Self.client(tls: Self.clientTLS(c), connectTimeout: .seconds(1)).echo(
                    DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "X"))
            }
            // The error code says which timer ended it; the bound guards against a hang, with room for load.
            #expect(ContinuousClock.now - started < .seconds(20))
        }
    }

    @Test("missing TLS files are a tlsConfiguration error before any connection")
    func badFiles() async throws {
        try await Self.withCertificates { c, dir in
            var tls = Self.clientTLS(c)
            tls.trustRootsFile = dir + "/no-such-ca.pem"
            await Self.expectCode(.tlsConfiguration) {
                _ = try await Self.client(tls: tls).echo(DICOMPeer(host: "127.0.0.1", port: 1, aeTitle: "X"))
            }
        }
    }

    // MARK: pynetdicom

    @Test("pynetdicom SCU with an ssl context to our TLS server, and our client to a pynetdicom TLS SCP (mutual)")
    func pynetdicomBothWays() async throws {
        try await Self.withCertificates { c, dir in
            let script = TestSupport.repositoryRoot + "/scripts/pynetdicom-tls.py"
            try await Self.withTLSServer(Self.serverTLS(c, requireClient: true), directory: dir) { server in
                let ok = try await TestSupport.run(
                    TestSupport.python,
                    [
                        script, "scu", "127.0.0.1", "\(server.localPort)", "PXSCP", "--ca", c.pem("ca"), "--cert",
                        c.pem("client"), "--key", c.key("client"),
                    ])
                #expect(ok.status == 0 && ok.output.contains("\"status\": 0"), "\(ok.output)")
                let noCert = try await TestSupport.run(
                    TestSupport.python,
                    [script, "scu", "127.0.0.1", "\(server.localPort)", "PXSCP", "--ca", c.pem("ca")])
                #expect(noCert.status != 0, "\(noCert.output)")
            }
            let scp = try PeerProcess(
                TestSupport.python,
                [
                    script, "scp", "0", "PYTLS", "--cert", c.pem("server"), "--key", c.key("server"), "--ca",
                    c.pem("ca"), "--require-client-cert",
                ],
                logFile: dir + "/pyscp.log")
            defer { scp.kill() }
            let ready = try await scp.waitForEvent { $0["event"]?.stringValue == "ready" }
            let port = try #require(PynetdicomInteropTests.number(ready["port"]))
            let peer = DICOMPeer(host: "localhost", port: port, aeTitle: "PYTLS")
            let status = try await Self.client(tls: Self.clientTLS(c)).echo(peer)
            #expect(status == .success)
            _ = try await scp.waitForEvent {
                $0["event"]?.stringValue == "echo" && $0["callingAETitle"]?.stringValue == "PXTLS"
            }
            await Self.expectCode(.tlsCertificateRequired) {
                _ = try await Self.client(tls: Self.clientTLS(c, identity: false)).echo(peer)
            }
        }
    }
}
