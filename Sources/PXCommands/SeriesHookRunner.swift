import Logging
import PXCore
import PXStorage
import Subprocess
import Synchronization
import SystemPackage

/// Runs px-listen's `--on-series-complete CMD ARGS...` once per completed series, with swift-subprocess:
/// an argument array (never a shell), the series described in the environment (PX_SERIES_DIR,
/// PX_SERIES_UID, PX_STUDY_UID, PX_PATIENT_ID, PX_INSTANCES, PX_COMPLETION_REASON, added to px-listen's
/// own), stdin empty, its stdout and stderr sent to px-listen's stderr so stdout stays NDJSON.
///
/// Each hook runs in its own task: the receiver never waits for one, so a hook that hangs delays
/// nothing but ``waitForAll(upTo:)`` at shutdown, which gives up after its deadline.
public final class SeriesHookRunner: Sendable {
    public let command: [String]
    let logger: Logger
    private let running = Atomic<Int>(0)

    public init(command: [String], logger: Logger) {
        self.command = command
        self.logger = logger
    }

    /// Hooks started and not yet ended.
    public var runningCount: Int { running.load(ordering: .relaxed) }

    /// The variables a hook gets for `series`, on top of px-listen's environment.
    public static func environment(for series: SeriesCompletion) -> [Environment.Key: String?] {
        [
            "PX_SERIES_DIR": series.directory,
            "PX_SERIES_UID": series.seriesInstanceUID,
            "PX_STUDY_UID": series.studyInstanceUID,
            "PX_PATIENT_ID": series.patientID,
            "PX_INSTANCES": String(series.instances),
            "PX_COMPLETION_REASON": series.reason,
        ]
    }

    /// Starts the hook for `series` and returns at once (nothing to do without a command).
    public func run(for series: SeriesCompletion) {
        guard let name = command.first else { return }
        // A name with a slash is a path; a bare name is looked up in PATH, like a shell would.
        let executable: Executable = name.contains("/") ? .path(FilePath(name)) : .name(name)
        let arguments = Arguments(Array(command.dropFirst()))
        let environment = Environment.inherit.updating(Self.environment(for: series))
        let logger = self.logger
        running.add(1, ordering: .relaxed)
        Task {
            defer { self.running.subtract(1, ordering: .relaxed) }
            do {
                let result = try await Subprocess.run(
                    executable, arguments: arguments, environment: environment,
                    input: .none, output: .currentStandardError, error: .currentStandardError)
                if result.terminationStatus != .exited(0) {
                    logger.warning(
                        "--on-series-complete failed",
                        metadata: ["series.dir": "\(series.directory)", "status": "\(result.terminationStatus)"])
                }
            } catch {
                logger.error("cannot run --on-series-complete", metadata: ["command": "\(name)", "error": "\(error)"])
            }
        }
    }

    /// Waits (polling, blocking no thread) until every hook has ended or `seconds` passed.
    public func waitForAll(upTo seconds: Double) async {
        let clock = ContinuousClock()
        let end = clock.now + .milliseconds(Int64(seconds * 1000))
        while runningCount > 0 && clock.now < end {
            do { try await Task.sleep(for: .milliseconds(20)) } catch { return }
        }
    }
}
