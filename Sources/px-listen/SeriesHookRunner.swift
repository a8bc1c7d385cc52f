import Dispatch
import Logging
import PXCore
import PXStorage
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Runs `--on-series-complete CMD ARGS...` once per completed series: posix_spawn with an argument array
/// (never a shell), the series described in the environment (PX_SERIES_DIR, PX_SERIES_UID, PX_STUDY_UID,
/// PX_PATIENT_ID, PX_INSTANCES, PX_COMPLETION_REASON), its stdout sent to our stderr so stdout stays NDJSON.
/// Children are reaped on a Dispatch thread, never on the cooperative pool.
final class SeriesHookRunner: Sendable {
    let command: [String]
    let logger: Logger
    private let running = Atomic<Int>(0)

    init(command: [String], logger: Logger) {
        self.command = command
        self.logger = logger
    }

    func run(for series: SeriesCompletion) {
        guard let executable = command.first else { return }
        var environment: [String: String] = [:]
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") { environment[String(text[..<eq])] = String(text[text.index(after: eq)...]) }
            index += 1
        }
        environment["PX_SERIES_DIR"] = series.directory
        environment["PX_SERIES_UID"] = series.seriesInstanceUID
        environment["PX_STUDY_UID"] = series.studyInstanceUID
        environment["PX_PATIENT_ID"] = series.patientID
        environment["PX_INSTANCES"] = String(series.instances)
        environment["PX_COMPLETION_REASON"] = series.reason
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, 2, 1)
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = executable.contains("/")
            ? posix_spawn(&pid, executable, &actions, nil, argv, envp)
            : posix_spawnp(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else {
            logger.error("cannot run --on-series-complete", metadata: ["command": "\(executable)", "errno": "\(rc)"])
            return
        }
        running.add(1, ordering: .relaxed)
        let logger = self.logger
        let child = pid
        DispatchQueue.global().async {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            if status != 0 {
                logger.warning("--on-series-complete failed", metadata: ["series.dir": "\(series.directory)", "status": "\(status)"])
            }
            self.running.subtract(1, ordering: .relaxed)
        }
    }

    /// Waits (polling, off no thread) until every hook has ended or `seconds` passed.
    func waitForAll(upTo seconds: Double) async {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int64(seconds * 1000))
        while running.load(ordering: .relaxed) > 0 && clock.now < end {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
        }
    }
}
