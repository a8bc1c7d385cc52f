import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension NativeBackend {
    /// A ``RetrieveSession`` whose C-MOVEs and C-GETs share one association (PS3.7 §9.1.3, §9.1.4: a
    /// retrieve is one request and its responses, so the next can follow on the same association), released
    /// when `body` returns (a ``NativeSession``).
    public func withRetrieveSession<T>(
        connection: Connection, logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await withSession(connection: connection, logger: logger) { session throws(PXError) in
            try await body(session)
        }
    }

    /// A peer whose C-FINDs share one association (PS3.7 §9.1.2), released when `body` returns: a
    /// ``NativeSession`` as a ``Querying`` peer (px-find `--queries`: 200 queries in one process and one
    /// association instead of 200 of each).
    public func withQuerySession<T>(
        connection: Connection, logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await withSession(connection: connection, logger: logger) { session throws(PXError) in
            try await body(NativeQuerySession(session: session))
        }
    }

    /// Runs `body` with a ``NativeSession`` on `connection`, closed (its association released) when `body`
    /// returns or throws.
    private func withSession<T>(
        connection: Connection, logger: Logger, _ body: (NativeSession) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        let session = NativeSession(backend: self, connection: connection, logger: logger)
        let result: T
        do {
            result = try await body(session)
        } catch {
            await session.close()
            throw error
        }
        await session.close()
        return result
    }
}

/// The native backend's peer for many C-FINDs in a row: each runs on the ``NativeSession``'s association.
struct NativeQuerySession: Querying {
    let session: NativeSession

    var name: String { "native" }
    var queryOperation: String { "C-FIND" }

    func find(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        try await session.find(request, onResponse: onResponse)
    }
}

/// The native backend's ``RetrieveSession``, and its query session (``NativeQuerySession``): one association
/// (a worker task that holds it) serves the requests one after another. The association is opened with the
/// first request, proposing what that request needs (the C-FIND or C-MOVE context, or the C-GET context and
/// the storage contexts with the SCP role), and replaced when a request needs another service or model. When the peer released or aborted it between
/// two requests (the next request finds it gone, or it ends before any response), the request is run again
/// once on a new association; a failure on a fresh association is the request's error.
actor NativeSession: RetrieveSession {
    let backend: NativeBackend
    let connection: Connection
    let logger: Logger
    private var worker: SessionWorker?
    private var ended: [Task<Void, Never>] = []

    init(backend: NativeBackend, connection: Connection, logger: Logger) {
        self.backend = backend
        self.connection = connection
        self.logger = logger
    }

    func move(
        _ request: MoveRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        let model = request.model.network
        let operation = SessionJob.Operation.move(
            NativeBackend.identifier(request.keys), model, destination: request.destination)
        let (outcome, responses) = try await perform(
            operation, key: .init(service: "C-MOVE", abstractSyntax: model.moveSOPClass), contexts: [.move(model)]
        ) { counts in
            await onProgress(NativeBackend.progress(counts, status: DIMSEStatus(code: 0xFF00, service: .move)))
        }
        let final = try outcome.retrieved()
        let last = NativeBackend.progress(final.subOperations, status: final.status)
        await onProgress(last)
        var result = MoveResult(
            request: request, status: last.status, completed: last.completed, failed: last.failed,
            warning: last.warning, responses: responses + 1)
        result.failedSOPInstanceUIDs = final.failedSOPInstanceUIDs
        return result
    }

    func get(
        _ request: GetRequest, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        let (placer, incoming) = try request.placerAndStagingFolder()
        defer { rmdir(incoming) }
        let events = ListenEventChannel()
        let storage = LayoutStorage(
            placer: placer, book: nil, logger: logger, events: events,
            reportsDataSetLength: true, senderAETitle: connection.node.calledAETitle)
        let model = request.model.network
        let operation = SessionJob.Operation.get(
            NativeBackend.identifier(request.keys), model, storage: storage, directory: incoming)
        let outcome: (SessionJob.Outcome, Int)
        do {
            outcome = try await perform(
                operation, key: .init(service: "C-GET", abstractSyntax: model.getSOPClass),
                contexts: ProposedPresentationContext.get(model)
            ) { counts in
                await onProgress(NativeBackend.progress(counts, status: DIMSEStatus(code: 0xFF00, service: .get)))
            }
        } catch {
            events.finish()
            throw error
        }
        events.finish()
        let final = try outcome.0.retrieved()
        let responses = outcome.1
        var instances: [PXCore.ReceivedInstance] = []
        var failures: [ListenEvent] = []
        while let event = await events.next() {
            switch event {
            case .instanceReceived(let instance): instances.append(instance)
            case .storeFailed: failures.append(event)
            default: break
            }
        }
        let last = NativeBackend.progress(final.subOperations, status: final.status)
        await onProgress(last)
        var result = GetResult(
            request: request, status: last.status, remaining: last.remaining ?? 0, completed: last.completed,
            failed: last.failed, warning: last.warning, responses: responses + 1, instances: instances,
            storeFailures: failures)
        result.failedSOPInstanceUIDs = final.failedSOPInstanceUIDs
        return result
    }

    /// Runs one C-FIND (PS3.4 §C.4.1) on the session's association, as ``NativeBackend/find(_:connection:logger:onResponse:)``
    /// does on an association of its own.
    func find(
        _ request: FindRequest, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let sopClass = request.model.findSOPClass
        let outcome: SessionJob.Outcome
        do {
            outcome = try await withoutActuallyEscaping(onResponse) { onResponse in
                let relay = FindResponseRelay(onResponse)
                defer { relay.clear() }
                return try await perform(
                    .find(request, relay: relay), key: .init(service: "C-FIND", abstractSyntax: sopClass),
                    contexts: [.find(sopClass: sopClass)], onProgress: { _ in }
                ).0
            }
        } catch {
            throw PXError.from(error)
        }
        guard case .found(let result, let exceeded) = outcome else {
            throw PXError.aborted("a retrieve result for a C-FIND")
        }
        if exceeded, let bound = request.maxResponses { throw PXError.tooManyResponses(limit: bound) }
        return result
    }

    /// Releases the association (the worker ends when it has no more requests) and waits for it.
    func close() async {
        if let worker {
            worker.jobs.finish()
            ended.append(worker.task)
            self.worker = nil
        }
        for task in ended { await task.value }
        ended = []
    }

    /// Runs `operation` on the session's association, with the deadline of the connection per request.
    /// - Returns: the final response and how many pending responses came before it.
    private func perform(
        _ operation: SessionJob.Operation, key: SessionWorker.Key, contexts: [ProposedPresentationContext],
        onProgress: @Sendable (SubOperationCounts) async -> Void
    ) async throws(PXError) -> (SessionJob.Outcome, Int) {
        var reconnected = false
        var unsent = 0
        while true {
            let worker = self.worker(for: key, contexts: contexts)
            let (events, continuation) = AsyncStream<SessionJob.Event>.makeStream()
            let cancellation = RetrieveCancellation.current
            let job = SessionJob(operation: operation, events: continuation, cancellation: cancellation)
            // After a cancellation request the peer has the grace to send its final response; then the
            // association is aborted (the worker's task cancelled) and the request ends with what it had.
            cancellation?.onRequest { _ in
                Task {
                    do { try await Task.sleep(for: .seconds(cancellation?.grace ?? 0)) } catch { return }
                    worker.task.cancel()
                }
            }
            guard case .enqueued = worker.jobs.yield(job) else {
                retire(worker)
                continue
            }
            let deadline = connection.timeouts.deadline
            let timer = Task<Bool, Never> {
                guard let deadline else { return false }
                do { try await Task.sleep(for: .seconds(deadline)) } catch { return false }
                worker.task.cancel()
                return true
            }
            var responses = 0
            var outcome: SessionJob.Event?
            for await event in events {
                if case .progress(let counts) = event {
                    responses += 1
                    await onProgress(counts)
                } else if case .answered = event {
                    responses += 1
                } else {
                    outcome = event
                }
            }
            timer.cancel()
            let timedOut = await timer.value
            switch outcome {
            case .finished(let result)?:
                return (result, responses)
            case .failed(let error, let reused)?:
                retire(worker)
                if timedOut, let deadline {
                    throw PXError.timeout("deadline", seconds: deadline, detail: "\(key.service) cancelled")
                }
                if reused && responses == 0 && !reconnected && Self.endedByPeer(error) {
                    reconnected = true
                    logger.notice(
                        "the association ended before the request was answered; again on a new association",
                        metadata: ["operation": "\(key.service)", "error": "\(error)"])
                    continue
                }
                if let error = error as? DICOMNetworkError {
                    throw NativeBackend.pxError(error, operation: key.service, connection: connection)
                }
                throw PXError.from(error)
            case .progress?, .answered?, nil:
                // Never sent: the association was gone when the request's turn came.
                retire(worker)
                unsent += 1
                if unsent > 2 { throw PXError.aborted("\(key.service): the association ended before the request") }
            }
        }
    }

    /// The live worker for `key`, or a new one (a worker for another service or model is released first).
    private func worker(for key: SessionWorker.Key, contexts: [ProposedPresentationContext]) -> SessionWorker {
        if let worker, worker.key == key { return worker }
        if let worker { retire(worker) }
        let client = backend.client(connection, logger: logger)
        let peer = backend.peer(connection)
        let (jobs, continuation) = AsyncStream<SessionJob>.makeStream()
        let logger = self.logger
        let task = Task {
            await SessionWorker.serve(
                jobs, close: continuation, client: client, peer: peer, contexts: contexts, logger: logger)
        }
        let worker = SessionWorker(key: key, jobs: continuation, task: task)
        self.worker = worker
        return worker
    }

    private func retire(_ old: SessionWorker) {
        old.jobs.finish()
        ended.append(old.task)
        if worker?.task == old.task { worker = nil }
    }

    /// Whether `error` says the peer (or the network) ended the association, so that a request that got no
    /// answer is worth a new association; timeouts, cancellation and refusals are not.
    static func endedByPeer(_ error: any Error) -> Bool {
        if error is CancellationError { return false }
        guard let error = error as? DICOMNetworkError else { return true }  // a write on a closed channel
        return error.code == .aborted || error.code == .connectionClosed
    }
}

/// The `onResponse` of a C-FIND handed to the session's worker. The caller's closure is not escaping, and the
/// worker may hold its job a moment after the job's end reached the caller: the caller empties the relay
/// before it returns (no response comes after the end), so nothing of its closure outlives it.
final class FindResponseRelay: Sendable {
    typealias Handler = @Sendable (FindResponse) async throws(PXError) -> Void
    private let handler: Mutex<Handler?>

    init(_ handler: @escaping Handler) {
        self.handler = Mutex(handler)
    }

    func send(_ response: FindResponse) async throws(PXError) {
        guard let handler = handler.withLock({ $0 }) else { return }
        try await handler(response)
    }

    func clear() { handler.withLock { $0 = nil } }
}

/// A request handed to the worker that holds the association, and what it reports back.
struct SessionJob: Sendable {
    enum Operation: Sendable {
        case move(DataSet, QueryRetrieveModel, destination: String)
        case get(DataSet, QueryRetrieveModel, storage: any StorageDelegate, directory: String)
        /// The relay's handler is called on the worker's task.
        case find(FindRequest, relay: FindResponseRelay)
    }

    /// What a request that ran to its final response gives.
    enum Outcome: Sendable {
        case retrieved(RetrieveResult)
        /// `exceeded`: more than ``FindRequest/maxResponses`` matches came.
        case found(FindResult, exceeded: Bool)

        /// The C-MOVE or C-GET result.
        /// - Throws: ``PXError/aborted(_:)`` for a C-FIND's (a job never gets another operation's outcome).
        func retrieved() throws(PXError) -> RetrieveResult {
            guard case .retrieved(let result) = self else { throw .aborted("a C-FIND result for a retrieve") }
            return result
        }
    }

    enum Event: Sendable {
        case progress(SubOperationCounts)
        /// A C-FIND response was handed on.
        case answered
        case finished(Outcome)
        /// `reused`: the association had served a request before this one.
        case failed(any Error, reused: Bool)
    }

    let operation: Operation
    let events: AsyncStream<Event>.Continuation
    /// The command's request to cancel (SIGINT, SIGTERM): the C-CANCEL-RQ goes out when it comes
    /// (PS3.7 §9.3.2.3, §9.3.3.3), and the final response (status Cancel) ends the request as usual.
    let cancellation: RetrieveCancellation?

    func run(on association: DICOMAssociation, logger: Logger) async throws -> Outcome {
        let events = self.events
        let cancellation = self.cancellation
        func cancelling(_ canceller: RetrieveCanceller) {
            cancellation?.onRequest { signal in
                if canceller.cancel() {
                    logger.notice("sent C-CANCEL-RQ", metadata: ["signal": "\(signal)"])
                }
            }
        }
        switch operation {
        case .move(let keys, let model, let destination):
            return .retrieved(
                try await association.move(
                    keys, model: model, destination: destination, progress: { events.yield(.progress($0)) },
                    cancelling: cancelling))
        case .get(let keys, let model, let storage, let directory):
            return .retrieved(
                try await association.get(
                    keys, model: model, storage: storage, directory: directory,
                    progress: { events.yield(.progress($0)) }, cancelling: cancelling))
        case .find(let request, let relay):
            let (result, exceeded) = try await NativeBackend.find(request, on: association, logger: logger) {
                response throws(PXError) in
                events.yield(.answered)
                try await relay.send(response)
            }
            return .found(result, exceeded: exceeded)
        }
    }

    func finish(_ event: Event) {
        events.yield(event)
        events.finish()
    }
}

/// The task that opens an association with its first request and serves requests on it until the session
/// has no more, the peer ends it, or a request fails (then it is aborted).
struct SessionWorker: Sendable {
    struct Key: Hashable, Sendable {
        var service: String
        /// The SOP class of the request (its service and model).
        var abstractSyntax: String
    }

    let key: Key
    let jobs: AsyncStream<SessionJob>.Continuation
    let task: Task<Void, Never>

    static func serve(
        _ jobs: AsyncStream<SessionJob>, close: AsyncStream<SessionJob>.Continuation, client: DICOMClient,
        peer: DICOMPeer, contexts: [ProposedPresentationContext], logger: Logger
    ) async {
        var iterator = jobs.makeAsyncIterator()
        var current = await iterator.next()
        guard current != nil else { return }
        var served = 0
        do {
            try await client.withAssociation(to: peer, proposing: contexts) { association in
                while let job = current {
                    guard association.isEstablished else { return }
                    let result = try await job.run(on: association, logger: logger)
                    job.finish(.finished(result))
                    served += 1
                    current = nil
                    current = await iterator.next()
                }
            }
        } catch {
            if let job = current {
                job.finish(.failed(error, reused: served > 0))
                current = nil
            } else {
                logger.debug("releasing the retrieve association failed", metadata: ["error": "\(error)"])
            }
        }
        // No more requests on this worker: any left (or the one that found the association gone) are unsent.
        close.finish()
        current?.events.finish()
        while let job = await iterator.next() { job.events.finish() }
    }
}
