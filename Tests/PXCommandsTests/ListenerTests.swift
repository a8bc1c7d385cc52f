import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-listen as a long-running receiver (issue 5), against real senders (storescu, pynetdicom) on
/// loopback: received data equals sent data, hostile values stay inside the root, a full disk is a
/// failure status and nothing partial, silent and aborting senders, 16 parallel senders, SIGTERM,
/// and the once-per-series hook.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct ListenerTests {
    static let backends = ["native", "dcmtk"]
    static let tools = ["storescu", "echoscu", "dcmdump"]

    /// storescu then pynetdicom send the same corpus: every data set arrives unchanged, the pypx info files
    /// exist, the hook runs once per series, and the second copy is reported as a kept duplicate.
    @Test(arguments: backends) func storescuAndPynetdicomIntoTheTree(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let corpus = try await ListenerFiles.makeCorpus(["many", "12", "3", work + "/corpus"])
        let sent = try ListenerFiles.dataSets(corpus)
        let root = work + "/root"
        let hookLog = work + "/hook.log"
        let listener = try await ListenerProcess.start(
            backend: backend, root: root, work: work,
            extra: [
                "--on-series-complete", "/bin/sh", "-c", "echo \"$PX_SERIES_UID $PX_INSTANCES $1\" >> \(hookLog)",
                "hook", "arg1",
            ])

        let store = try await ListenerFiles.storescu(listener.port, corpus)
        #expect(store.exitCode == 0, "\(store.stderr)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "seriesComplete" }.count == 3
            })
        // The hooks run asynchronously: wait for their three lines (a fourth would fail below).
        func hookLinesNow() -> [Substring] {
            String(decoding: FileManager.default.contents(atPath: hookLog) ?? Data(), as: UTF8.self).split(
                separator: "\n")
        }
        _ = await TestSupport.poll(seconds: 10) { hookLinesNow().count >= 3 }
        let hookLines = hookLinesNow()
        #expect(hookLines.count == 3, "\(hookLines)")
        #expect(Set(hookLines.map { $0.split(separator: " ")[0] }).count == 3)
        #expect(hookLines.allSatisfy { $0.hasSuffix(" 4 arg1") }, "\(hookLines)")

        let py = try await PeerHarness.runAsync(
            TestSupport.python,
            [TestSupport.repositoryRoot + "/scripts/pynetdicom-scu.py", "store", "127.0.0.1", String(listener.port)]
                + corpus + ["--aec", "PXLISTEN"])
        #expect(py.exitCode == 0, "\(py.stdout) \(py.stderr)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == 24
            })

        // px-push, the third sender, on the other backend than the listener's.
        let push = try await PeerHarness.runAsync(
            "px-push",
            ["PXLISTEN@127.0.0.1:\(listener.port)"] + corpus + ["--backend", backend == "native" ? "dcmtk" : "native"])
        #expect(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
        #expect(push.json?["data"]?["files"]?.arrayValue?.count == 12, "\(push.stdout)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == 36
            })
        #expect(await listener.stop() == 0)

        let received = listener.events("instanceReceived")
        #expect(received.filter { $0["duplicate"]?.stringValue == "keep" }.count == 24)
        #expect(received.filter { $0["duplicate"] == .null }.count == 12)
        let placed = ListenerFiles.placed(under: root)
        #expect(placed.count == 12)
        #expect(try ListenerFiles.dataSets(placed) == sent)
        #expect(ListenerFiles.temporaries(under: root).isEmpty)
        let series = Set(placed.map { ($0 as NSString).deletingLastPathComponent })
        #expect(series.count == 3)
        for directory in series {
            let info = String(
                decoding: FileManager.default.contents(atPath: directory + "/series.info") ?? Data(), as: UTF8.self)
            #expect(
                info.hasPrefix("[SERIES]\n") && info.contains("seriesinstanceuid = 2.25.")
                    && info.contains("instances = 4"), "\(info)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/receiving.series"))
            let study = (directory as NSString).deletingLastPathComponent
            #expect(FileManager.default.fileExists(atPath: study + "/study.info"))
            #expect(
                FileManager.default.fileExists(atPath: (study as NSString).deletingLastPathComponent + "/patient.info"))
        }
        // (dcmtk: the readiness C-ECHO is one more association)
        #expect(
            listener.events("associationOpened").filter { $0["callingAETitle"]?.stringValue != "ECHOSCU" }.count == 3)
        #expect(listener.events("associationClosed").allSatisfy { $0["aborted"] == .bool(false) })
    }

    /// PatientID ../../etc, a SOP Instance UID with '/', 300-character descriptions, NUL bytes, empty names:
    /// every file lands inside the root, and nothing is written next to it.
    @Test(arguments: backends) func hostileValuesStayInsideTheRoot(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let corpus = try await ListenerFiles.makeCorpus(["hostile", work + "/corpus"])
        let root = work + "/deep/root"
        let listener = try await ListenerProcess.start(backend: backend, root: root, work: work)
        let store = try await ListenerFiles.storescu(listener.port, corpus)
        #expect(store.exitCode == 0, "\(store.stderr)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == corpus.count
            })
        await listener.stop()
        let received = listener.events("instanceReceived")
        #expect(received.count == corpus.count)
        for event in received {
            let path = try #require(event["path"]?.stringValue)
            #expect(path.hasPrefix(root + "/"))
            #expect(!path.contains("/../") && !path.contains("/./") && !path.contains("\0"))
            #expect(path.split(separator: "/").allSatisfy { $0.utf8.count <= 255 })
        }
        // Nothing outside the root: work/deep holds only the root.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work + "/deep") == ["root"])
        #expect(try ListenerFiles.dataSets(ListenerFiles.placed(under: root)) == (try ListenerFiles.dataSets(corpus)))
    }

    /// The root on a 3 MiB tmpfs, ten 512 KiB instances: the native receiver answers 0xA700 for those that
    /// do not fit, leaves no partial file, and goes on serving once there is room again, also after its
    /// staging folder was removed.
    @Test func diskFullIsAFailureStatusAndNothingPartial() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = work + "/tmpfs"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let mount = try await PeerHarness.runAsync("/bin/mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", root])
        try #require(mount.exitCode == 0, "cannot mount a tmpfs (the tests run as root): \(mount.stderr)")
        defer { umount2(root, Int32(MNT_DETACH)) }
        let bench = work + "/ct"
        let ct = try await PeerHarness.runAsync(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", "--ct-bench", "10", bench])
        try #require(ct.exitCode == 0, "\(ct.stderr)")
        let corpus = try FileManager.default.contentsOfDirectory(atPath: bench).filter { $0.hasSuffix(".dcm") }.sorted()
            .map { bench + "/" + $0 }
        let listener = try await ListenerProcess.start(backend: "native", root: root, work: work)
        let store = try await ListenerFiles.storescu(listener.port, corpus)
        // storescu halts at the first failure status (exit code 167 in DCMTK 3.6.7).
        #expect(store.exitCode != 0, "storescu did not see a failure status")
        #expect(await listener.waitFor(seconds: 20) { $0.contains { $0["event"]?.stringValue == "associationClosed" } })
        let failed = listener.events("storeFailed")
        let stored = listener.events("instanceReceived")
        #expect(failed.count == 1)
        #expect(failed.first?["error"]?["message"]?.stringValue?.contains("errno 28") == true, "\(failed)")
        #expect(stored.count >= 1 && stored.count < 10)
        // Every file at a final name is complete and equal to what was sent; no temporary file is left.
        let placed = ListenerFiles.placed(under: root)
        #expect(placed.count == stored.count)
        let sent = try ListenerFiles.dataSets(corpus)
        for (uid, json) in try ListenerFiles.dataSets(placed) { #expect(sent[uid] == json) }
        #expect(ListenerFiles.temporaries(under: root).filter { !$0.hasSuffix("/.px-incoming") }.isEmpty)

        // Still serving: make room and send again.
        for path in placed { try FileManager.default.removeItem(atPath: path) }
        let again = try await ListenerFiles.storescu(listener.port, [corpus[0]])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == stored.count + 1
            })

        // A clean-up job removed the staging folder: it is made again, nothing is refused.
        try FileManager.default.removeItem(atPath: root + "/.px-incoming")
        let afterCleanUp = try await ListenerFiles.storescu(listener.port, [corpus[1]])
        #expect(afterCleanUp.exitCode == 0, "\(afterCleanUp.stderr)")
        #expect(
            await listener.waitFor(seconds: 20) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == stored.count + 2
            })
        await listener.stop()
    }

    /// Bytes the process has written (`wchar` in /proc/PID/io, socket writes included), nil when unreadable.
    static func bytesWritten(by pid: pid_t) -> Int? {
        guard let io = FileManager.default.contents(atPath: "/proc/\(pid)/io"),
            let line = String(decoding: io, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("wchar:")
            })
        else { return nil }
        return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
    }

    /// A sender that stops mid-instance is closed after the DIMSE timeout; one that dies mid-instance is
    /// closed at once. Neither leaves a file at a final name.
    @Test(arguments: backends) func silentAndAbortingSenders(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let corpus = try await ListenerFiles.makeCorpus(["large", "512", work + "/large"])
        let root = work + "/root"
        let listener = try await ListenerProcess.start(
            backend: backend, root: root, work: work, extra: ["--dimse-timeout", "2"])
        for (name, signal) in [("silent", SIGSTOP), ("abort", SIGKILL)] {
            let openedBefore = listener.events("associationOpened").count
            // Every earlier association was reported closed before this round: counted before the sender starts.
            let closedBefore = listener.events("associationClosed").count
            let sender = try Self.startStorescu(listener.port, corpus, log: work + "/storescu-\(name).log")
            defer { sender.kill() }
            // Frozen or killed once storescu has written 8 MiB, well inside the 512 MiB instance, watched from a
            // thread of its own: the listener's events lag the association under load, and loopback moves the
            // whole instance in a few hundred ms, so a delay after the event was sometimes after the release.
            let midInstance = await sender.send(signal: signal, within: 60) {
                (Self.bytesWritten(by: $0) ?? 0) >= 8 << 20
            }
            #expect(midInstance, "\(name): storescu never wrote 8 MiB")
            let started = ContinuousClock.now
            #expect(
                await listener.waitFor(seconds: 10) {
                    $0.filter { $0["event"]?.stringValue == "associationOpened" }.count > openedBefore
                })
            #expect(
                await listener.waitFor(seconds: 15) {
                    $0.filter { $0["event"]?.stringValue == "associationClosed" }.count > closedBefore
                },
                "\(name): closes before the signal \(closedBefore), events \(listener.events()), stderr: \(listener.stderr().suffix(3000))"
            )
            let elapsed = ContinuousClock.now - started
            if signal == SIGSTOP {
                #expect(elapsed >= .milliseconds(1500), "closed before the DIMSE timeout: \(elapsed)")
            }
            #expect(listener.events("associationClosed").last?["aborted"] == .bool(true))
            await sender.stop(signal: SIGKILL)
            #expect(ListenerFiles.placed(under: root).isEmpty, "\(name): a file reached a final name")
            #expect(listener.events("instanceReceived").isEmpty)
        }
        await listener.stop()
        #expect(ListenerFiles.placed(under: root).isEmpty)
        if backend == "native" {
            #expect(ListenerFiles.temporaries(under: root).isEmpty)
        }
    }

    /// 16 storescu senders at once, 50 instances each: all 800 arrive intact.
    @Test func sixteenParallelSenders() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let corpus = try await ListenerFiles.makeCorpus(["many", "800", "16", work + "/corpus"])
        let root = work + "/root"
        let listener = try await ListenerProcess.start(backend: "native", root: root, work: work)
        let port = listener.port
        let results = try await withThrowingTaskGroup(of: PeerHarness.Run.self) { group in
            for k in 0..<16 {
                let slice = Array(corpus[(k * 50)..<(k * 50 + 50)])
                group.addTask { try await ListenerFiles.storescu(port, slice, extra: ["-aet", "SENDER\(k)"]) }
            }
            var all: [PeerHarness.Run] = []
            for try await run in group { all.append(run) }
            return all
        }
        #expect(results.allSatisfy { $0.exitCode == 0 }, "\(results.map(\.stderr).filter { !$0.isEmpty }.prefix(2))")
        #expect(
            await listener.waitFor(seconds: 30) {
                $0.filter { $0["event"]?.stringValue == "associationClosed" }.count == 16
            })
        await listener.stop()
        #expect(listener.events("instanceReceived").count == 800)
        #expect(Set(listener.events("associationOpened").compactMap { $0["callingAETitle"]?.stringValue }).count == 16)
        let placed = ListenerFiles.placed(under: root)
        #expect(placed.count == 800)
        #expect(try ListenerFiles.dataSets(placed) == (try ListenerFiles.dataSets(corpus)))
        let series = Set(placed.map { ($0 as NSString).deletingLastPathComponent })
        #expect(series.count == 16)
        for directory in series { #expect(FileManager.default.fileExists(atPath: directory + "/series.info")) }
    }

    /// SIGTERM while four senders are sending: px-listen exits 0 within the grace, no partial file remains,
    /// and each series reported complete has its series.info.
    @Test(arguments: backends) func sigtermDuringReception(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let corpus = try await ListenerFiles.makeCorpus(["many", "800", "8", work + "/corpus"])
        let root = work + "/root"
        let listener = try await ListenerProcess.start(
            backend: backend, root: root, work: work, extra: ["--shutdown-grace", "1"])
        var senders: [PeerProcess] = []
        defer { for sender in senders { sender.kill() } }
        for k in 0..<4 {
            senders.append(
                try Self.startStorescu(
                    listener.port, Array(corpus[(k * 200)..<(k * 200 + 200)]), log: work + "/s\(k).log"))
        }
        #expect(
            await listener.waitFor(seconds: 30) {
                $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count >= 40
            })
        let started = ContinuousClock.now
        let code = await listener.stop(signal: SIGTERM)
        #expect(code == 0, "\(listener.stderr().suffix(2000))")
        #expect(ContinuousClock.now - started < .seconds(10))
        for sender in senders { await sender.stop(signal: SIGKILL) }
        let placed = ListenerFiles.placed(under: root)
        #expect(placed.count == listener.events("instanceReceived").count)
        let sent = try ListenerFiles.dataSets(corpus)
        for (uid, json) in try ListenerFiles.dataSets(placed) { #expect(sent[uid] == json, "\(uid) differs") }
        #expect(ListenerFiles.temporaries(under: root).isEmpty, "\(ListenerFiles.temporaries(under: root))")
        for event in listener.events("seriesComplete") {
            let directory = try #require(event["directory"]?.stringValue)
            #expect(FileManager.default.fileExists(atPath: directory + "/series.info"))
        }
        #expect(listener.events().last?["status"]?.stringValue == "success")
    }

    /// The native receiver answers only its AE title with --strict-called-aet (any by default, as storescp),
    /// only the allowed calling AE titles, and logs each refusal as a warning.
    @Test func calledAndCallingAETitles() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work,
            extra: ["--allow-calling", "GOOD,ALSOGOOD", "--strict-called-aet"])
        let port = String(listener.port)
        #expect(
            try await PeerHarness.runAsync("/usr/bin/echoscu", ["-aet", "GOOD", "-aec", "PXLISTEN", "127.0.0.1", port])
                .exitCode == 0)
        let wrongCalled = try await PeerHarness.runAsync(
            "/usr/bin/echoscu", ["-aet", "GOOD", "-aec", "OTHER", "127.0.0.1", port])
        #expect(wrongCalled.exitCode != 0)
        #expect(wrongCalled.stderr.contains("Called AE Title Not Recognized"), "\(wrongCalled.stderr)")
        let wrongCalling = try await PeerHarness.runAsync(
            "/usr/bin/echoscu", ["-aet", "BAD", "-aec", "PXLISTEN", "127.0.0.1", port])
        #expect(wrongCalling.exitCode != 0)
        #expect(wrongCalling.stderr.contains("Calling AE Title Not Recognized"), "\(wrongCalling.stderr)")
        // Each refusal is an event, not only a log line (issue 36).
        #expect(
            await listener.waitFor(seconds: 10) {
                $0.filter { $0["event"]?.stringValue == "associationRejected" }.count >= 2
            })
        let rejected = listener.events("associationRejected")
        #expect(rejected.count == 2, "\(rejected)")
        let byCalled = rejected.first { $0["calledAETitle"]?.stringValue == "OTHER" }
        #expect(byCalled?["callingAETitle"]?.stringValue == "GOOD", "\(rejected)")
        #expect(byCalled?["peerHost"]?.stringValue == "127.0.0.1", "\(rejected)")
        #expect(byCalled?["result"]?.stringValue == "Rejected Permanent", "\(rejected)")
        #expect(byCalled?["source"]?.stringValue == "Service User", "\(rejected)")
        #expect(byCalled?["reason"]?.stringValue == "Called AE Title Not Recognized", "\(rejected)")
        let byCalling = rejected.first { $0["callingAETitle"]?.stringValue == "BAD" }
        #expect(byCalling?["calledAETitle"]?.stringValue == "PXLISTEN", "\(rejected)")
        #expect(byCalling?["result"]?.stringValue == "Rejected Permanent", "\(rejected)")
        #expect(byCalling?["source"]?.stringValue == "Service User", "\(rejected)")
        #expect(byCalling?["reason"]?.stringValue == "Calling AE Title Not Recognized", "\(rejected)")
        // The accepted association is not one of them.
        #expect(listener.events("associationOpened").count == 1)
        await listener.stop()

        // By default, on either backend, any called AE title is answered (a PACS moving to "CHIPS" works on
        // every host, whether DCMTK is installed or not).
        for backend in ["native", "dcmtk"] {
            let any = try await ListenerProcess.start(backend: backend, root: work + "/root-\(backend)", work: work)
            #expect(
                try await PeerHarness.runAsync("/usr/bin/echoscu", ["-aec", "CHIPS", "127.0.0.1", String(any.port)])
                    .exitCode == 0, "\(backend)")
            await any.stop()
        }
        // --strict-called-aet cannot be kept by storescp: a clear error, not a silently different listener.
        let strict = try await PeerHarness.runAsync(
            "px-listen",
            [
                "--backend", "dcmtk", "--strict-called-aet", "--port", String(try TestSupport.freePort()), "-d",
                work + "/root-strict",
            ])
        #expect(strict.exitCode == 69, "\(strict.stdout) \(strict.stderr)")
    }

    /// Starts storescu in the background (output in `log`); the caller stops it.
    static func startStorescu(_ port: Int, _ files: [String], log: String) throws -> PeerProcess {
        try PeerProcess("/usr/bin/storescu", ["-aec", "PXLISTEN", "127.0.0.1", String(port)] + files, logFile: log)
    }
}
