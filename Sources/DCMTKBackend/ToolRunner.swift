import Logging
import PXCore
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// Runs one DCMTK tool with an argument array (never a shell), `TCP_NODELAY=1` and `LC_ALL=C` in
/// its environment, hands each stderr line to a handler as it arrives, and kills the tool when the
/// deadline passes or the calling task is cancelled.
struct ToolRunner: Sendable {
    /// The tool's name (`findscu`), used for PATH lookup and messages.
    let tool: String
    /// An explicit executable path (pypx's `--executable`), or `nil` to search PATH.
    let executablePath: String?
    /// The child's environment: ``environment`` unless a tool needs more (echoscu's `DCMDICTPATH`).
    var childEnvironment: Environment = ToolRunner.environment

    struct Outcome: Sendable {
        var exitCode: Int32?
        var signal: Int32?
        /// The `F:`, `E:` and `W:` lines (at most 200), for classification.
        var diagnostics: [DCMTKLogLine]
        /// Whether the deadline killed the tool.
        var timedOut: Bool
    }

    /// The environment every DCMTK child gets: Nagle off (DCMTK leaves it on otherwise, and receiving
    /// stalls on delayed acknowledgements) and a fixed locale for stable messages.
    static let environment = Environment.inherit.updating(["TCP_NODELAY": "1", "LC_ALL": "C"])

    /// Runs the tool to completion.
    ///
    /// `onStart` runs beside the log reading with the child's process ID, from its start until the tool
    /// ends (it is cancelled then); an error it throws kills the tool and is thrown.
    /// - Throws: ``PXError/toolMissing(_:)`` when the tool cannot be found or started; rethrows the
    ///   handler's errors and `CancellationError`.
    func run(
        _ arguments: [String], deadline: Double?, logger: Logger,
        onStart: (@Sendable (Int32) async throws(PXError) -> Void)? = nil,
        onLine: (DCMTKLogLine) async throws(PXError) -> Void
    ) async throws(PXError) -> Outcome {
        let executable: Executable
        if let executablePath {
            guard access(executablePath, X_OK) == 0 else { throw PXError.toolMissing(executablePath) }
            executable = .path(FilePath(executablePath))
        } else if let found = Self.locate(tool) {
            // Resolved here with access(2): given a bare name, swift-subprocess tries execve in each
            // PATH directory from a fresh child, which costs a failed exec per directory before the right one.
            executable = .path(FilePath(found))
        } else {
            throw PXError.toolMissing(tool)
        }
        logger.debug(
            "running DCMTK tool",
            metadata: ["tool": "\(tool)", "arguments": "\(DCMTKBackend.redactedArguments(arguments))"])
        let killedByDeadline = DeadlineFlag()
        var diagnostics: [DCMTKLogLine] = []
        do {
            let result = try await Subprocess.run(
                executable, arguments: Arguments(arguments), environment: childEnvironment,
                input: .none, output: .discarded, error: .sequence
            ) { execution in
                let pid = execution.processIdentifier.value
                let running = RunningFlag()
                defer { running.end() }
                // px-move, px-get on SIGINT/SIGTERM: the signal goes to the tool (movescu and getscu end on it), and
                // after the grace it is killed.
                let cancellation = RetrieveCancellation.current
                cancellation?.onRequest { signal in
                    guard running.isRunning else { return }
                    logger.notice("forwarding the signal to the DCMTK tool", metadata: ["tool": "\(tool)"])
                    kill(pid, signal)
                    let grace = cancellation?.grace ?? 0
                    Task {
                        do { try await Task.sleep(for: .seconds(grace)) } catch { return }
                        if running.isRunning { kill(pid, SIGKILL) }
                    }
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    if let deadline {
                        group.addTask {
                            do {
                                try await Task.sleep(for: .milliseconds(Int(deadline * 1000)))
                            } catch {
                                return
                            }
                            killedByDeadline.value.store(true, ordering: .relaxed)
                            kill(pid, SIGKILL)
                        }
                    }
                    if let onStart {
                        group.addTask {
                            do {
                                try await onStart(pid)
                            } catch {
                                kill(pid, SIGKILL)
                                throw error
                            }
                        }
                    }
                    for try await raw in execution.standardError.strings(bufferingPolicy: .unbounded) {
                        let line = DCMTKLogLine(raw)
                        if line.level == .fatal || line.level == .error || line.level == .warning {
                            if diagnostics.count < 200 { diagnostics.append(line) }
                            logger.debug("DCMTK diagnostic", metadata: ["tool": "\(tool)", "line": "\(raw)"])
                        } else {
                            logger.trace(
                                "DCMTK log", metadata: ["tool": "\(tool)", "line": "\(DCMTKLogLine.redacted(raw))"])
                        }
                        try await onLine(line)
                    }
                    group.cancelAll()
                }
            }
            var outcome = Outcome(exitCode: nil, signal: nil, diagnostics: diagnostics, timedOut: false)
            switch result.terminationStatus {
            case .exited(let code): outcome.exitCode = Int32(code)
            case .signaled(let signal): outcome.signal = Int32(signal)
            }
            outcome.timedOut = killedByDeadline.value.load(ordering: .relaxed)
            logger.debug("DCMTK tool ended", metadata: ["tool": "\(tool)", "status": "\(result.terminationStatus)"])
            return outcome
        } catch let error as SubprocessError where error.code == .executableNotFound || error.code == .spawnFailed {
            throw PXError.toolMissing(executablePath ?? tool)
        } catch {
            throw PXError.from(error)
        }
    }
}

extension ToolRunner {
    /// The first executable `tool` in the directories of PATH, or `nil`.
    static func locate(_ tool: String) -> String? {
        let path = ProcessEnvironment.value("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(tool)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// Whether a tool's process is still ours to signal (its ID is not reused before it is reaped).
final class RunningFlag: Sendable {
    private let value = Atomic<Bool>(true)
    var isRunning: Bool { value.load(ordering: .acquiring) }
    func end() { value.store(false, ordering: .releasing) }
}

/// Set when the deadline killed a tool.
final class DeadlineFlag: Sendable {
    let value = Atomic<Bool>(false)
}
