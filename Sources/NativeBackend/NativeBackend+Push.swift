import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-STORE SCU (PS3.4 Annex B): only the contexts the files need are proposed
    /// (``StorableFile/presentationContexts(for:)``), and each data set is streamed from disk in
    /// PDU-sized chunks when the accepted context has the file's transfer syntax. Up to
    /// ``PushRequest/window`` files are outstanding when the peer agrees to an asynchronous operations
    /// window (PS3.7 §D.3.3.3); results are reported as responses arrive.
    ///
    /// One association carries every file unless the peer aborts it (or the connection drops): then a new
    /// association goes on with the files not yet answered, one file at a time so that a file that ends
    /// associations is singled out (``PushSession``). A failure that ends the push after some files were
    /// answered is in the result instead of thrown.
    public func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        try await PXError.catching {
            try await self.pushFiles(request, connection: connection, logger: logger, onFile: onFile)
        }
    }

    private func pushFiles(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws -> PushResult {
        var session = PushSession(request)
        for result in session.planned { await onFile(result) }
        let storable = request.files.map { file in
            StorableFile(
                path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID,
                transferSyntaxUID: file.transferSyntaxUID, maximumInflatedSize: request.maximumInflatedSize,
                indexed: file.indexed)
        }
        let start = ContinuousClock.now
        var window = request.window
        var failure: PXError?
        while !session.unanswered.isEmpty {
            let work = session.unanswered
            var timeouts = connection.timeouts
            if let total = timeouts.deadline {
                let elapsed = ContinuousClock.now - start
                timeouts.deadline = max(
                    0.001, total - Double(elapsed.components.seconds) - Double(elapsed.components.attoseconds) / 1e18)
            }
            var bounded = connection
            bounded.timeouts = timeouts
            session.startAssociation()
            if session.associations > 1 {
                logger.notice(
                    "opening a new association for the files not yet answered",
                    metadata: ["association": "\(session.associations)", "files": "\(work.count)"])
            }
            let client = self.client(bounded, logger: logger, window: window)
            let peer = self.peer(bounded)
            let files = work.map { storable[$0] }
            let contexts = StorableFile.presentationContexts(for: files)
            enum Event: Sendable {
                case sent(Int)
                case stored(Int, StoreResult)
            }
            let (stream, continuation) = AsyncStream<Event>.makeStream()
            async let sent: Void = run("C-STORE", bounded) {
                defer { continuation.finish() }
                try await client.withAssociation(to: peer, proposing: contexts) { association in
                    try await association.store(
                        files, onSent: { position in continuation.yield(.sent(work[position])) }
                    ) {
                        position, stored in continuation.yield(.stored(work[position], stored))
                    }
                }
            }
            var inFlight: [Int] = []
            for await event in stream {
                switch event {
                case .sent(let index):
                    session.sent(index)
                    inFlight.append(index)
                case .stored(let index, let stored):
                    inFlight.removeAll { $0 == index }
                    let result = session.finish(index, Self.pushFileResult(stored, file: request.files[index]))
                    await onFile(result)
                }
            }
            do {
                try await sent
                break
            } catch let error as PXError {
                if session.associations == 1 && inFlight.isEmpty && !session.anyAnswered {
                    // Nothing went out: no association (refused, rejected, no context at all).
                    throw error
                }
                let (failed, goOn) = session.associationEnded(by: error, inFlight: inFlight)
                for result in failed { await onFile(result) }
                logger.warning(
                    "the association ended early", metadata: ["error": "\(error)", "inFlight": "\(inFlight.count)"])
                guard goOn, !inFlight.isEmpty || session.anyAnswered else {
                    failure = error  // what ended the last association
                    break
                }
                // Next time one file at a time: the file in flight when an association ends is the one charged.
                window = 1
            }
        }
        var result = session.result(failure: failure)
        if let settings = request.commitment {
            // Storage commitment of what the archive said it stored (PS3.4 Annex J): one transaction per run.
            let stored = result.files.filter { $0.succeeded }.map {
                CommitmentInstance(sopClassUID: $0.file.sopClassUID, sopInstanceUID: $0.file.sopInstanceUID)
            }
            if !stored.isEmpty {
                do {
                    result.commitment = try await self.commit(
                        stored, settings: settings, connection: connection, logger: logger)
                } catch {
                    result.commitmentFailure = error
                }
            }
        }
        return result
    }

    /// A file's result from the C-STORE (or the reason it was not sent).
    static func pushFileResult(_ stored: StoreResult, file: PushFile) -> PushFileResult {
        if let status = stored.status {
            return PushFileResult(file: file, status: status)
        } else if stored.error?.hasPrefix("no accepted presentation context") == true {
            return .noContext(file)
        }
        return PushFileResult(
            file: file, status: nil, error: .io("cannot send the file: \(stored.error ?? "unknown")", path: file.path))
    }
}
