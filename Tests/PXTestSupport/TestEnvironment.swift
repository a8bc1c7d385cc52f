import Foundation

/// Where the tests find the project, its venv, its built executables and the peer programs, and the small
/// process, port and folder helpers every test target shares (one definition each).
///
/// An ordinary library, built by every whole-package `swift build` (the static-stdlib release toolchain
/// included), so it does not import Testing: its helpers throw ``Failure`` (or a more specific error) and
/// the tests record. The Swift Testing traits and the `integration` tag live in Tests/Shared/TestTraits.swift,
/// compiled into each test target that uses them.
///
/// A peer program that is missing fails the test with an install hint, never a skip: CI installs every
/// one through `scripts/setup-test-env.sh`.
public enum TestSupport {
    /// A helper could not do what a test asked (a script failed, a port never opened, a folder could not be
    /// removed): the test that called it fails with this message.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

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

    /// pydicom's test data in the venv (.venv/lib/python3.X/site-packages/pydicom/data/test_files).
    public static let pydicomTestFiles: String = {
        let lib = venv + "/lib"
        let python =
            (try? FileManager.default.contentsOfDirectory(atPath: lib))?.sorted().last { $0.hasPrefix("python3") }
            ?? "python3"
        return lib + "/" + python + "/site-packages/pydicom/data/test_files"
    }()

    /// The folder holding the built px executables: the test bundle's own folder (SwiftPM builds the
    /// executables the tests depend on beside it, whatever the triple, configuration or scratch path), else
    /// `.build/debug` in this checkout (a px executable missing there fails the test that starts it).
    public static let binDirectory: String = {
        let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().path
        if FileManager.default.isExecutableFile(atPath: exe + "/px-echo") { return exe }
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

    /// A new empty directory, removed when `body` ends; throws ``Failure`` when it cannot be removed (after
    /// `body`'s own error, if it threw one).
    @discardableResult
    public static func withTemporaryDirectory<R>(prefix: String = "px-test-", _ body: (String) async throws -> R)
        async throws -> R
    {
        let path = try makeTemporaryDirectory(prefix: prefix)
        let result: Result<R, any Error>
        do { result = .success(try await body(path)) } catch { result = .failure(error) }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            if case .success = result { throw Failure("cannot remove \(path): \(error)") }
        }
        return try result.get()
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
    /// Whether the suites tagged `integration` (those that need DCMTK, Orthanc, the Python venv or other
    /// programs outside Swift) run: yes, unless `PX_TEST_TIER=fast` (`make test-fast`) asks for the tier that
    /// needs only Swift.
    public static var runsIntegrationTests: Bool {
        ProcessInfo.processInfo.environment["PX_TEST_TIER"] != "fast"
    }

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
