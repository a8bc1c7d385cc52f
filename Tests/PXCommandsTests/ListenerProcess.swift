import DICOMData
import Foundation
import PXTestSupport
import Testing

/// A px-listen running in the background for the listener tests: a ``PeerProcess`` with stdout (NDJSON
/// events) and stderr in files of their own.
final class ListenerProcess: Sendable {
    let process: PeerProcess
    let stderrPath: String
    let port: Int

    private init(process: PeerProcess, stderrPath: String, port: Int) {
        self.process = process
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
        let arguments =
            ["--backend", backend, "--port", String(port), "--aet", "PXLISTEN", "-d", root, "--log-level", "debug"]
            + extra
        let process = try PeerProcess(
            TestSupport.binDirectory + "/px-listen", arguments, logFile: base + ".ndjson", errorFile: base + ".err")
        func fail(_ message: String) async -> ListenerFailed {
            await process.stop(signal: SIGKILL)
            let stderr = String(decoding: FileManager.default.contents(atPath: base + ".err") ?? Data(), as: UTF8.self)
            return ListenerFailed(message: "\(message): \(process.failure ?? "") \(stderr)")
        }
        let event: JSONValue
        do {
            event = try await process.waitForEvent { $0["event"]?.stringValue == "listening" }
        } catch {
            throw await fail("px-listen did not start")
        }
        guard let reported = event["port"]?.intValue else { throw await fail("px-listen reported no port") }
        if backend == "dcmtk" {
            // storescp reports nothing when ready: wait until it answers.
            let ready = try await TestSupport.waitForEcho(
                port: reported, aeTitle: "PXLISTEN", seconds: 5, extra: echoExtra)
            guard ready else { throw await fail("px-listen (dcmtk) did not answer C-ECHO") }
            // The probe's own association is reported from storescp's log, which can lag under load: wait until
            // it is reported closed, so a test that counts associations does not count the probe's as its own.
            let settled = await process.waitFor(seconds: 30) {
                let events = process.events.compactMap { $0["event"]?.stringValue }
                let opened = events.filter { $0 == "associationOpened" }.count
                return opened > 0 && events.filter { $0 == "associationClosed" }.count == opened
            }
            guard settled else {
                throw await fail("px-listen (dcmtk) did not report the C-ECHO probe's association closed")
            }
        }
        return ListenerProcess(process: process, stderrPath: base + ".err", port: reported)
    }

    struct ListenerFailed: Error { let message: String }

    /// px-listen's PID while it runs (0 once it has exited).
    var pid: pid_t { process.processIdentifier ?? 0 }

    /// The events written so far (complete lines only).
    func events() -> [JSONValue] { process.events }

    func events(_ name: String) -> [JSONValue] {
        events().filter { $0["event"]?.stringValue == name }
    }

    func stderr() -> String {
        String(decoding: FileManager.default.contents(atPath: stderrPath) ?? Data(), as: UTF8.self)
    }

    /// Polls the events every 50 ms until `condition` holds or `seconds` pass (or px-listen exits).
    func waitFor(seconds: Double, _ condition: ([JSONValue]) -> Bool) async -> Bool {
        await process.waitFor(seconds: seconds) { condition(self.events()) }
    }

    /// Sends `signal` and waits up to `seconds` for the exit (then SIGKILL); returns the exit code (-1 when
    /// it had to be killed).
    @discardableResult
    func stop(signal: Int32 = SIGTERM, seconds: Double = 20) async -> Int32 {
        await process.stop(signal: signal, seconds: seconds)
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
