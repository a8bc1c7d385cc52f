import ArgumentParser
import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXPlaces
import PXTestSupport
import Testing

/// Storage commitment's options: px-push's `--commit*`, the receivers' `--commit-destination`, and the config's
/// `[local] port` that px-push listens on by default.
@Suite(.timeLimit(.minutes(2))) struct CommitOptionsTests {
    @Test("[local] port is the local port, before dcm's [local_nodes.default] port; out of range is an error")
    func localPort() throws {
        #expect(try PXConfig(parsing: "[local]\nae_title = \"PX\"\nport = 11199").localPort == 11199)
        let both = try PXConfig(
            parsing: "[local]\nport = 11199\n[local_nodes.default]\nae_title = \"A\"\nport = 11112")
        #expect(both.localPort == 11199)
        #expect(try PXConfig(parsing: "[local_nodes.default]\nae_title = \"A\"\nport = 11112").localPort == 11112)
        #expect(try PXConfig(parsing: "[local]\nae_title = \"PX\"").localPort == nil)
        let error = #expect(throws: PXError.self) { try PXConfig(parsing: "[local]\nport = 70000") }
        #expect(error?.message == "config: [local] port 70000 is out of range")
    }

    @Test("--commit gives settings with the timeout and port; its options without it are a usage error")
    func commitOptions() throws {
        let options = try CommitOptions.parse(["--commit", "--commit-timeout", "5", "--commit-port", "11200"])
        #expect(try options.settings() == CommitmentSettings(timeout: 5, listenPort: 11200))
        #expect(try CommitOptions.parse([]).settings() == nil)
        #expect(throws: (any Error).self) { try CommitOptions.parse(["--commit-port", "11200"]) }
        #expect(throws: (any Error).self) { try CommitOptions.parse(["--commit", "--commit-timeout", "0"]) }
        #expect(throws: (any Error).self) { try CommitOptions.parse(["--commit", "--commit-port", "0"]) }
    }

    @Test("--commit-destination AE=host:port is a destination by AE title; another form is a usage error")
    func commitDestinations() throws {
        let options = try ServerOptions.parse(["--commit-destination", "ORTHANC=127.0.0.1:4242"])
        let node = try #require(options.commitmentDestinations().first { $0.key == "ORTHANC" }?.value)
        #expect(node.host == "127.0.0.1")
        #expect(node.port == 4242)
        #expect(node.calledAETitle == "ORTHANC")
        #expect(throws: (any Error).self) { try ServerOptions.parse(["--commit-destination", "127.0.0.1:4242"]) }
        #expect(throws: (any Error).self) { try ServerOptions.parse(["--commit-destination", "A=host"]) }
    }

    @Test(
        "px-listen --backend dcmtk --commit-destination fails with backendUnavailable: storescp cannot commit",
        .tags(.integration), .integrationTier)
    func listenDCMTK() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let log = dir + "/listen.ndjson"
            let listener = try PeerProcess(
                TestSupport.binDirectory + "/px-listen",
                [
                    "--backend", "dcmtk", "--commit-destination", "A=127.0.0.1:104", "-p",
                    String(try TestSupport.freePort()), "-d", dir + "/received",
                ],
                logFile: log, errorFile: log + ".stderr")
            // It must refuse at once; were it to listen, it is stopped after the bound and the test fails.
            let exited = await TestSupport.poll(seconds: 20) { !listener.isRunning }
            let status = await listener.stop(signal: SIGTERM)
            #expect(exited, "px-listen --backend dcmtk --commit-destination kept running")
            #expect(status == 69)
            let text = String(decoding: FileManager.default.contents(atPath: log) ?? Data(), as: UTF8.self)
            let envelope = try JSONParser.parse(String(text.split(separator: "\n").last ?? ""))
            #expect(envelope["error"]?["code"]?.stringValue == "backendUnavailable", "\(text)")
        }
    }
}
