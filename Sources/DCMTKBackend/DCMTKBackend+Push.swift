import Logging
import PXCore

extension DCMTKBackend {
    /// C-STORE SCU with `storescu -v -nh -R` (PS3.4 Annex B): one association for every sendable file
    /// (several only when the paths would overflow the argument list),
    /// only the contexts they need (`-R`), and no halt on a failed file (`-nh`), so each file's
    /// status comes from the log (``StoreSCULogParser``). Files px's planning rejected are never
    /// passed to storescu (it aborts the association on a non-DICOM file).
    public func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        var results: [PushFileResult?] = Array(repeating: nil, count: request.files.count)
        var pending: [Int] = []
        for (index, file) in request.files.enumerated() {
            if let error = file.error {
                results[index] = PushFileResult(file: file, status: nil, error: error)
            } else {
                pending.append(index)
            }
        }
        for result in results.compactMap({ $0 }) { await onFile(result) }
        guard !pending.isEmpty else { return PushResult(files: results.map { $0! }) }

        let base = ["-v", "-nh", "-R"] + Self.associationArguments(connection) + Self.peerArguments(connection)
        var sent = 0
        var open: [Int] = []  // files of the current batch not yet resolved, in argument order
        func record(_ event: StoreSCULogParser.Event) async {
            let path: String
            switch event {
            case .status(let p, _), .notSent(let p, _, _): path = p
            }
            // A file the association ended under stays open: it is "not sent", and the run's failure
            // (from the log) is what ended it.
            if case .notSent(_, false, let reason) = event, StoreSCULogParser.associationLost(reason) { return }
            guard let slot = open.firstIndex(where: { request.files[$0].path == path }) else { return }
            let index = open.remove(at: slot)
            let file = request.files[index]
            let result: PushFileResult
            switch event {
            case .status(_, let status):
                sent += 1
                result = PushFileResult(file: file, status: status)
            case .notSent(_, let noContext, let reason):
                result = noContext ? .noContext(file) : PushFileResult(file: file, status: nil, error: .io("cannot send the file: \(reason)", path: file.path))
            }
            results[index] = result
            await onFile(result)
        }
        // One storescu (one association) per batch of paths that fits the argument list comfortably;
        // one batch unless the paths take more than 512 KiB. The deadline covers all of them.
        let start = monotonicSeconds()
        var failure: PXError?
        var anySent = false
        batches: for batch in Self.batches(pending, paths: request.files.map(\.path), limit: 512 * 1024) {
            var deadline = connection.timeouts.deadline
            if let total = deadline { deadline = max(0.001, total - (monotonicSeconds() - start)) }
            var parser = StoreSCULogParser()
            sent = 0
            open = batch
            let arguments = base + batch.map { request.files[$0].path }
            let outcome = try await runner("storescu").run(arguments, deadline: deadline, logger: logger) { line in
                if let event = parser.feed(line) { await record(event) }
            }
            if let event = parser.finish() { await record(event) }
            anySent = anySent || sent > 0
            let ended = !open.isEmpty || outcome.timedOut || outcome.signal != nil
            if ended, let error = Self.failure(tool: "storescu", outcome: outcome, connection: connection) {
                // Nothing stored yet (refused, rejected, no context at all): the push failed. Otherwise
                // report what was stored and what ended the association.
                guard anySent else { throw error }
                failure = error
                break batches
            }
        }
        return PushResult(
            files: results.enumerated().map { index, result in result ?? PushResult.notSent(request.files[index]) },
            failure: failure)
    }

    /// `indices` split so that each batch's paths take at most `limit` bytes (at least one path each).
    static func batches(_ indices: [Int], paths: [String], limit: Int) -> [[Int]] {
        var out: [[Int]] = []
        var current: [Int] = []
        var size = 0
        for index in indices {
            let length = paths[index].utf8.count + 1
            if !current.isEmpty && size + length > limit {
                out.append(current)
                current = []
                size = 0
            }
            current.append(index)
            size += length
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}
