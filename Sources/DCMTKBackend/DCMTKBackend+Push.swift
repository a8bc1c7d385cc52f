import Logging
import PXCore

extension DCMTKBackend {
    /// C-STORE SCU with `storescu -v -nh -xf PROFILE` (PS3.4 Annex B): one association for every sendable
    /// file (several when the paths would overflow the argument list, the files need more than 128
    /// presentation contexts, or the peer aborted one: see ``PushSession``), each file's failure in
    /// storescu's own words, only the contexts they need, each file's own transfer syntax first and the
    /// lossless fallbacks after it (``StoreSCUProfile``, the native backend's proposals), and no halt on a
    /// failed file (`-nh`), so each file's status comes from the log (``StoreSCULogParser``). Files px's
    /// planning rejected are never passed to storescu (it aborts the association on a non-DICOM file).
    public func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        if request.commitment != nil {
            // No DCMTK tool requests storage commitment (PS3.4 Annex J); checked before anything is sent.
            throw .usage("--commit is unsupported by the dcmtk backend (unsupportedByBackend): use --backend native")
        }
        return try await PXError.catching {
            try await self.pushFiles(request, connection: connection, logger: logger, onFile: onFile)
        }
    }

    private func pushFiles(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws -> PushResult {
        var session = PushSession(request)
        for result in session.planned { await onFile(result) }
        // A SOP class or transfer syntax that is not a UID cannot be proposed (nor written into the profile).
        for index in session.unanswered where !StoreSCUProfile.canPropose(request.files[index]) {
            session.withdraw(index)
            await onFile(session.finish(index, .noContext(request.files[index])))
        }
        guard !session.unanswered.isEmpty else { return session.result(failure: nil) }
        let profiles = try TemporaryDirectory(prefix: "px-push")
        defer { profiles.remove(logger: logger) }
        var profileCount = 0

        let base =
            ["-v", "-nh"] + Self.associationArguments(connection)
            + (try Self.userIdentityArguments(connection, tool: "storescu"))
        var open: [Int] = []  // files of the current batch not yet resolved, in argument order
        func record(_ event: StoreSCULogParser.Event, associationWentOn: Bool) async {
            let path: String
            switch event {
            case .status(let p, _), .notSent(let p, _, _): path = p
            }
            // A file the association ended under stays open: it is "not sent", and the run's failure
            // (from the log) is what ended it. A file storescu gave up on while the association went on
            // (it could not convert the data set, it could not read the file) failed on its own.
            if case .notSent(_, false, let reason) = event, !associationWentOn,
                StoreSCULogParser.associationLost(reason)
            {
                return
            }
            guard let slot = open.firstIndex(where: { request.files.path(at: $0) == path }) else { return }
            let index = open.remove(at: slot)
            let file = request.files[index]
            let result: PushFileResult
            switch event {
            case .status(_, let status):
                result = PushFileResult(file: file, status: status)
            case .notSent(_, let noContext, let reason):
                if noContext { session.withdraw(index) }
                result =
                    noContext
                    ? .noContext(file)
                    : PushFileResult(
                        file: file, status: nil, error: .io("cannot send the file: \(reason)", path: file.path))
            }
            await onFile(session.finish(index, result))
        }
        // One storescu (one association) per batch of paths that fits the argument list comfortably;
        // one batch unless the paths take more than 512 KiB. The deadline covers all of them. When an
        // association ends early, a new storescu goes on with the files not yet answered (PushSession).
        let start = monotonicSeconds()
        var failure: PXError?
        var work = session.unanswered
        runs: while !work.isEmpty {
            for batch in Self.batches(work, files: request.files, limit: 512 * 1024) {
                var deadline = connection.timeouts.deadline
                if let total = deadline { deadline = max(0.001, total - (monotonicSeconds() - start)) }
                var parser = StoreSCULogParser()
                open = batch
                var sentHere: [Int] = []
                session.startAssociation()
                var profile = StoreSCUProfile()
                for index in batch { _ = profile.add(request.files[index]) }
                profileCount += 1
                let profilePath = try profile.write(in: profiles, number: profileCount)
                let arguments =
                    base + ["-xf", profilePath, StoreSCUProfile.name] + Self.peerArguments(connection)
                    + batch.map { request.files.path(at: $0) }
                let outcome = try await runner("storescu").run(arguments, deadline: deadline, logger: logger) { line in
                    if line.level == .info, line.text.hasPrefix("Sending file: "), parser.associationLost == nil {
                        let path = line.text.dropFirst("Sending file: ".count)
                        if let index = open.first(where: { request.files.path(at: $0) == path }) {
                            session.sent(index)
                            sentHere.append(index)
                        }
                    }
                    if let event = parser.feed(line) {
                        await record(event, associationWentOn: parser.associationWentOn)
                    }
                }
                if let event = parser.finish() { await record(event, associationWentOn: false) }
                let ended = !open.isEmpty || outcome.timedOut || outcome.signal != nil
                // With -nh storescu may exit 0 after an abort: its log says the association was lost.
                let lost = parser.associationLost.map { PXError.aborted("association aborted: \($0)") }
                if ended, let error = Self.failure(tool: "storescu", outcome: outcome, connection: connection) ?? lost {
                    let inFlight = sentHere.filter { open.contains($0) }
                    // Nothing went out (refused, rejected, no context at all): the push failed.
                    if session.associations == 1 && inFlight.isEmpty && !session.anyAnswered { throw error }
                    let (failed, goOn) = session.associationEnded(by: error, inFlight: inFlight)
                    for result in failed { await onFile(result) }
                    if goOn && (!inFlight.isEmpty || session.anyAnswered) {
                        logger.notice(
                            "opening a new association for the files not yet answered",
                            metadata: ["error": "\(error)", "files": "\(session.unanswered.count)"])
                        work = session.unanswered
                        continue runs
                    }
                    failure = error
                    break runs
                }
            }
            break
        }
        return session.result(failure: failure)
    }

    /// `indices` split so that each batch's paths take at most `limit` bytes and its files need at most
    /// ``StoreSCUProfile/maximumContexts`` presentation contexts (at least one file each).
    static func batches(_ indices: [Int], files: PushFiles, limit: Int) -> [[Int]] {
        var out: [[Int]] = []
        var current: [Int] = []
        var size = 0
        var profile = StoreSCUProfile()
        for index in indices {
            let length = files.path(at: index).utf8.count + 1
            if !current.isEmpty && (size + length > limit || !profile.add(files[index])) {
                out.append(current)
                current = []
                size = 0
                profile = StoreSCUProfile()
                _ = profile.add(files[index])
            } else if current.isEmpty {
                _ = profile.add(files[index])
            }
            current.append(index)
            size += length
        }
        if !current.isEmpty { out.append(current) }
        return out
    }
}
