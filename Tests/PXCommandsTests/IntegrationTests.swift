import DICOMData
import Foundation
import PXTestSupport
import Testing

/// End-to-end runs of the built px executables against real DCMTK peers on free loopback ports:
/// dcmqrscp (started with scripts/dcmqrscp-start.sh, fork mode, loaded with scripts/make-qr-corpus.py's
/// corpus) and px-listen as the C-MOVE destination.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct IntegrationTests {
    static let backends = ["dcmtk", "native"]

    /// The envelope without `backend` and `command`: what must not differ between backends.
    static func comparable(_ run: PeerHarness.Run) -> [JSONValue] {
        run.stdout.split(separator: "\n").compactMap { line -> JSONValue? in
            guard let value = try? JSONParser.parse(String(line)), case .object(let members) = value else { return nil }
            return .object(members.filter { $0.key != "backend" && $0.key != "command" })
        }
    }

    @Test(arguments: backends) func echoFailureModes(backend: String) async throws {
        guard PeerHarness.requireTools(["echoscu"]) else { return }
        let b = ["--backend", backend]
        let closed = try TestSupport.holdPort()
        defer { closed.release() }
        let refused = try await PeerHarness.run("px-echo", ["127.0.0.1:\(closed.port)"] + b)
        #expect(refused.exitCode == 1)
        #expect(refused.json?["error"]?["code"]?.stringValue == "connectionRefused")
        #expect(refused.json?["backend"]?.stringValue == backend)

        let unknown = try await PeerHarness.run("px-echo", ["no-such-host.invalid:104"] + b)
        #expect(unknown.exitCode == 1)
        #expect(unknown.json?["error"]?["code"]?.stringValue == "unknownHost")

        let silent = try TestSupport.silentListener()
        defer { close(silent.fd) }
        let timeout = try await PeerHarness.run("px-echo", ["127.0.0.1:\(silent.port)", "--acse-timeout", "1"] + b)
        #expect(timeout.exitCode == 75)
        #expect(timeout.json?["error"]?["code"]?.stringValue == "timeout")
        #expect(timeout.json?["error"]?["details"]?["timeout"]?.stringValue == "ACSE")

        let usage = try await PeerHarness.run("px-echo", ["127.0.0.1:notaport"] + b)
        #expect(usage.exitCode == 64)
    }

    /// px-echo holds one association, so it starts one NIO event loop thread, not one per core (a 64-core host
    /// would get 64); `NIO_SINGLETON_GROUP_LOOP_COUNT` still sets the number. The loops are counted in
    /// /proc while px-echo waits for an A-ASSOCIATE-AC that never comes: it has connected, so its group is up.
    @Test func eventLoopThreadsOfAnEcho() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-loops-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        for (environment, expected) in [([String: String](), 1), (["NIO_SINGLETON_GROUP_LOOP_COUNT": "3"], 3)] {
            let silent = try TestSupport.silentListener()
            defer { close(silent.fd) }
            let echo = try PeerProcess(
                PeerHarness.path("px-echo"),
                ["127.0.0.1:\(silent.port)", "--backend", "native", "--acse-timeout", "60"],
                logFile: work + "/echo-\(expected).log", environment: environment)
            // The connection waits in the listener's backlog once px-echo has connected. The PID is known only
            // once the harness has seen the spawn, which may come after the child's connect: wait for both.
            let connected = await TestSupport.poll(seconds: 30) {
                var descriptor = pollfd(fd: silent.fd, events: Int16(POLLIN), revents: 0)
                return echo.processIdentifier != nil && poll(&descriptor, 1, 0) == 1
            }
            let loops = echo.processIdentifier.map(Self.eventLoopThreads)
            await echo.stop(signal: SIGKILL)
            #expect(connected, "px-echo did not connect: \(echo.log)")
            #expect(loops == expected, "environment \(environment)")
        }
    }

    /// The threads of `pid` that NIO's singleton event loop group started (named `NIO-SGLTN-G-#N`).
    static func eventLoopThreads(of pid: pid_t) -> Int {
        let tasks = "/proc/\(pid)/task"
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? []
        return threads.filter { thread in
            let name = (try? String(contentsOfFile: "\(tasks)/\(thread)/comm", encoding: .utf8)) ?? ""
            return name.hasPrefix("NIO-SGLTN-")
        }.count
    }

    @Test func backendSelection() async throws {
        guard PeerHarness.requireTools(["echoscu"]) else { return }
        let closed = try TestSupport.holdPort()
        defer { closed.release() }
        let port = String(closed.port)
        // An --executable that cannot run: `dcmtk` names it (69); `auto` runs the echoscu on PATH instead.
        let missing = try await PeerHarness.run(
            "px-echo", ["127.0.0.1:" + port, "--executable", "/nonexistent/echoscu", "--backend", "dcmtk"])
        #expect(missing.exitCode == 69)
        #expect(missing.json?["error"]?["message"]?.stringValue?.contains("/nonexistent/echoscu") == true)
        #expect(missing.json?["error"]?["message"]?.stringValue?.contains("apt-get install dcmtk") == true)
        let carried = try await PeerHarness.run(
            "px-echo", ["127.0.0.1:" + port, "--executable", "/nonexistent/echoscu"])
        #expect(carried.json?["backend"]?.stringValue == "dcmtk")
        #expect(carried.json?["error"]?["code"]?.stringValue == "connectionRefused")
        // Without DCMTK on PATH: `dcmtk` is a missing tool (69), `auto` falls back to native.
        let noPath = ["PATH": "/nonexistent"]
        let dcmtk = try await PeerHarness.run(
            "px-echo", ["127.0.0.1:" + port, "--backend", "dcmtk"], environment: noPath)
        #expect(dcmtk.exitCode == 69)
        #expect(dcmtk.json?["error"]?["code"]?.stringValue == "toolMissing")
        let auto = try await PeerHarness.run("px-echo", ["127.0.0.1:" + port], environment: noPath)
        #expect(auto.json?["backend"]?.stringValue == "native")
        #expect(auto.json?["error"]?["code"]?.stringValue == "connectionRefused")
        let onPath = try await PeerHarness.run("px-echo", ["127.0.0.1:" + port])
        #expect(onPath.json?["backend"]?.stringValue == "dcmtk")
    }

    /// Every query and move below runs on both backends; each must pass its own checks, and the
    /// JSON of the two runs must be equal apart from `backend` and `command`.
    @Test func echoFindMoveListenAgainstDcmqrscp() async throws {
        guard PeerHarness.requireTools(["dcmqrscp", "storescp", "storescu", "echoscu", "findscu", "movescu"]) else {
            return
        }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listenPort = try TestSupport.freePort()
        let qrPort = try TestSupport.freePort()
        let scripts = TestSupport.repositoryRoot + "/scripts/"

        // Corpus and Q/R peer.
        let corpus = try await PeerHarness.run(TestSupport.python, [scripts + "make-qr-corpus.py", work + "/corpus"])
        try #require(corpus.exitCode == 0, "make-qr-corpus.py failed: \(corpus.stderr)")
        let start = try await PeerHarness.run(
            scripts + "dcmqrscp-start.sh", [work + "/qr", String(qrPort)],
            environment: ["PX_QR_DESTS": "PXLISTEN=127.0.0.1:\(listenPort)"])
        defer { TestSupport.killPeer(pidFile: work + "/qr/dcmqrscp.pid") }
        try #require(start.exitCode == 0, "dcmqrscp-start.sh failed: \(start.stderr)")
        let load = try await PeerHarness.run(scripts + "dcmqrscp-load.sh", [work + "/qr", work + "/corpus"])
        try #require(load.exitCode == 0, "dcmqrscp-load.sh failed: \(load.stderr)")
        let peer = "QRSCP@127.0.0.1:\(qrPort)"

        var loaded: [String: JSONValue] = [:]
        for file in try FileManager.default.subpathsOfDirectory(atPath: work + "/corpus") where file.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: work + "/corpus/" + file).dataSet
            loaded[ds.string(.sopInstanceUID) ?? ""] = ds.dicomJSON()
        }

        // Outputs per backend, by step name, for the differential check at the end.
        var outputs: [String: [String: [JSONValue]]] = [:]
        for backend in Self.backends {
            let b = ["--backend", backend]
            var mine: [String: [JSONValue]] = [:]
            func step(
                _ name: String, _ command: String, _ arguments: [String], stdin: String? = nil,
                environment: [String: String] = [:]
            ) async throws -> PeerHarness.Run {
                let run = try await PeerHarness.run(command, arguments + b, stdin: stdin, environment: environment)
                #expect(run.json?["backend"]?.stringValue == backend, "\(name): \(run.stdout) \(run.stderr)")
                mine[name] = Self.comparable(run)
                return run
            }

            // Echo: success and rejection.
            let echo = try await step("echo", "px-echo", [peer])
            #expect(echo.exitCode == 0)
            #expect(echo.json?["data"]?["dimseStatus"]?["code"]?.stringValue == "0x0000")
            let rejected = try await step("rejected", "px-echo", ["WRONG@127.0.0.1:\(qrPort)"])
            #expect(rejected.exitCode == 1)
            #expect(rejected.json?["error"]?["code"]?.stringValue == "associationRejected")
            #expect(rejected.json?["error"]?["details"]?["reason"]?.stringValue == "Called AE Title Not Recognized")

            // A node from the config file, and pypx 0.8's flags.
            let config = work + "/config.toml"
            #expect(
                FileManager.default.createFile(
                    atPath: config,
                    contents: Data(
                        "[local]\nae_title = \"CFGSCU\"\n\n[nodes.archive]\nhost = \"127.0.0.1\"\nport = \(qrPort)\nae_title = \"QRSCP\"\n"
                            .utf8)))
            let configured = try await step("config", "px-echo", ["archive"], environment: ["PX_CONFIG": config])
            #expect(configured.exitCode == 0, "\(configured.stdout) \(configured.stderr)")
            #expect(configured.json?["data"]?["callingAETitle"]?.stringValue == "CFGSCU")
            let pypx08 = try await step(
                "pypx08", "px-find",
                [
                    "--aec", "QRSCP", "--aet", "CHIPS", "--serverIP", "127.0.0.1", "--serverPort", String(qrPort),
                    "--patientID", "PAT002",
                ])
            #expect(pypx08.exitCode == 0)
            #expect(pypx08.json?["data"]?.arrayValue?.first?["PatientName"]?["value"]?.stringValue == "Müller^Jürgen")

            // Find: two-phase pypx shape, names in three character sets, no matches, NDJSON, DICOM JSON.
            let find = try await step("find", "px-find", [peer])
            #expect(find.exitCode == 0)
            let studies = find.json?["data"]?.arrayValue ?? []
            #expect(studies.count == 5)
            let names = Set(studies.compactMap { $0["PatientName"]?["value"]?.stringValue })
            #expect(names.contains("Müller^Jürgen"))
            #expect(names.contains("山田^太郎=やまだ^たろう"))
            #expect(studies.allSatisfy { ($0["series"]?.arrayValue?.count ?? 0) >= 1 })
            let none = try await step("none", "px-find", [peer, "--level", "study", "--PatientID", "NOBODY"])
            #expect(none.exitCode == 0)
            #expect(none.json?["data"]?.arrayValue?.isEmpty == true)
            // (with TMPDIR set: the DCMTK backend's response folder goes there, and is removed)
            let scratch = work + "/tmp-\(backend)"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            let ndjson = try await step(
                "ndjson", "px-find", [peer, "--level", "image", "--format", "ndjson"], environment: ["TMPDIR": scratch])
            #expect(ndjson.stdout.split(separator: "\n").count == 7)
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch).isEmpty)
            if backend == "dcmtk" {
                // TMPDIR is where findscu's responses (and px-find's spooled answer) go: a missing one is a clear
                // error naming it, not a silent fallback.
                let missing = try await PeerHarness.run(
                    "px-find", [peer] + b, environment: ["TMPDIR": work + "/no-such-dir"])
                #expect(missing.exitCode != 0)
                let message = missing.json?["error"]?["message"]?.stringValue ?? ""
                #expect(message.contains("temporary") && message.contains("no-such-dir"), "\(missing.stdout)")
            }
            let wildcard = try await step(
                "wildcard", "px-find", [peer, "--level", "patient", "--model", "patient", "-k", "PatientName=Doe*"])
            #expect(wildcard.json?["data"]?.arrayValue?.count == 1)
            let series = try await step(
                "series", "px-find", [peer, "--level", "series", "--format", "dicom-json", "-k", "Modality=MR"])
            #expect(series.json?["data"]?.arrayValue?.count == 2)
            let limited = try await step(
                "limit", "px-find", [peer, "--level", "image", "--format", "ndjson", "--limit", "2"])
            #expect(limited.stdout.split(separator: "\n").count == 3, "\(limited.stdout)")
            // --format tree: dcmqrscp leaves the NumberOf*Related* counts empty; px counts one level down (issue 23).
            for arguments in [[], ["--level", "study"]] {
                let tree = try await PeerHarness.run("px-find", [peer, "--format", "tree"] + arguments + b)
                #expect(tree.exitCode == 0, "\(tree.stderr)")
                #expect(tree.stdout.hasPrefix("4 patients | 5 studies | 5 series | 6 instances\n"), "\(tree.stdout)")
                #expect(!tree.stdout.contains("? "), "\(tree.stdout)")
                #expect(tree.stdout.contains("1 series, 2 instances"), "\(tree.stdout)")
            }

            // Move to an unknown destination.
            let uid = studies.first?["StudyInstanceUID"]?["value"]?.stringValue ?? ""
            let unknown = try await step(
                "unknownDestination", "px-move", [peer, "--destination", "NOSUCHAE", "--StudyInstanceUID", uid])
            #expect(unknown.exitCode == 1)
            #expect(unknown.json?["error"]?["details"]?["status"]?.stringValue == "0xa801")

            // px-find | px-move into px-listen (same backend); every received dataset equals the one loaded.
            let received = work + "/received-" + backend
            let events = work + "/events-\(backend).ndjson"
            let listener = try PeerProcess(
                TestSupport.binDirectory + "/px-listen",
                ["--port", String(listenPort), "--aet", "PXLISTEN", "-d", received] + b, logFile: events,
                errorFile: "/dev/null")
            defer { listener.kill() }
            let ready = try await TestSupport.waitForEcho(port: listenPort, aeTitle: "PXLISTEN", seconds: 5)
            try #require(ready, "px-listen (\(backend)) did not answer C-ECHO: \(listener.failure ?? "")")
            let move = try await step("move", "px-move", [peer, "--destination", "PXLISTEN"], stdin: find.stdout)
            #expect(move.exitCode == 0)
            #expect(move.json?["data"]?["completed"] == .number("6"))
            // px-listen (dcmtk) reports an instance once storescp has written it: stop it after the last one.
            let reported = await listener.waitFor(seconds: 10) {
                listener.log.components(separatedBy: "\"instanceReceived\"").count - 1 >= 6
            }
            #expect(reported, "px-listen (\(backend)) reported fewer than 6 instances")
            await listener.stop(signal: SIGINT)
            let lines = String(decoding: FileManager.default.contents(atPath: events) ?? Data(), as: UTF8.self).split(
                separator: "\n")
            let parsed = lines.compactMap { try? JSONParser.parse(String($0)) }
            let instances = parsed.filter { $0["event"]?.stringValue == "instanceReceived" }
            #expect(instances.count == 6)
            #expect(parsed.filter { $0["event"]?.stringValue == "seriesComplete" }.count == 5)
            for event in instances {
                let path = try #require(event["path"]?.stringValue)
                #expect(path.hasPrefix(received + "/"))
                let ds = try Part10File(contentsOf: path).dataSet
                #expect(loaded[ds.string(.sopInstanceUID) ?? "?"] == ds.dicomJSON(), "dataset differs: \(path)")
            }
            outputs[backend] = mine
        }

        // The differential check: same JSON from both backends, step by step.
        let dcmtk = outputs["dcmtk"] ?? [:]
        let native = outputs["native"] ?? [:]
        #expect(Set(dcmtk.keys) == Set(native.keys))
        for (name, expected) in dcmtk.sorted(by: { $0.key < $1.key }) {
            #expect(native[name] == expected, "\(name): native JSON differs from dcmtk JSON")
        }
    }
}
