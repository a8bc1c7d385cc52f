import DICOMData
import PX
import PXCommandLine
import PXCore
import Synchronization

/// px-push: every file on one association with C-STORE (PS3.4 §B.2), or in STOW-RS requests to a DICOMweb
/// service (PS3.18 §10.5), a status per file.
public enum PushCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        paths: [String], window: UInt16, commit: CommitOptions = CommitOptions(), output: OutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-push")
        var backend = backend
        if commit.commit && backend.backend == .auto {
            // Storage commitment is the native backend's (no DCMTK tool requests it): `auto` runs that one.
            backend.backend = .native
        }
        try await CommandRunner.run(
            output: output.output, backend: backend, need: .store, peer: connection, timeouts: timeouts.timeouts
        ) { peer, data in
            var request = try PushRequest(paths: paths)
            request.window = window
            request.commitment = try commit.settings()
            let showProgress = CommandOutput.standardErrorIsTerminal
            let total = request.files.count
            let done = Counter()
            let pushed = try await peer.push(request, logger: logger) { file in
                let n = done.increment()
                if showProgress {
                    CommandOutput.writeStandardError(
                        "\rpx-push: \(n)/\(total) \(file.succeeded ? "ok" : "FAILED") \(HumanText.escaped(file.file.path))   "
                    )
                }
            }
            if showProgress { CommandOutput.writeStandardError("\n") }
            data = PXOutput.json(pushed)
            if let ended = pushed.failure { return ended }
            if pushed.failed > 0 {
                return .partialFailure(failed: pushed.failed, total: pushed.files.count, what: "files")
            }
            if let failure = pushed.commitmentFailure { return failure }
            if let commitment = pushed.commitment, !commitment.allCommitted {
                return .partialFailure(
                    failed: commitment.requested.count - commitment.committed.count,
                    total: commitment.requested.count, what: "instances to commit")
            }
            return nil
        }
    }
}

/// Files done so far, for the progress line.
final class Counter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() -> Int {
        value.add(1, ordering: .relaxed).newValue
    }
}
