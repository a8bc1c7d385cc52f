import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore
import Synchronization

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
        // Made as each file goes out: the request's packed list is the only copy of the files (issue 34).
        let storable = { @Sendable (index: Int) -> StorableFile in
            let file = request.files[index]
            return StorableFile(
                path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID,
                transferSyntaxUID: file.transferSyntaxUID, maximumInflatedSize: request.maximumInflatedSize,
                indexed: file.indexed)
        }
        let start = ContinuousClock.now
        var window = request.window
        var failure: PXError?
        // Storage commitment (PS3.4 Annex J): the transaction and its listener first, so the archive can report
        // whenever it likes; the N-ACTION goes on the storage association once its files are answered.
        var requester: CommitmentRequester?
        if let settings = request.commitment {
            requester = try await CommitmentRequester.start(settings, connection: connection, logger: logger)
        }
        defer { requester?.stop() }
        let requested = CommitmentRequested()
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
            let startedRequester = requester
            let boundedConnection = bounded
            let peer = self.peer(bounded)
            let contexts =
                StorableFile.presentationContexts(for: work.lazy.map(storable))
                + (requester == nil ? [] : [.storageCommitmentRequester])
            // What earlier associations stored, for the commitment request (listed only when one is asked for).
            let storedBefore =
                requester == nil
                ? [] : session.stored.map { CommitmentInstance(request.files[$0]) }
            enum Event: Sendable {
                case sent(Int)
                case stored(Int, StoreResult)
            }
            let (stream, continuation) = AsyncStream<Event>.makeStream()
            async let sent: Void = run("C-STORE", bounded) {
                defer { continuation.finish() }
                try await client.withAssociation(to: peer, proposing: contexts) { association in
                    var storedHere: [CommitmentInstance] = []
                    try await association.store(
                        work.lazy.map(storable), onSent: { position in continuation.yield(.sent(work[position])) }
                    ) {
                        position, stored in
                        continuation.yield(.stored(work[position], stored))
                        // Kept only for a commitment request: a plain push keeps nothing per file.
                        guard startedRequester != nil else { return }
                        let file = request.files[work[position]]
                        if Self.pushFileResult(stored, file: file).succeeded {
                            storedHere.append(CommitmentInstance(file))
                        }
                    }
                    // Every file of this association is answered: ask for commitment here, when the archive took
                    // the Push Model context. A failure of it is the commitment's, never the files'.
                    guard let requester = startedRequester,
                        association.negotiated?.context(abstractSyntax: StorageCommitment.sopClassUID) != nil
                    else { return }
                    let instances = storedBefore + storedHere
                    guard !instances.isEmpty else { return }
                    let outcome: Result<StorageCommitment.Report?, PXError>
                    do {
                        outcome = .success(try await requester.request(instances, on: association))
                    } catch {
                        outcome = .failure(
                            Self.pxError(any: error, operation: "N-ACTION", connection: boundedConnection))
                    }
                    requested.value.withLock { $0 = (instances, outcome) }
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
        if let requester {
            // Storage commitment of what the archive said it stored (PS3.4 Annex J): one transaction per run, on
            // the storage association when it could be asked there, else on an association of its own.
            do throws(PXError) {
                if let (instances, outcome) = requested.value.withLock({ $0 }) {
                    result.commitment = try await requester.finish(instances, onAssociation: outcome.get())
                } else {
                    let stored = result.files.indices.filter { result.files.succeeded($0) }.map {
                        CommitmentInstance(request.files[$0])
                    }
                    if !stored.isEmpty {
                        result.commitment = try await self.commit(
                            stored, requester: requester, connection: connection, logger: logger)
                    }
                }
            } catch {
                result.commitmentFailure = error
            }
        }
        return result
    }

    /// Any error as the ``PXError`` it stands for.
    static func pxError(any error: any Error, operation: String, connection: Connection) -> PXError {
        if let error = error as? PXError { return error }
        if let error = error as? DICOMNetworkError {
            return Self.pxError(error, operation: operation, connection: connection)
        }
        return PXError.from(error)
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

/// What px-push's storage association did about commitment: the instances it asked for and how the N-ACTION
/// went; empty when it could not ask (the archive refused the Push Model context, or the association ended).
final class CommitmentRequested: Sendable {
    let value = Mutex<(instances: [CommitmentInstance], outcome: Result<StorageCommitment.Report?, PXError>)?>(nil)
}
