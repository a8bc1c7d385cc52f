import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-echo with several peers and with `--all-nodes` (issue 34): every peer checked in one run, each with its
/// own outcome in `data.peers` in the order given, exit 0 only when all answered.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(3)))
struct EchoManyTests {
    @Test func severalPeersEachWithItsOutcome() async throws {
        guard PeerHarness.requireTools(["storescp", "echoscu"]) else { return }
        try await TestSupport.withTemporaryDirectory(prefix: "px-echomany-") { work in
            let port = try TestSupport.freePort()
            let storescp = try PeerProcess("storescp", ["-od", work, String(port)], logFile: work + "/storescp.log")
            defer { storescp.kill() }
            #expect(try await TestSupport.waitForEcho(port: port, aeTitle: "STORESCP"))
            let closed = try TestSupport.freePort()
            let good = "STORESCP@127.0.0.1:\(port)"
            let down = "127.0.0.1:\(closed)"
            for backend in ["native", "dcmtk"] {
                let all = try await PeerHarness.run("px-echo", [good, "localhost:\(port)", "--backend", backend])
                #expect(all.exitCode == 0, "\(backend): \(all.stdout) \(all.stderr)")
                let peers = all.json?["data"]?["peers"]?.arrayValue ?? []
                #expect(peers.map { $0["peer"]?.stringValue } == [good, "localhost:\(port)"], "\(all.stdout)")
                #expect(peers.allSatisfy { $0["data"]?["dimseStatus"]?["code"]?.stringValue == "0x0000" })
                #expect(all.json?["data"]?["succeeded"]?.intValue == 2)

                let mixed = try await PeerHarness.run("px-echo", [down, good, "--backend", backend])
                #expect(mixed.exitCode == 1, "\(backend): \(mixed.stdout)")
                #expect(mixed.json?["error"]?["code"]?.stringValue == "partialFailure")
                let outcomes = mixed.json?["data"]?["peers"]?.arrayValue ?? []
                #expect(outcomes.count == 2)
                #expect(outcomes.first?["peer"]?.stringValue == down)
                #expect(outcomes.first?["error"]?["code"]?.stringValue == "connectionRefused", "\(mixed.stdout)")
                #expect(outcomes.last?["status"]?.stringValue == "success")
                #expect(mixed.json?["data"]?["failed"]?.intValue == 1)
            }
        }
    }

    @Test func allNodesChecksEveryNodeOfTheConfig() async throws {
        guard PeerHarness.requireTools(["storescp", "echoscu"]) else { return }
        try await TestSupport.withTemporaryDirectory(prefix: "px-echoall-") { work in
            let port = try TestSupport.freePort()
            let storescp = try PeerProcess("storescp", ["-od", work, String(port)], logFile: work + "/storescp.log")
            defer { storescp.kill() }
            #expect(try await TestSupport.waitForEcho(port: port, aeTitle: "STORESCP"))
            let closed = try TestSupport.freePort()
            let config = work + "/px.toml"
            try """
            [nodes.pacs]
            host = "127.0.0.1"
            port = \(port)
            ae_title = "STORESCP"

            [nodes.old]
            host = "127.0.0.1"
            port = \(closed)
            ae_title = "OLD"
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let run = try await PeerHarness.run("px-echo", ["--all-nodes"], environment: ["PX_CONFIG": config])
            #expect(run.exitCode == 1, "\(run.stdout)")
            let peers = run.json?["data"]?["peers"]?.arrayValue ?? []
            // By name: old, pacs.
            #expect(peers.map { $0["peer"]?.stringValue } == ["old", "pacs"], "\(run.stdout)")
            #expect(peers.first?["error"]?["code"]?.stringValue == "connectionRefused")
            #expect(peers.last?["data"]?["calledAETitle"]?.stringValue == "STORESCP")

            // Peers and --all-nodes together, or a config without nodes: usage errors with the envelope.
            let both = try await PeerHarness.run(
                "px-echo", ["--all-nodes", "pacs"], environment: ["PX_CONFIG": config])
            #expect(both.exitCode == 64 && both.json?["error"]?["code"]?.stringValue == "usage", "\(both.stdout)")
            try "[local]\nae_title = \"ME\"\n".write(toFile: config, atomically: true, encoding: .utf8)
            let none = try await PeerHarness.run("px-echo", ["--all-nodes"], environment: ["PX_CONFIG": config])
            #expect(none.exitCode == 64, "\(none.stdout)")
            #expect(none.json?["error"]?["message"]?.stringValue?.contains("names no [nodes.NAME]") == true)
        }
    }
}
