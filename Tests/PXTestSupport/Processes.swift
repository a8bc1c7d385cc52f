import DICOMData
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

extension TestSupport {
    /// The result of a finished process.
    public struct ProcessResult: Sendable {
        public var status: Int32
        /// Stdout and stderr together, or stdout alone when stderr was kept apart.
        public var output: String
        /// Stderr, when it was kept apart from stdout.
        public var errorOutput: String = ""
    }

    /// A process could not be started.
    public struct SpawnFailed: Error, CustomStringConvertible {
        public var path: String
        public var code: Int32
        public init(path: String, code: Int32) {
            self.path = path
            self.code = code
        }
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// Runs a program to completion with `TCP_NODELAY=1` in its environment (DCMTK reads it). `tool` is a
    /// path or a name looked up on ``peerPath``. Standard input comes from `stdin` (empty when nil); stdout
    /// and stderr go to files, not pipes (a peer left running in the background would hold a pipe open), and
    /// are returned together unless `separateErrorOutput` keeps stderr apart (for tools that print JSON).
    ///
    /// Never blocks a thread of the cooperative pool (as many threads as cores, and servers under test need
    /// them): the exit is awaited by polling `waitpid(WNOHANG)`. Not cancellable: the child is always reaped.
    public static func run(
        _ tool: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        separateErrorOutput: Bool = false
    ) async throws -> ProcessResult {
        let files = try ProcessFiles(stdin: stdin, separateErrorOutput: separateErrorOutput)
        defer { files.remove() }
        let pid = try spawn(tool, arguments, environment: environment, files: files)
        var status: Int32 = 0
        while true {
            let reaped = waitpid(pid, &status, WNOHANG)
            if reaped == pid { break }
            if reaped < 0 && errno != EINTR { throw SpawnFailed(path: tool, code: errno) }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { continue }
        }
        return files.result(status: status)
    }

    /// ``run(_:_:stdin:environment:separateErrorOutput:)`` for synchronous tests: blocks in `waitpid`.
    public static func runBlocking(
        _ tool: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        separateErrorOutput: Bool = false
    ) throws -> ProcessResult {
        let files = try ProcessFiles(stdin: stdin, separateErrorOutput: separateErrorOutput)
        defer { files.remove() }
        let pid = try spawn(tool, arguments, environment: environment, files: files)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return files.result(status: status)
    }

    /// The exit code of a `waitpid` status: the code, or 128 + the signal.
    public static func exitCode(fromWaitStatus status: Int32) -> Int32 {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Starts `tool` (a path, or a name on ``peerPath``) with posix_spawn and `TCP_NODELAY=1`: standard input
    /// from `stdinPath`, stdout to `stdoutPath`, stderr to `stderrPath` (nil: with stdout); nothing else of
    /// ours is inherited. The caller reaps the returned PID.
    public static func spawn(
        _ tool: String, _ arguments: [String], stdinPath: String = "/dev/null", stdoutPath: String, stderrPath: String?,
        environment: [String: String] = [:]
    ) throws -> pid_t {
        let path = locate(tool) ?? tool
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdinPath, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        if let stderrPath {
            posix_spawn_file_actions_addopen(&actions, 2, stderrPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var env = ProcessInfo.processInfo.environment
        env["TCP_NODELAY"] = "1"
        for (key, value) in environment { env[key] = value }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, envp)
        guard rc == 0 else { throw SpawnFailed(path: path, code: rc) }
        return pid
    }

    static func spawn(_ tool: String, _ arguments: [String], environment: [String: String], files: ProcessFiles) throws
        -> pid_t
    {
        try spawn(
            tool, arguments, stdinPath: files.input, stdoutPath: files.output, stderrPath: files.errorOutput,
            environment: environment)
    }

    /// The files a run's standard input, output and error live in.
    struct ProcessFiles {
        let input: String
        let output: String
        let errorOutput: String?

        init(stdin: String?, separateErrorOutput: Bool) throws {
            let base = NSTemporaryDirectory() + "px-run-" + UUID().uuidString
            input = base + ".in"
            output = base + ".out"
            errorOutput = separateErrorOutput ? base + ".err" : nil
            guard FileManager.default.createFile(atPath: input, contents: Data((stdin ?? "").utf8)) else {
                throw SpawnFailed(path: input, code: errno)
            }
        }

        func result(status: Int32) -> ProcessResult {
            func text(_ path: String?) -> String {
                path.map { String(decoding: FileManager.default.contents(atPath: $0) ?? Data(), as: UTF8.self) } ?? ""
            }
            return ProcessResult(
                status: exitCode(fromWaitStatus: status), output: text(output), errorOutput: text(errorOutput))
        }

        /// Removes the files (a file that cannot be removed stays in the temporary folder).
        func remove() {
            for path in [input, output, errorOutput].compactMap({ $0 }) { unlink(path) }
        }
    }
}

/// A long-running peer process (storescp, an SCP written in Python, a scripted hostile peer) with its
/// stdout and stderr in one log file. Stop it on every path: ``stop()`` (SIGTERM, then SIGKILL) or, from a
/// `defer`, ``kill()``.
public final class PeerProcess: Sendable {
    public let process: Process
    public let logFile: String

    /// Starts `tool` (a path, or a name looked up on ``TestSupport/peerPath``) with `TCP_NODELAY=1` and
    /// unbuffered Python output.
    /// `errorFile` keeps stderr apart from the log (for a px command whose stdout is NDJSON).
    public init(
        _ tool: String, _ arguments: [String], logFile: String, errorFile: String? = nil,
        environment: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestSupport.locate(tool) ?? tool)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["TCP_NODELAY"] = "1"
        env["PYTHONUNBUFFERED"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let handle = try Self.openForWriting(logFile)
        process.standardOutput = handle
        var errorHandle = handle
        if let errorFile { errorHandle = try Self.openForWriting(errorFile) }
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try handle.close()  // the child has its own copies
        if errorFile != nil { try errorHandle.close() }
        self.process = process
        self.logFile = logFile
    }

    /// `path` opened for writing and truncated in place with open(2). Not `FileManager.createFile`, which
    /// writes a new file and renames it over the path: given `/dev/null` it replaced the device with a
    /// regular file (as root), and every later reader of /dev/null got what others had written there.
    static func openForWriting(_ path: String) throws -> FileHandle {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestSupport.SpawnFailed(path: path, code: errno) }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    /// The log so far.
    public var log: String {
        String(decoding: FileManager.default.contents(atPath: self.logFile) ?? Data(), as: UTF8.self)
    }

    /// The JSON objects among the log's lines (the Python peers print one event per line).
    public var events: [JSONValue] {
        self.log.split(separator: "\n").compactMap { line in
            guard line.hasPrefix("{") else { return nil }
            do { return try JSONParser.parse(String(line)) } catch { return nil }
        }
    }

    /// Waits (max `seconds`) until an event line satisfies `predicate`; throws with the log when none does
    /// or the process exits first.
    public func waitForEvent(timeout seconds: Double = 20, _ predicate: (JSONValue) -> Bool) async throws -> JSONValue {
        _ = await self.waitFor(seconds: seconds) { self.events.contains(where: predicate) }
        if let event = self.events.first(where: predicate) { return event }
        throw PeerFailed(
            description: "\(self.process.executableURL?.lastPathComponent ?? "peer") did not report ready: \(self.log)")
    }

    public struct PeerFailed: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    /// Polls `condition` until it holds or `seconds` pass, or the process exits; true when it held.
    public func waitFor(seconds: Double = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            // Looked at once more after the deadline: a late wake-up must not miss a line already written.
            if condition() { return true }
            guard self.process.isRunning, ContinuousClock.now < deadline else { return condition() }
            do { try await Task.sleep(for: .milliseconds(50)) } catch { return condition() }
        }
    }

    /// `signal` (SIGTERM; px-listen also shuts down cleanly on SIGINT), up to `seconds` for a clean exit,
    /// then SIGKILL; waits without blocking the cooperative pool.
    public func stop(signal: Int32 = SIGTERM, seconds: Double = 5) async {
        let pid = self.process.processIdentifier
        guard self.process.isRunning else { return }
        Glibc.kill(pid, signal)
        _ = await TestSupport.poll(seconds: seconds) { !self.process.isRunning }
        if self.process.isRunning {
            Glibc.kill(pid, SIGKILL)
            _ = await TestSupport.poll(seconds: 5) { !self.process.isRunning }
        }
    }

    /// SIGKILL and wait (for a `defer`; storescp ignores SIGTERM while it waits in accept()).
    public func kill() {
        if self.process.isRunning {
            Glibc.kill(self.process.processIdentifier, SIGKILL)
            self.process.waitUntilExit()
        }
    }
}

extension TestSupport {
    /// Polls `condition` every 20 ms until it holds or `seconds` pass; true when it held. Use it wherever a
    /// test waits for something to happen, instead of a fixed sleep.
    public static func poll(seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if try await condition() { return true }
            guard ContinuousClock.now < deadline else { return try await condition() }
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return try await condition() }
        }
    }
}

extension TestSupport {
    /// ``poll(seconds:_:)`` for synchronous tests (blocks the calling thread between looks).
    public static func pollBlocking(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if try condition() { return true }
            guard ContinuousClock.now < deadline else { return try condition() }
            usleep(20_000)
        }
    }

    /// Waits until a DICOM peer on 127.0.0.1:`port` answers DCMTK's echoscu with `aeTitle` called; false
    /// when it did not within `seconds`.
    /// `extra`: more echoscu options (`+tls ...` for a TLS peer).
    public static func waitForEcho(port: Int, aeTitle: String, seconds: Double = 10, extra: [String] = []) async throws
        -> Bool
    {
        try await poll(seconds: seconds) {
            try await run("echoscu", ["-aec", aeTitle] + extra + ["127.0.0.1", String(port)]).status == 0
        }
    }
}
