import DICOMData
import Foundation
import PXTestSupport
import Testing

/// A px-listen running in the background for the listener tests: stdout (NDJSON events) and stderr
/// in files, the process reaped by polling `waitpid(WNOHANG)` so no cooperative thread blocks.
final class ListenerProcess {
    let pid: pid_t
    let eventsPath: String
    let stderrPath: String
    private(set) var port: Int
    private var exitStatus: Int32?

    private init(pid: pid_t, eventsPath: String, stderrPath: String, port: Int) {
        self.pid = pid
        self.eventsPath = eventsPath
        self.stderrPath = stderrPath
        self.port = port
    }

    /// Starts px-listen on `backend` storing under `root`; returns once it has reported `listening`
    /// (native: on a free port it picked itself) and, for dcmtk, answers C-ECHO.
    static func start(
        backend: String, root: String, work: String, extra: [String] = [], echoExtra: [String] = []
    ) async throws -> ListenerProcess {
        let port = backend == "native" ? 0 : try TestSupport.freePort()
        let base = work + "/listen-\(UUID().uuidString.prefix(8))"
        let path = TestSupport.binDirectory + "/px-listen"
        let arguments =
            ["--backend", backend, "--port", String(port), "--aet", "PXLISTEN", "-d", root, "--log-level", "debug"]
            + extra
        let pid = try TestSupport.spawn(path, arguments, stdoutPath: base + ".ndjson", stderrPath: base + ".err")
        let listener = ListenerProcess(pid: pid, eventsPath: base + ".ndjson", stderrPath: base + ".err", port: port)
        let listening = await listener.waitFor(seconds: 20) { events in
            events.contains { $0["event"]?.stringValue == "listening" }
        }
        guard listening, let event = listener.events().first(where: { $0["event"]?.stringValue == "listening" }),
            let reported = event["port"]?.intValue
        else {
            await listener.stop(signal: SIGKILL)
            throw ListenerFailed(message: "px-listen did not start: \(listener.stderr())")
        }
        listener.port = reported
        if backend == "dcmtk" {
            // storescp reports nothing when ready: wait until it answers.
            let ready = try await TestSupport.waitForEcho(
                port: reported, aeTitle: "PXLISTEN", seconds: 5, extra: echoExtra)
            guard ready else {
                await listener.stop(signal: SIGKILL)
                throw ListenerFailed(message: "px-listen (dcmtk) did not answer C-ECHO")
            }
        }
        return listener
    }

    struct ListenerFailed: Error { let message: String }

    /// The events written so far (complete lines only).
    func events() -> [JSONValue] {
        let text = String(decoding: FileManager.default.contents(atPath: eventsPath) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
    }

    func events(_ name: String) -> [JSONValue] {
        events().filter { $0["event"]?.stringValue == name }
    }

    func stderr() -> String {
        String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
    }

    /// Polls the events every 50 ms until `condition` holds or `seconds` pass.
    func waitFor(seconds: Double, _ condition: ([JSONValue]) -> Bool) async -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            if condition(events()) { return true }
            if exited() { return condition(events()) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(events())
    }

    /// Whether the process has ended (reaps it).
    func exited() -> Bool {
        if exitStatus != nil { return true }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            exitStatus = TestSupport.exitCode(fromWaitStatus: status)
            return true
        }
        return false
    }

    /// Sends `signal` and waits up to `seconds` for the exit (then SIGKILL); returns the exit code.
    @discardableResult
    func stop(signal: Int32 = SIGTERM, seconds: Double = 20) async -> Int32 {
        if !exited() { kill(pid, signal) }
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !exited() && ContinuousClock.now < end {
            try? await Task.sleep(for: .milliseconds(20))
        }
        if !exited() {
            kill(pid, SIGKILL)
            while !exited() { try? await Task.sleep(for: .milliseconds(20)) }
            return -1
        }
        return exitStatus ?? -1
    }
}

/// Files and comparisons for the listener tests.
enum ListenerFiles {
    /// Every regular file under `root`, recursively (hidden folders included).
    static func files(under root: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: root) else { return [] }
        var out: [String] = []
        while let relative = enumerator.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + relative, isDirectory: &isDirectory),
                !isDirectory.boolValue
            {
                out.append(root + "/" + relative)
            }
        }
        return out
    }

    /// The data sets of Part 10 files, by SOP Instance UID, as DICOM JSON.
    static func dataSets(_ paths: [String]) throws -> [String: JSONValue] {
        var out: [String: JSONValue] = [:]
        for path in paths {
            let ds = try Part10File(contentsOf: path).dataSet
            out[ds.string(.sopInstanceUID) ?? path] = ds.dicomJSON()
        }
        return out
    }

    /// The `.dcm` files under `root` outside the temporary folders.
    static func placed(under root: String) -> [String] {
        files(under: root).filter { $0.hasSuffix(".dcm") && !$0.contains("/.px-incoming") }
    }

    /// Leftover temporary files (`.part`, or anything in a staging folder).
    static func temporaries(under root: String) -> [String] {
        files(under: root).filter { $0.contains("/.px-incoming") || $0.hasSuffix(".part") || $0.hasSuffix(".px-tmp") }
    }

    /// Runs scripts/make-listen-corpus.py.
    static func makeCorpus(_ arguments: [String]) async throws -> [String] {
        let out = arguments.last ?? ""
        let run = try await PeerHarness.runAsync(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-listen-corpus.py"] + arguments)
        guard run.exitCode == 0 else {
            throw ListenerProcess.ListenerFailed(message: "make-listen-corpus.py: \(run.stderr)")
        }
        return ((try? FileManager.default.contentsOfDirectory(atPath: out)) ?? []).filter { $0.hasSuffix(".dcm") }
            .sorted().map { out + "/" + $0 }
    }

    static func storescu(_ port: Int, _ files: [String], extra: [String] = []) async throws -> PeerHarness.Run {
        try await PeerHarness.runAsync(
            "/usr/bin/storescu", extra + ["-aec", "PXLISTEN", "127.0.0.1", String(port)] + files)
    }
}

extension JSONValue {
    var intValue: Int? {
        switch self {
        case .number(let text): return Int(text)
        default: return nil
        }
    }
}
