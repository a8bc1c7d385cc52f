import DICOMData
import Foundation
import Testing

/// End-to-end runs of the built px executables against real DCMTK peers on free loopback ports:
/// dcmqrscp (started with scripts/dcmqrscp-start.sh, fork mode, loaded with scripts/make-qr-corpus.py's
/// corpus) and px-listen as the C-MOVE destination.
@Suite(.serialized) struct IntegrationTests {
    @Test func echoFailureModes() throws {
        guard PeerHarness.requireTools(["echoscu"]) else { return }
        let refused = try PeerHarness.run("px-echo", ["127.0.0.1:\(PeerHarness.freePort())"])
        #expect(refused.exitCode == 1)
        #expect(refused.json?["error"]?["code"]?.stringValue == "connectionRefused")

        let unknown = try PeerHarness.run("px-echo", ["no-such-host.invalid:104"])
        #expect(unknown.exitCode == 1)
        #expect(unknown.json?["error"]?["code"]?.stringValue == "unknownHost")

        let silent = PeerHarness.silentListener()
        defer { close(silent.fd) }
        let timeout = try PeerHarness.run("px-echo", ["127.0.0.1:\(silent.port)", "--acse-timeout", "1"])
        #expect(timeout.exitCode == 75)
        #expect(timeout.json?["error"]?["code"]?.stringValue == "timeout")

        let usage = try PeerHarness.run("px-echo", ["127.0.0.1:notaport"])
        #expect(usage.exitCode == 64)
        let native = try PeerHarness.run("px-echo", ["--backend", "native", "127.0.0.1:104"])
        #expect(native.exitCode == 69)
        let missing = try PeerHarness.run("px-echo", ["127.0.0.1:104", "--executable", "/nonexistent/echoscu"])
        #expect(missing.exitCode == 69)
        #expect(missing.json?["error"]?["message"]?.stringValue?.contains("apt-get install dcmtk") == true)
    }

    @Test func echoFindMoveListenAgainstDcmqrscp() throws {
        guard PeerHarness.requireTools(["dcmqrscp", "storescp", "storescu", "echoscu", "findscu", "movescu"]) else { return }
        let work = PeerHarness.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listenPort = PeerHarness.freePort()
        let qrPort = PeerHarness.freePort()
        let scripts = PeerHarness.root + "/scripts/"

        // Corpus and Q/R peer.
        let corpus = try PeerHarness.run(PeerHarness.root + "/.venv/bin/python", [scripts + "make-qr-corpus.py", work + "/corpus"])
        try #require(corpus.exitCode == 0, "make-qr-corpus.py failed: \(corpus.stderr)")
        let start = try PeerHarness.run(
            scripts + "dcmqrscp-start.sh", [work + "/qr", String(qrPort)],
            environment: ["PX_QR_DESTS": "PXLISTEN=127.0.0.1:\(listenPort)"])
        defer { _ = try? PeerHarness.run(scripts + "peer-stop.sh", [work + "/qr/dcmqrscp.pid"]) }
        try #require(start.exitCode == 0, "dcmqrscp-start.sh failed: \(start.stderr)")
        let load = try PeerHarness.run(scripts + "dcmqrscp-load.sh", [work + "/qr", work + "/corpus"])
        try #require(load.exitCode == 0, "dcmqrscp-load.sh failed: \(load.stderr)")
        let peer = "QRSCP@127.0.0.1:\(qrPort)"

        // Echo: success and rejection.
        let echo = try PeerHarness.run("px-echo", [peer])
        #expect(echo.exitCode == 0)
        #expect(echo.json?["data"]?["dimseStatus"]?["code"]?.stringValue == "0x0000")
        let rejected = try PeerHarness.run("px-echo", ["WRONG@127.0.0.1:\(qrPort)"])
        #expect(rejected.exitCode == 1)
        #expect(rejected.json?["error"]?["code"]?.stringValue == "associationRejected")
        #expect(rejected.json?["error"]?["details"]?["reason"]?.stringValue == "Called AE Title Not Recognized")

        // Find: two-phase pypx shape, names in three character sets, no matches, NDJSON.
        let find = try PeerHarness.run("px-find", [peer])
        #expect(find.exitCode == 0)
        let studies = find.json?["data"]?.arrayValue ?? []
        #expect(studies.count == 5)
        let names = Set(studies.compactMap { $0["PatientName"]?["value"]?.stringValue })
        #expect(names.contains("Müller^Jürgen"))
        #expect(names.contains("山田^太郎=やまだ^たろう"))
        #expect(studies.allSatisfy { ($0["series"]?.arrayValue?.count ?? 0) >= 1 })
        let none = try PeerHarness.run("px-find", [peer, "--level", "study", "--PatientID", "NOBODY"])
        #expect(none.exitCode == 0)
        #expect(none.json?["data"]?.arrayValue?.isEmpty == true)
        let ndjson = try PeerHarness.run("px-find", [peer, "--level", "image", "--format", "ndjson"])
        #expect(ndjson.stdout.split(separator: "\n").count == 7)
        let wildcard = try PeerHarness.run("px-find", [peer, "--level", "patient", "--model", "patient", "-k", "PatientName=Doe*"])
        #expect(wildcard.json?["data"]?.arrayValue?.count == 1)

        // Move to an unknown destination.
        let uid = studies.first?["StudyInstanceUID"]?["value"]?.stringValue ?? ""
        let unknown = try PeerHarness.run("px-move", [peer, "--destination", "NOSUCHAE", "--StudyInstanceUID", uid])
        #expect(unknown.exitCode == 1)
        #expect(unknown.json?["error"]?["details"]?["status"]?.stringValue == "0xa801")

        // px-find | px-move into px-listen; every received dataset equals the one loaded.
        let received = work + "/received"
        let listener = Process()
        listener.executableURL = URL(fileURLWithPath: PeerHarness.binDirectory + "/px-listen")
        listener.arguments = ["--port", String(listenPort), "--aet", "PXLISTEN", "-d", received]
        FileManager.default.createFile(atPath: work + "/events.ndjson", contents: nil)
        listener.standardOutput = FileHandle(forWritingAtPath: work + "/events.ndjson")
        listener.standardError = FileHandle.nullDevice
        try listener.run()
        defer {
            if listener.isRunning { listener.interrupt() }
            listener.waitUntilExit()
        }
        var ready = false
        for _ in 0..<50 where !ready {
            ready = (try PeerHarness.run("/usr/bin/echoscu", ["-aec", "PXLISTEN", "127.0.0.1", String(listenPort)])).exitCode == 0
            if !ready { usleep(100_000) }
        }
        try #require(ready, "px-listen did not answer C-ECHO")
        let move = try PeerHarness.run("px-move", [peer, "--destination", "PXLISTEN"], stdin: find.stdout)
        #expect(move.exitCode == 0)
        #expect(move.json?["data"]?["completed"] == .number("6"))
        usleep(300_000)
        listener.interrupt()
        listener.waitUntilExit()
        let lines = String(decoding: FileManager.default.contents(atPath: work + "/events.ndjson") ?? Data(), as: UTF8.self).split(separator: "\n")
        let parsed = lines.compactMap { try? JSONParser.parse(String($0)) }
        let instances = parsed.filter { $0["event"]?.stringValue == "instanceReceived" }
        #expect(instances.count == 6)
        #expect(parsed.filter { $0["event"]?.stringValue == "seriesComplete" }.count == 5)

        var loaded: [String: JSONValue] = [:]
        for file in try FileManager.default.subpathsOfDirectory(atPath: work + "/corpus") where file.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: work + "/corpus/" + file).dataSet
            loaded[ds.string(.sopInstanceUID) ?? ""] = ds.dicomJSON()
        }
        for event in instances {
            let path = try #require(event["path"]?.stringValue)
            #expect(path.hasPrefix(received + "/"))
            let ds = try Part10File(contentsOf: path).dataSet
            #expect(loaded[ds.string(.sopInstanceUID) ?? "?"] == ds.dicomJSON(), "dataset differs: \(path)")
        }
    }
}
