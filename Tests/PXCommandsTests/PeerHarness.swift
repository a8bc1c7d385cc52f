import DICOMData
import Foundation
import Testing

/// Runs the built px executables and the DCMTK peers of the integration tests, on 127.0.0.1 only.
enum PeerHarness {
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/PXCommandsTests/PeerHarness.swift
        return parts.joined(separator: "/")
    }()

    static var binDirectory: String { root + "/.build/debug" }

    struct Run {
        var exitCode: Int32
        var stdout: String
        var stderr: String
        var json: JSONValue? { try? JSONParser.parse(stdout.split(separator: "\n").last.map(String.init) ?? "") }
    }

    /// Runs a command to completion with posix_spawn and waitpid, stdio in files (not pipes: a
    /// peer left running in the background would hold a pipe open), so no descriptor of ours leaks
    /// into the peers the command starts.
    static func run(_ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]) throws -> Run {
        let base = NSTemporaryDirectory() + "px-run-" + UUID().uuidString
        defer { for ext in [".out", ".err", ".in"] { try? FileManager.default.removeItem(atPath: base + ext) } }
        let pid = try spawn(executable, arguments, stdin: stdin, environment: environment, files: base)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return collect(status: status, files: base)
    }

    /// ``run(_:_:stdin:environment:)`` for async tests: the exit is awaited by polling `waitpid` with `WNOHANG`, so
    /// no thread of the cooperative pool (two on CI) is blocked while a peer command runs.
    static func runAsync(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) async throws -> Run {
        let base = NSTemporaryDirectory() + "px-run-" + UUID().uuidString
        defer { for ext in [".out", ".err", ".in"] { try? FileManager.default.removeItem(atPath: base + ext) } }
        let pid = try spawn(executable, arguments, stdin: stdin, environment: environment, files: base)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw SpawnFailed(path: executable, code: errno) }
            // Not cancellable on purpose: the child must be reaped.
            try? await Task.sleep(for: .milliseconds(10))
        }
        return collect(status: status, files: base)
    }

    /// Starts a command with stdio in `files`.in/.out/.err; returns its PID.
    private static func spawn(
        _ executable: String, _ arguments: [String], stdin: String?, environment: [String: String], files base: String
    ) throws -> pid_t {
        let path = executable.hasPrefix("/") ? executable : binDirectory + "/" + executable
        _ = FileManager.default.createFile(atPath: base + ".in", contents: Data((stdin ?? "").utf8))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, base + ".in", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, base + ".out", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, base + ".err", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        var env = ProcessInfo.processInfo.environment
        env["TCP_NODELAY"] = "1"
        for (k, v) in environment { env[k] = v }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard rc == 0 else { throw SpawnFailed(path: path, code: rc) }
        return pid
    }

    /// The exit code and output of a reaped command.
    private static func collect(status: Int32, files base: String) -> Run {
        let exitCode = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let o = FileManager.default.contents(atPath: base + ".out") ?? Data()
        let e = FileManager.default.contents(atPath: base + ".err") ?? Data()
        return Run(exitCode: exitCode, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }

    struct SpawnFailed: Error { let path: String; let code: Int32 }

    /// Fails the test (never skips) when a peer tool is missing.
    static func requireTools(_ tools: [String]) -> Bool {
        var ok = true
        for tool in tools where !FileManager.default.isExecutableFile(atPath: "/usr/bin/\(tool)") && which(tool) == nil {
            Issue.record("\(tool) is not installed: run scripts/setup-test-env.sh (installs DCMTK, Orthanc and the Python venv)")
            ok = false
        }
        if !FileManager.default.isExecutableFile(atPath: root + "/.venv/bin/python") {
            Issue.record("no .venv with pydicom: run scripts/setup-test-env.sh")
            ok = false
        }
        return ok
    }

    static func which(_ tool: String) -> String? {
        for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// A free TCP port on 127.0.0.1.
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// A listening socket that never answers (for the ACSE timeout); close it with `close`.
    static func silentListener() -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) } }
        listen(fd, 8)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, Int(UInt16(bigEndian: addr.sin_port)))
    }

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "px-it-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
