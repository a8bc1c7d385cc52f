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
        // The files' results go to a temporary file, one at a time, and stream into the envelope: no JSON of the
        // whole report is built in memory (issue 34). A spool that cannot be made is the command's error.
        var spoolingOutput = output.output
        let made = Result { () throws(PXError) in try JSONArraySpool(pretty: spoolingOutput.pretty, member: "files") }
        if case .success(let spool) = made { spoolingOutput.spool = spool }
        try await CommandRunner.run(
            output: spoolingOutput, backend: backend, need: .store, peer: connection, timeouts: timeouts.timeouts
        ) { peer, data in
            let spool = try made.get()
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
            for file in pushed.files { spool.append(PXOutput.json(file)) }
            spool.complete()
            data = JSONValueEncoder.encode(PXOutput.PushOutput(pushed, files: []))
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
