import DICOMData
import Foundation
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

extension TestSupport {
    /// The result of a finished process.
    public struct ProcessResult: Sendable {
        /// The exit code, or 128 + the signal that ended the process.
        public var status: Int32
        /// Stdout and stderr together, or stdout alone when stderr was kept apart.
        public var output: String
        /// Stderr, when it was kept apart from stdout.
        public var errorOutput: String = ""
        /// ``output``'s bytes as the program wrote them.
        public var outputBytes = Data()
    }

    /// A process could not be started.
    public struct SpawnFailed: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
        public init(path: String, code: Int32) {
            self.init(path: path, reason: String(cString: strerror(code)))
        }
        public var description: String { "cannot start \(path): \(reason)" }
    }

    /// Runs a program to completion through swift-subprocess with `TCP_NODELAY=1` in its environment (DCMTK
    /// reads it). `tool` is a path or a name looked up on ``peerPath``. Standard input comes from `stdin`
    /// (empty when nil); stdout and stderr go to files, not pipes (a peer a script leaves running in the
    /// background would hold a pipe open), and are returned together unless `separateErrorOutput` keeps
    /// stderr apart (for tools that print JSON).
    ///
    /// Never blocks a thread of the cooperative pool (as many threads as cores, and servers under test need
    /// them): swift-subprocess awaits the exit on its own monitor thread. When the calling task is cancelled
    /// (a time limit), the child is killed and reaped.
    public static func run(
        _ tool: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:],
        separateErrorOutput: Bool = false
    ) async throws -> ProcessResult {
        let files = try ProcessFiles(stdin: stdin, separateErrorOutput: separateErrorOutput)
        defer { files.remove() }
        let path = locate(tool) ?? tool
        let streams = try files.open()
        let environment = childEnvironment(environment)
        let result: ExecutionResult<Void, FileDescriptorOutput, FileDescriptorOutput>
        do {
            result = try await withTaskExecutorPreference(ProcessThread.shared) {
                try await Subprocess.run(
                    .path(FilePath(path)), arguments: Arguments(arguments), environment: environment,
                    input: .fileDescriptor(streams.input, closeAfterSpawningProcess: true),
                    output: .fileDescriptor(streams.output, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(streams.error, closeAfterSpawningProcess: true))
            }
        } catch let error as SubprocessError {
            throw SpawnFailed(path: path, reason: "\(error)")
        }
        return files.result(status: exitCode(result.terminationStatus))
    }

    /// The exit code of a swift-subprocess termination status: the code, or 128 + the signal.
    public static func exitCode(_ status: TerminationStatus) -> Int32 {
        switch status {
        case .exited(let code): Int32(code)
        case .signaled(let signal): 128 + Int32(signal)
        }
    }

    /// The exit code of a `waitpid` status: the code, or 128 + the signal.
    public static func exitCode(fromWaitStatus status: Int32) -> Int32 {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    /// Our environment with `TCP_NODELAY=1` (DCMTK reads it) and `environment` on top.
    static func childEnvironment(_ environment: [String: String]) -> Subprocess.Environment {
        var values: [Subprocess.Environment.Key: String?] = ["TCP_NODELAY": "1"]
        for (key, value) in environment { values[Subprocess.Environment.Key(stringLiteral: key)] = value }
        return .inherit.updating(values)
    }

    /// `path` opened for writing and truncated in place with open(2). Not `FileManager.createFile`, which
    /// writes a new file and renames it over the path: given `/dev/null` it replaced the device with a
    /// regular file (as root), and every later reader of /dev/null got what others had written there.
    static func openForWriting(_ path: String) throws -> FileDescriptor {
        do {
            return try FileDescriptor.open(
                FilePath(path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                permissions: [.ownerReadWrite, .groupRead, .otherRead])
        } catch {
            throw SpawnFailed(path: path, reason: "\(error)")
        }
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

        /// Standard input, output and error for the child (error: a duplicate of output when not kept apart).
        func open() throws -> (input: FileDescriptor, output: FileDescriptor, error: FileDescriptor) {
            let input: FileDescriptor
            do {
                input = try FileDescriptor.open(FilePath(self.input), .readOnly, options: [.closeOnExec])
            } catch {
                throw SpawnFailed(path: self.input, reason: "\(error)")
            }
            let output = try TestSupport.openForWriting(self.output)
            let error: FileDescriptor
            if let errorOutput {
                error = try TestSupport.openForWriting(errorOutput)
            } else {
                error = try output.duplicate()
            }
            return (input, output, error)
        }

        func result(status: Int32) -> ProcessResult {
            let bytes = FileManager.default.contents(atPath: output) ?? Data()
            let errorBytes = errorOutput.flatMap { FileManager.default.contents(atPath: $0) } ?? Data()
            return ProcessResult(
                status: status, output: String(decoding: bytes, as: UTF8.self),
                errorOutput: String(decoding: errorBytes, as: UTF8.self), outputBytes: bytes)
        }

        /// Removes the files (a file that cannot be removed stays in the temporary folder).
        func remove() {
            for path in [input, output, errorOutput].compactMap({ $0 }) { unlink(path) }
        }
    }
}

/// The thread that spawns, watches and reaps the tests' child processes: a task executor of its own, so a
/// child starts at once and its exit is seen even while CPU-bound tests hold every thread of the cooperative
/// pool (two on a 2-core machine). Its jobs are short: a spawn, a look at the child, a state change.
final class ProcessThread: TaskExecutor, @unchecked Sendable {
    static let shared = ProcessThread()

    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [unowned self] in self.run() }
        thread.name = "px-test-processes"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}

/// A long-running child process whose lifetime a test controls: a peer (storescp, an SCP written in Python,
/// Orthanc, a scripted hostile peer), a sender killed mid-transfer, or the px-listen under test. Stdout and
/// stderr go to one log file (or stderr to `errorFile`), written by the child itself, so a busy test never
/// slows it down.
///
/// It runs inside a task that holds `Subprocess.run`'s body open until the process exits, so signals go
/// through swift-subprocess's process descriptor and can never reach another process that reused the PID.
/// Stop it on every path: ``stop(signal:seconds:)`` (the signal, then SIGKILL), or from a `defer`,
/// ``kill()``; a PeerProcess that is released while its child still runs kills it.
public final class PeerProcess: Sendable {
    public let logFile: String
    /// The program's file name, for messages.
    public let name: String
    private let shared: Shared
    private let task: Task<Int32, Never>

    /// The state the starting task and the test share.
    private final class Shared: Sendable {
        let state = Mutex<State>(.starting(pending: []))
    }

    private typealias Running = Execution<FileDescriptorInput, FileDescriptorOutput, FileDescriptorOutput>

    private enum State: Sendable {
        /// Not started yet; the signals asked for before the start are sent once it runs.
        case starting(pending: [Int32])
        case running(Running)
        /// Exited (or could not start): no signal is sent any more.
        case ended(status: Int32?, failure: String?)
    }

    /// Starts `tool` (a path, or a name looked up on ``TestSupport/peerPath``) with `TCP_NODELAY=1` and
    /// unbuffered Python output. `errorFile` keeps stderr apart from the log (for a px command whose stdout
    /// is NDJSON). Throws when a log file cannot be opened; a program that cannot start is reported by
    /// ``waitForEvent(timeout:_:)``, ``failure`` and ``waitForExit()``.
    public init(
        _ tool: String, _ arguments: [String], logFile: String, errorFile: String? = nil,
        environment: [String: String] = [:]
    ) throws {
        let path = TestSupport.locate(tool) ?? tool
        let output = try TestSupport.openForWriting(logFile)
        let errorOutput: FileDescriptor
        let input: FileDescriptor
        do {
            errorOutput = try errorFile.map(TestSupport.openForWriting) ?? output.duplicate()
            do {
                input = try FileDescriptor.open("/dev/null", .readOnly, options: [.closeOnExec])
            } catch {
                try? errorOutput.close()
                throw TestSupport.SpawnFailed(path: "/dev/null", reason: "\(error)")
            }
        } catch {
            try? output.close()
            throw error
        }
        var env = environment
        if env["PYTHONUNBUFFERED"] == nil { env["PYTHONUNBUFFERED"] = "1" }
        let shared = Shared()
        self.shared = shared
        self.logFile = logFile
        self.name = (path as NSString).lastPathComponent
        let environment = TestSupport.childEnvironment(env)
        self.task = Task(executorPreference: ProcessThread.shared) {
            do {
                let result = try await Subprocess.run(
                    .path(FilePath(path)), arguments: Arguments(arguments), environment: environment,
                    input: .fileDescriptor(input, closeAfterSpawningProcess: true),
                    output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                    error: .fileDescriptor(errorOutput, closeAfterSpawningProcess: true)
                ) { execution in
                    let pending = shared.state.withLock { state in
                        guard case .starting(let pending) = state else { return [Int32]() }
                        state = .running(execution)
                        return pending
                    }
                    for signal in pending { try? execution.send(signal: Signal(rawValue: signal)) }
                    await Self.waitUntilExited(execution.processIdentifier)
                    // Before the body returns: swift-subprocess reaps the child (and frees its PID) only after.
                    shared.state.withLock { $0 = .ended(status: nil, failure: nil) }
                }
                let status = TestSupport.exitCode(result.terminationStatus)
                shared.state.withLock { $0 = .ended(status: status, failure: nil) }
                return status
            } catch {
                let failure = TestSupport.SpawnFailed(path: path, reason: "\(error)").description
                shared.state.withLock { $0 = .ended(status: nil, failure: failure) }
                return -1
            }
        }
    }

    deinit {
        kill()
    }

    /// Waits without blocking a thread until the child has exited (it stays a zombie, unreaped, until the
    /// body of `Subprocess.run` returns): `waitid(WNOWAIT)` every 10 ms.
    private static func waitUntilExited(_ process: ProcessIdentifier) async {
        while true {
            var info = siginfo_t()
            let rc = waitid(P_PID, id_t(process.value), &info, WEXITED | WNOHANG | WNOWAIT)
            if rc != 0 && errno != EINTR { return }
            if rc == 0 && info._sifields._sigchld.si_pid == process.value { return }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return }
        }
    }

    /// Whether the child is (or is about to be) running.
    public var isRunning: Bool {
        shared.state.withLock {
            if case .ended = $0 { return false }
            return true
        }
    }

    /// The child's PID while it runs (for /proc), else nil.
    public var processIdentifier: pid_t? {
        shared.state.withLock {
            if case .running(let execution) = $0 { return execution.processIdentifier.value }
            return nil
        }
    }

    /// Why the program could not be started, once that is known.
    public var failure: String? {
        shared.state.withLock {
            if case .ended(_, let failure) = $0 { return failure }
            return nil
        }
    }

    /// Sends `signal` to the child while it runs (queued until it has started); false once it has exited.
    @discardableResult
    public func send(signal: Int32) -> Bool {
        shared.state.withLock { state in
            switch state {
            case .starting(let pending):
                state = .starting(pending: pending + [signal])
                return true
            case .running(let execution):
                return (try? execution.send(signal: Signal(rawValue: signal))) != nil
            case .ended:
                return false
            }
        }
    }

    /// Waits for the exit; the exit code (128 + the signal for a killed child), or -1 when it did not start.
    @discardableResult
    public func waitForExit() async -> Int32 {
        await task.value
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
        throw PeerFailed(description: "\(self.name) did not report ready: \(self.failure ?? "") \(self.log)")
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
            guard self.isRunning, ContinuousClock.now < deadline else { return condition() }
            do { try await Task.sleep(for: .milliseconds(50)) } catch { return condition() }
        }
    }

    /// `signal` (SIGTERM; px-listen also shuts down cleanly on SIGINT), up to `seconds` for a clean exit,
    /// then SIGKILL; waits for the exit without blocking the cooperative pool. Returns the exit code
    /// (128 + the signal when a signal ended it; -1 when it had to be killed after `seconds`, or never started).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, seconds: Double = 5) async -> Int32 {
        guard self.send(signal: signal) else { return await self.waitForExit() }
        let exited = await TestSupport.poll(seconds: seconds) { !self.isRunning }
        if !exited {
            self.send(signal: SIGKILL)
            await self.waitForExit()
            return -1
        }
        return await self.waitForExit()
    }

    /// SIGKILL (for a `defer`; storescp ignores SIGTERM while it waits in accept()). Returns at once; the
    /// child is reaped in the background (``waitForExit()`` waits for that).
    public func kill() {
        self.send(signal: SIGKILL)
    }

    /// Sends `signal` to the child the moment `condition` (given its PID) holds, polled every millisecond on a
    /// thread of its own: the cooperative pool, which a whole test run on 2 cores can starve for seconds, would
    /// look too late to catch a child mid-way through something. False when `seconds` pass or the child exits
    /// first.
    public func send(
        signal: Int32, within seconds: Double, when condition: @escaping @Sendable (pid_t) -> Bool
    ) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let watcher = Thread {
                let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
                while ContinuousClock.now < deadline {
                    let pid = self.processIdentifier
                    if pid == nil && !self.isRunning { break }
                    if let pid, condition(pid) {
                        continuation.resume(returning: Glibc.kill(pid, signal) == 0)
                        return
                    }
                    usleep(1000)
                }
                continuation.resume(returning: false)
            }
            watcher.start()
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

    /// ``poll(seconds:_:)`` for synchronous code: blocks the calling thread between looks (a thread of the
    /// cooperative pool when called from a test), so tests use ``poll(seconds:_:)``.
    @available(*, deprecated, message: "blocks a thread of the cooperative pool; use poll(seconds:_:)")
    public static func pollBlocking(seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if try condition() { return true }
            guard ContinuousClock.now < deadline else { return try condition() }
            usleep(20_000)
        }
    }

    /// Kills a background peer that a start script left running (dcmqrscp-start.sh, orthanc-start.sh) by the
    /// PID in `pidFile`, with its process group when it leads one, and removes the file: synchronous, for a
    /// `defer` (scripts/peer-stop.sh is the graceful way, with a wait). The peer is not our child (its
    /// script has exited), so there is nothing to reap. A missing file or a dead process is no error.
    public static func killPeer(pidFile: String) {
        defer { unlink(pidFile) }
        guard let text = FileManager.default.contents(atPath: pidFile),
            let pid = pid_t(String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)),
            pid > 1
        else { return }
        if getpgid(pid) == pid { Glibc.kill(-pid, SIGKILL) }
        Glibc.kill(pid, SIGKILL)
    }

    /// Waits until a DICOM peer on 127.0.0.1:`port` answers DCMTK's echoscu with `aeTitle` called; false
    /// when it did not within `seconds` (30 by default: Orthanc took over 10 s to answer once while every suite
    /// started at once on 2 cores; a peer that is up answers at once).
    /// `extra`: more echoscu options (`+tls ...` for a TLS peer).
    public static func waitForEcho(port: Int, aeTitle: String, seconds: Double = 30, extra: [String] = []) async throws
        -> Bool
    {
        try await poll(seconds: seconds) {
            try await run("echoscu", ["-aec", aeTitle] + extra + ["127.0.0.1", String(port)]).status == 0
        }
    }
}
