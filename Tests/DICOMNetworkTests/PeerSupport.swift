import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Synchronization
import Testing

/// A peer program the tests need is missing: a failure that says how to install it, never a skip
/// (CI installs every peer through scripts/setup-test-env.sh).
struct MissingPeer: Error, CustomStringConvertible {
    var what: String
    var description: String {
        "\(what) is missing; run scripts/setup-test-env.sh as root (installs DCMTK, Orthanc and the Python venv "
            + "with pydicom and pynetdicom; or: apt-get install -y dcmtk orthanc python3-venv)"
    }
}

extension TestSupport {
    /// PATH plus the sbin directories (Debian installs Orthanc as /usr/sbin/Orthanc, and a non-root PATH often
    /// lacks them); the peer scripts run with it.
    static var peerPath: String {
        var directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin"] where !directories.contains(extra) {
            directories.append(extra)
        }
        return directories.joined(separator: ":")
    }

    /// The full path of a program on ``peerPath``.
    static func locate(_ tool: String) -> String? {
        for directory in peerPath.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Throws ``MissingPeer`` for the first program that is not on PATH, and when `pythonModules` cannot all be
    /// imported by the venv's Python.
    static func requirePeers(_ tools: [String], pythonModules: [String] = []) async throws {
        for tool in tools where locate(tool) == nil {
            throw MissingPeer(what: tool)
        }
        guard !pythonModules.isEmpty else { return }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw MissingPeer(what: "the Python venv (\(python))")
        }
        let probe = try await run(python, ["-c", "import " + pythonModules.joined(separator: ", ")])
        guard probe.status == 0 else {
            throw MissingPeer(what: "Python modules \(pythonModules.joined(separator: ", ")) in \(python) (\(probe.output))")
        }
    }

    /// Runs one of the project's scripts with bash; fails the test with its output when it exits non-zero.
    static func script(_ name: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> String {
        var environment = environment
        environment["PATH"] = environment["PATH"] ?? peerPath
        let result = try await run("bash", [repositoryRoot + "/scripts/" + name] + arguments, environment: environment)
        guard result.status == 0 else {
            throw ScriptFailed(script: name, status: result.status, output: result.output)
        }
        return result.output
    }

    struct ScriptFailed: Error, CustomStringConvertible {
        var script: String
        var status: Int32
        var output: String
        var description: String { "\(script) exited with \(status): \(output)" }
    }
}

/// A suite trait that checks, once before the suite runs, that the peer programs it needs are installed; a
/// missing one fails the suite with an install hint instead of skipping it.
struct RequiredPeers: SuiteTrait, TestScoping {
    var tools: [String]
    var pythonModules: [String]

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSupport.requirePeers(self.tools, pythonModules: self.pythonModules)
        try await function()
    }
}

extension Trait where Self == RequiredPeers {
    /// Fails (never skips) the suite when one of these programs or Python modules is missing.
    static func requires(_ tools: String..., pythonModules: [String] = []) -> Self {
        RequiredPeers(tools: tools, pythonModules: pythonModules)
    }
}

/// Element-by-element comparison of two data sets, for instances that went through another implementation.
enum DataSetComparison {
    /// The differences between the data set body of `expected` and `actual` (group 0002 and group lengths left
    /// out), one line per element: missing, unexpected, another VR, or another value. Values are compared decoded
    /// (text through each data set's own Specific Character Set, sequences item by item, binary as bytes), so a
    /// re-encoding in another transfer syntax or character set compares equal when it means the same; the
    /// (0008,0005) values themselves are compared as written.
    static func differences(_ expected: DataSet, _ actual: DataSet) -> [String] {
        func relevant(_ dataSet: DataSet) -> [DICOMData.Tag: DataElement] {
            var elements: [DICOMData.Tag: DataElement] = [:]
            for element in dataSet where element.tag.group != 0x0002 && !element.tag.isGroupLength {
                elements[element.tag] = element
            }
            return elements
        }
        let left = relevant(expected)
        let right = relevant(actual)
        var lines: [String] = []
        for tag in Set(left.keys).union(right.keys).sorted() {
            let name = "\(tag) \(DataDictionary.entry(for: tag)?.keyword ?? "")"
            switch (left[tag], right[tag]) {
            case (let e?, nil):
                lines.append("\(name): missing (expected \(Self.describe(e, in: expected)))")
            case (nil, let a?):
                lines.append("\(name): unexpected \(Self.describe(a, in: actual))")
            case (let e?, let a?):
                if e.vr != a.vr {
                    lines.append("\(name): VR \(a.vr.rawValue), expected \(e.vr.rawValue)")
                } else if tag == .specificCharacterSet {
                    if Self.trimmed(e.bytes) != Self.trimmed(a.bytes) {
                        lines.append("\(name): \(Self.text(a.bytes)), expected \(Self.text(e.bytes))")
                    }
                } else if e.dicomJSON(characterSet: expected.characterSet) != a.dicomJSON(characterSet: actual.characterSet) {
                    lines.append("\(name): \(Self.describe(a, in: actual)), expected \(Self.describe(e, in: expected))")
                }
            case (nil, nil):
                break
            }
        }
        return lines
    }

    /// The differences between the data sets of two Part 10 files (their meta information is not compared).
    static func differences(expectedFile: String, actualFile: String) throws -> [String] {
        try Self.differences(Part10File(contentsOf: expectedFile).dataSet, Part10File(contentsOf: actualFile).dataSet)
    }

    private static func describe(_ element: DataElement, in dataSet: DataSet) -> String {
        let json = element.dicomJSON(characterSet: dataSet.characterSet).serialized()
        return json.count > 160 ? String(json.prefix(160)) + "…" : json
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        Array(bytes.reversed().drop { $0 == 0x20 || $0 == 0 }.reversed())
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        "\"" + String(decoding: Self.trimmed(bytes), as: UTF8.self) + "\""
    }
}

/// A ``StorageDelegate`` that files instances as `DIRECTORY/<transfer syntax UID>/<SOP Instance UID>.dcm` (so that
/// the same instance in several transfer syntaxes is kept once per syntax) and remembers every one it received.
final class RecordingStorage: StorageDelegate {
    let directory: String
    private let received = Mutex<[ReceivedInstance]>([])

    init(directory: String) {
        self.directory = directory
    }

    /// The instances received so far, in arrival order (with their final paths).
    var instances: [ReceivedInstance] { self.received.withLock { $0 } }

    func didReceive(_ instance: ReceivedInstance) async throws -> DIMSEStatus {
        let folder = self.directory + "/" + instance.transferSyntaxUID
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let status = try await DirectoryStorage(directory: folder).didReceive(instance)
        var placed = instance
        placed.path = folder + "/" + instance.sopInstanceUID + ".dcm"
        self.received.withLock { $0.append(placed) }
        return status
    }
}

/// A long-running peer process (an SCP written in Python, say) with its stdout and stderr in one log file.
///
/// ``stop()`` sends SIGTERM, waits without blocking the cooperative pool, then SIGKILL; call it on every path.
final class PeerProcess: Sendable {
    let process: Process
    let logFile: String

    init(_ executable: String, _ arguments: [String], logFile: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TCP_NODELAY"] = "1"
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()  // the child has its own copy
        self.process = process
        self.logFile = logFile
    }

    /// The log so far.
    var log: String {
        (try? String(contentsOfFile: self.logFile, encoding: .utf8)) ?? ""
    }

    /// The JSON objects among the log's lines (the Python peers print one event per line).
    var events: [JSONValue] {
        self.log.split(separator: "\n").compactMap { line in
            line.hasPrefix("{") ? try? JSONParser.parse(String(line)) : nil
        }
    }

    /// Waits (max `seconds`) until an event line satisfies `predicate`; throws with the log when none does or the
    /// process exits first.
    func waitForEvent(timeout seconds: Double = 20, _ predicate: (JSONValue) -> Bool) async throws -> JSONValue {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while true {
            // Looked at once more after the deadline: a late wake-up must not miss a line already written.
            if let event = self.events.first(where: predicate) { return event }
            guard self.process.isRunning, ContinuousClock.now < deadline else { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PeerFailed(description: "\(self.process.executableURL?.lastPathComponent ?? "peer") did not report ready: \(self.log)")
    }

    struct PeerFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// SIGTERM, up to 5 s for a clean exit, then SIGKILL.
    func stop() async {
        let pid = self.process.processIdentifier
        guard self.process.isRunning else { return }
        kill(pid, SIGTERM)
        for _ in 0..<100 where self.process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
        }
        if self.process.isRunning {
            kill(pid, SIGKILL)
            for _ in 0..<100 where self.process.isRunning {
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}
