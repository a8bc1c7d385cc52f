import Foundation
import Testing

/// Where the tests find the project, its venv, its built executables and the peer programs, and the small
/// process, port and folder helpers every test target shares (one definition each).
///
/// A peer program that is missing fails the test with an install hint, never a skip: CI installs every
/// one through `scripts/setup-test-env.sh`.
public enum TestSupport {
    /// The repository root, found from this file's path (Tests/PXTestSupport/TestEnvironment.swift).
    public static let repositoryRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The test venv made by scripts/setup-test-env.sh: `$PX_VENV`, else `.venv` in this checkout.
    public static var venv: String {
        ProcessInfo.processInfo.environment["PX_VENV"] ?? repositoryRoot + "/.venv"
    }

    /// Python with pydicom and pynetdicom, for the corpus scripts and the pynetdicom peers.
    public static var python: String { venv + "/bin/python" }

    /// The folder holding the built px executables: the test bundle's own folder (SwiftPM builds the
    /// executables the tests depend on beside it, whatever the triple, configuration or scratch path),
    /// else what `swift build --show-bin-path` says.
    public static let binDirectory: String = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        if FileManager.default.isExecutableFile(atPath: exe + "/px-echo") { return exe }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "build", "--show-bin-path", "--package-path", repositoryRoot]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            if process.terminationStatus == 0, !path.isEmpty { return path }
        } catch {
            Issue.record("swift build --show-bin-path: \(error)")
        }
        return repositoryRoot + "/.build/debug"
    }()

    /// PATH plus the sbin directories (Debian installs Orthanc as /usr/sbin/Orthanc, and a non-root PATH
    /// often lacks them); the peer scripts run with it.
    public static var peerPath: String {
        var directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(
            String.init)
        for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin"] where !directories.contains(extra) {
            directories.append(extra)
        }
        return directories.joined(separator: ":")
    }

    /// The full path of a program (an absolute path as it is, else looked up on ``peerPath``).
    public static func locate(_ tool: String) -> String? {
        if tool.hasPrefix("/") { return FileManager.default.isExecutableFile(atPath: tool) ? tool : nil }
        for directory in peerPath.split(separator: ":") {
            let candidate = "\(directory)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// A new empty directory under the system's temporary folder; the caller removes it.
    public static func makeTemporaryDirectory(prefix: String = "px-test-") throws -> String {
        let path = NSTemporaryDirectory() + prefix + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A new empty directory, removed when `body` ends.
    @discardableResult
    public static func withTemporaryDirectory<R>(prefix: String = "px-test-", _ body: (String) async throws -> R)
        async throws -> R
    {
        let path = try makeTemporaryDirectory(prefix: prefix)
        defer {
            do { try FileManager.default.removeItem(atPath: path) } catch {
                Issue.record("cannot remove \(path): \(error)")
            }
        }
        return try await body(path)
    }
}

/// A peer program the tests need is missing: a failure that says how to install it, never a skip.
public struct MissingPeer: Error, CustomStringConvertible {
    public var what: String
    public init(what: String) { self.what = what }
    public var description: String {
        "\(what) is missing; run scripts/setup-test-env.sh as root (installs DCMTK, Orthanc and the Python venv "
            + "with pydicom and pynetdicom; or: apt-get install -y dcmtk orthanc python3-venv)"
    }
}

extension TestSupport {
    /// Throws ``MissingPeer`` for the first program that is not on PATH, and when `pythonModules` cannot all
    /// be imported by the venv's Python.
    public static func requirePeers(_ tools: [String], pythonModules: [String] = []) async throws {
        for tool in tools where locate(tool) == nil {
            throw MissingPeer(what: tool)
        }
        guard !pythonModules.isEmpty else { return }
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw MissingPeer(what: "the Python venv (\(python))")
        }
        let probe = try await run(python, ["-c", "import " + pythonModules.joined(separator: ", ")])
        guard probe.status == 0 else {
            throw MissingPeer(
                what: "Python modules \(pythonModules.joined(separator: ", ")) in \(python) (\(probe.output))")
        }
    }
}

/// A suite trait that checks, once before the suite runs, that the peer programs it needs are installed; a
/// missing one fails the suite with an install hint instead of skipping it.
public struct RequiredPeers: SuiteTrait, TestScoping {
    public var tools: [String]
    public var pythonModules: [String]

    public var isRecursive: Bool { false }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSupport.requirePeers(self.tools, pythonModules: self.pythonModules)
        try await function()
    }
}

extension Trait where Self == RequiredPeers {
    /// Fails (never skips) the suite when one of these programs or Python modules is missing.
    public static func requires(_ tools: String..., pythonModules: [String] = []) -> Self {
        RequiredPeers(tools: tools, pythonModules: pythonModules)
    }
}
