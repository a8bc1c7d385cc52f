import DICOMData
import Logging
import PXCore
import PXIndex
import PXStorage
import Synchronization

/// What a sync run reports as it goes, in order for each study: `planned` (with the units), `studyStarted`,
/// then ``SyncEvent/studyEnded(_:)``; a batch line that names nothing is ``SyncEvent/lineFailed(_:)``; after each
/// study ``SyncEvent/progress(_:)``; last ``SyncEvent/finished(_:)``. The engine writes nothing itself: px-sync renders these as NDJSON, a
/// library user does what it likes with them.
public enum SyncEvent: Sendable {
    /// A batch file's line names nothing px can look for, or its query found nothing or failed.
    case lineFailed(SyncSelection.LineError)
    /// A study needs a transfer: these units (a dry run stops here).
    case planned(SyncStudy, StudyPlan)
    /// Its transfer starts.
    case studyStarted(SyncStudy)
    /// A study is done: skipped (already present), transferred, failed, or planned only (dry run).
    case studyEnded(SyncStudyResult)
    /// Studies done so far.
    case progress(SyncProgress)
    /// The run is over: what it found and did (the last event of a run that was not stopped by an error).
    case finished(SyncSummary)
}

/// A study as a run names it: what the source said of it, the source's label, and the destination's when the
/// run has several.
public struct SyncStudy: Sendable {
    public var holding: StudyHolding
    /// Index of the source in the run's list.
    public var sourceIndex: Int
    /// ``Endpoint/label`` of the source.
    public var source: String
    /// Index of the destination in the run's list.
    public var destinationIndex: Int = 0
    /// ``Endpoint/label`` of the destination, `nil` when the run has one destination only.
    public var destination: String?
}

/// How one study ended.
public struct SyncStudyResult: Sendable {
    public enum Result: String, Sendable {
        case alreadyPresent, transferred, failed, planned
    }

    public var study: SyncStudy
    public var result: Result
    /// What the transfer did; `nil` when none ran (already present, planned).
    public var outcome: SyncTransfer.Outcome?
}

/// Studies done out of those found, instances transferred, studies failed.
public struct SyncProgress: Sendable, Hashable {
    public var done: Int
    public var total: Int
    public var instances: Int
    public var failed: Int
}

/// What a run found and did: the envelope's data (``SyncEngine/summary``).
public struct SyncSummary: Sendable {
    public var found = 0
    public var alreadyPresent = 0
    public var transferred = 0
    public var failed = 0
    public var planned = 0
    public var instancesTransferred = 0
    /// Each study's end, in the order they ended (sort them for a stable rendering).
    public var studies: [SyncStudyResult] = []
    public var lineErrors: [SyncSelection.LineError] = []
    /// px-sync `--commit`: the storage commitment of what the run stored at each node destination.
    public var commitments: [SyncCommitment] = []

    public init() {}

    /// The failure the run ends with: studies or lines that failed, else a commitment that did not come
    /// (its error: a timeout, a refused N-ACTION) or did not commit every instance.
    public var failure: PXError? {
        let failed = self.failed + lineErrors.count
        if failed > 0 {
            return .partialFailure(failed: failed, total: found + lineErrors.count, what: "studies and batch lines")
        }
        if let failure = commitments.lazy.compactMap(\.failure).first { return failure }
        let requested = commitments.reduce(0) { $0 + ($1.result?.requested.count ?? 0) }
        let uncommitted = commitments.reduce(0) {
            $0 + ($1.result.map { $0.requested.count - $0.committed.count } ?? 0)
        }
        if uncommitted > 0 {
            return .partialFailure(failed: uncommitted, total: requested, what: "instances to commit")
        }
        return nil
    }
}

/// The storage commitment (PS3.4 Annex J) of what one px-sync run stored at a node destination: the
/// archive's report, or why none came.
public struct SyncCommitment: Sendable {
    /// The destination, as events name it.
    public var destination: String
    public var result: CommitmentResult?
    public var failure: PXError?

    public init(destination: String, result: CommitmentResult? = nil, failure: PXError? = nil) {
        self.destination = destination
        self.result = result
        self.failure = failure
    }
}

/// One sync run: finds the selected studies in the sources, plans each against each destination
/// (``SyncPlanner``) and transfers what is missing (``SyncTransfer``), `parallel` studies at once, reporting
/// each step as a ``SyncEvent``. With several destinations each study is synced into each of them (a
/// study-destination pair counts as one study in the summary's counts, once in ``SyncSummary/found``).
///
/// ```swift
/// import PX
/// let engine = SyncEngine(sources: [source], destination: destination, logger: logger)
/// let summary = try await engine.run(.keys(DataSet()))
/// ```
public final class SyncEngine: Sendable {
    public struct Options: Sendable {
        /// Transfer every selected study, even what the destination holds already.
        public var force = false
        /// Plan only.
        public var dryRun = false
        /// Audit: where both places keep the instances' bytes (folders, zip folders), compare each instance
        /// both hold by size and CRC-32 (``ContentAuditing``); a difference fails the study. Elsewhere the SOP
        /// Instance UIDs are compared, as on every run.
        public var verify = false
        /// Studies transferred at once.
        public var parallel = 4
        /// How long a run waits for a destination another px is writing (``PlaceLock``) before it fails with
        /// ``PXCore/PXError/Code/placeBusy``.
        public var lockTimeout: Duration = Options.defaultLockTimeout

        /// Ten minutes: long enough for a colliding nightly job to finish a few studies, short enough that a
        /// stuck one is reported the same night.
        public static let defaultLockTimeout: Duration = .seconds(600)

        public init(
            force: Bool = false, dryRun: Bool = false, parallel: Int = 4,
            lockTimeout: Duration = Options.defaultLockTimeout, verify: Bool = false
        ) {
            self.force = force
            self.dryRun = dryRun
            self.verify = verify
            self.parallel = max(1, parallel)
            self.lockTimeout = lockTimeout
        }
    }

    public let sources: [Endpoint]
    public let destinations: [Endpoint]
    public let transfer: SyncTransfer
    public let options: Options
    let logger: Logger
    let onEvent: @Sendable (SyncEvent) -> Void
    private let state = Mutex(SyncSummary())
    /// What px stored at each node destination (by index), when its transfer collects it (px-sync `--commit`).
    private let stored = Mutex([Int: [CommitmentInstance]]())

    public convenience init(
        sources: [Endpoint], destination: Endpoint, transfer: SyncTransfer? = nil, options: Options = Options(),
        logger: Logger, onEvent: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) {
        self.init(
            sources: sources, destinations: [destination], transfer: transfer, options: options, logger: logger,
            onEvent: onEvent)
    }

    /// - Parameter destinations: at least one.
    public init(
        sources: [Endpoint], destinations: [Endpoint], transfer: SyncTransfer? = nil, options: Options = Options(),
        logger: Logger, onEvent: @escaping @Sendable (SyncEvent) -> Void = { _ in }
    ) {
        precondition(!destinations.isEmpty, "a sync needs a destination")
        self.sources = sources
        self.destinations = destinations
        self.transfer = transfer ?? SyncTransfer(logger: logger)
        self.options = options
        self.logger = logger
        self.onEvent = onEvent
    }

    /// What the run found and did so far.
    public var summary: SyncSummary { state.withLock { $0 } }

    /// The instances this run stored with success at destination `index` (a node), in the order they were
    /// stored: what a storage commitment request names (PS3.4 §J.3.2). Empty unless the transfer collects them
    /// (``SyncTransfer/collectsStored``).
    public func storedInstances(destination index: Int) -> [CommitmentInstance] {
        stored.withLock { $0[index] ?? [] }
    }

    /// Runs the whole sync and returns its summary. Per-study and per-line failures are in the summary
    /// (``SyncSummary/failure``); what is thrown stopped the run (a source that cannot be asked at all).
    @discardableResult
    public func run(_ selection: SyncSelection) async throws(PXError) -> SyncSummary {
        let locks = try await lockDestinations()
        defer { for lock in locks { lock.release() } }
        var holds: [StagingHold] = []
        defer { for hold in holds { hold.release() } }
        for destination in destinations {
            holds.append(try StagingHold(destination: destination, dryRun: options.dryRun))
        }
        let found = try await find(selection)
        state.withLock { $0.found += found.count }
        let pairs = found.flatMap { study in destinations.indices.map { (study.0, study.1, $0) } }
        let queue = StudyQueue(pairs)
        let nodes = sources.indices.filter { sources[$0].dimsePeer != nil }
        // `parallel` lanes, each with its own retrieve session per source node (many C-GETs and C-MOVEs on
        // one association where the backend can), taking the next study when it is done with one.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(options.parallel, pairs.count) {
                group.addTask {
                    await self.withSessions(nodes[...], [:]) { sessions in
                        while let (study, source, destination) = queue.next() {
                            await self.sync(study, source: source, destination: destination, sessions: sessions)
                            let progress = self.state.withLock { s in
                                SyncProgress(
                                    done: s.alreadyPresent + s.transferred + s.failed + s.planned, total: pairs.count,
                                    instances: s.instancesTransferred, failed: s.failed)
                            }
                            self.onEvent(.progress(progress))
                        }
                    }
                }
            }
        }
        let summary = self.summary
        onEvent(.finished(summary))
        return summary
    }

    /// A run as an `AsyncThrowingStream` of its events, ending with ``SyncEvent/finished(_:)``; it throws what
    /// stopped the run. The run starts when the stream is made and is cancelled when its consumer stops
    /// listening.
    ///
    /// ```swift
    /// for try await event in SyncEngine.events(sources: [pacs], destinations: [zips], logger: logger,
    ///                                           selection: .keys(DataSet())) {
    ///     if case .finished(let summary) = event { print(summary.instancesTransferred) }
    /// }
    /// ```
    public static func events(
        sources: [Endpoint], destinations: [Endpoint], transfer: SyncTransfer? = nil, options: Options = Options(),
        logger: Logger, selection: SyncSelection
    ) -> AsyncThrowingStream<SyncEvent, any Error> {
        AsyncThrowingStream { continuation in
            let engine = SyncEngine(
                sources: sources, destinations: destinations, transfer: transfer, options: options, logger: logger
            ) { event in continuation.yield(event) }
            let run = Task {
                do {
                    try await engine.run(selection)
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in run.cancel() }
        }
    }

    /// Takes the writer's lock (``PlaceLock``) of every folder and zip destination for the run, in the order
    /// of their paths (so two runs naming the same places in another order cannot wait on each other); none
    /// for a dry run, which writes nothing. Planning happens under the lock: a run that waited plans against
    /// what the other one left.
    func lockDestinations() async throws(PXError) -> [PlaceLock] {
        guard !options.dryRun else { return [] }
        let roots = Set(destinations.compactMap(\.lockRoot)).sorted()
        var locks: [PlaceLock] = []
        for root in roots {
            do {
                locks.append(
                    try await PlaceLock.acquire(root: root, timeout: options.lockTimeout) {
                        logger.warning(
                            "another px is writing the destination: waiting for it (--lock-timeout)",
                            metadata: ["place": "\(root)", "timeout": "\(options.lockTimeout)"])
                    })
            } catch {
                for lock in locks { lock.release() }
                throw .storage(error)
            }
        }
        return locks
    }

    /// Runs `body` with a retrieve session open on each of the source nodes `indices`.
    func withSessions(
        _ indices: ArraySlice<Int>, _ sessions: [Int: any RetrieveSession],
        _ body: @Sendable ([Int: any RetrieveSession]) async -> Void
    ) async {
        guard let first = indices.first, let peer = sources[first].dimsePeer, !options.dryRun else {
            await body(sessions)
            return
        }
        do {
            try await peer.withRetrieveSession(logger: logger) {
                (session: any RetrieveSession) async throws(PXError) in
                var more = sessions
                more[first] = session
                await withSessions(indices.dropFirst(), more, body)
            }
        } catch {
            // The body throws nothing; closing a session that failed is logged by the backend.
            logger.debug("retrieve session ended", metadata: ["error": "\(error)"])
        }
    }

    /// The selected studies, each from the first source that holds it.
    func find(_ selection: SyncSelection) async throws(PXError) -> [(StudyHolding, Int)] {
        var queries: [(line: SyncSelection.Line?, keys: DataSet)] = []
        switch selection {
        case .keys(let keys):
            queries = [(nil, keys)]
        case .studies(let uids):
            for uid in uids {
                var keys = DataSet()
                keys.set(.studyInstanceUID, vr: .UI, string: uid)
                queries.append((nil, keys))
            }
        case .lines(let lines, let errors):
            for error in errors { lineFailed(error) }
            for line in lines { queries.append((line, try line.keys())) }
        }
        var seen = Set<String>()
        var out: [(StudyHolding, Int)] = []
        for (line, keys) in queries {
            var matched = 0
            var failure: PXError?
            for (index, source) in sources.enumerated() {
                do {
                    for study in try await source.inventory.studies(matching: keys) {
                        matched += 1
                        if seen.insert(study.studyInstanceUID).inserted { out.append((study, index)) }
                    }
                } catch {
                    guard let line else { throw error }
                    logger.debug("query failed", metadata: ["line": "\(line.number)", "error": "\(error)"])
                    failure = error
                }
            }
            if let line, matched == 0 {
                lineFailed(
                    SyncSelection.LineError(
                        number: line.number, text: line.value,
                        error: failure
                            ?? .usage("line \(line.number): no study with \(line.keyword) \(line.value) in any source"))
                )
            }
        }
        return out
    }

    func lineFailed(_ error: SyncSelection.LineError) {
        state.withLock { $0.lineErrors.append(error) }
        onEvent(.lineFailed(error))
    }

    func sync(
        _ holding: StudyHolding, source index: Int, destination target: Int, sessions: [Int: any RetrieveSession]
    ) async {
        let source = sources[index]
        let destination = destinations[target]
        let study = SyncStudy(
            holding: holding, sourceIndex: index, source: source.label, destinationIndex: target,
            destination: destinations.count > 1 ? destination.label : nil)
        let plan: StudyPlan
        do {
            plan = try await SyncPlanner.plan(
                holding, source: index, from: source.inventory, to: destination.inventory, force: options.force)
        } catch {
            var outcome = SyncTransfer.Outcome()
            outcome.failure = error
            finish(SyncStudyResult(study: study, result: .failed, outcome: outcome))
            return
        }
        // The audit runs first but fails the study only after what is missing has been transferred: a copy that
        // differs is reported, and never stands in the way of the instances the destination lacks.
        var mismatched: [(uid: String, source: String, destination: String)] = []
        if options.verify, let ours = source.auditor, let theirs = destination.auditor {
            do {
                mismatched = try await Self.differences(holding.studyInstanceUID, ours, theirs)
            } catch {
                var outcome = SyncTransfer.Outcome()
                outcome.failure = error
                finish(SyncStudyResult(study: study, result: .failed, outcome: outcome))
                return
            }
        }
        func withAudit(_ outcome: SyncTransfer.Outcome) -> SyncTransfer.Outcome {
            guard !mismatched.isEmpty else { return outcome }
            var audited = outcome
            if audited.failure == nil { audited.failure = .contentMismatch(mismatched) }
            audited.failed += mismatched.count
            return audited
        }
        if plan.units.isEmpty {
            var outcome = withAudit(SyncTransfer.Outcome())
            if outcome.failure == nil, let reporter = source.unreadableReporter {
                do { outcome.failure = try await reporter.unreadableEntries(ofStudy: holding.studyInstanceUID) } catch {
                    outcome.failure = error
                }
            }
            let result: SyncStudyResult.Result = outcome.failure == nil ? .alreadyPresent : .failed
            finish(SyncStudyResult(study: study, result: result, outcome: result == .failed ? outcome : nil))
            return
        }
        onEvent(.planned(study, plan))
        if options.dryRun {
            if mismatched.isEmpty {
                finish(SyncStudyResult(study: study, result: .planned, outcome: nil))
            } else {
                finish(SyncStudyResult(study: study, result: .failed, outcome: withAudit(SyncTransfer.Outcome())))
            }
            return
        }
        onEvent(.studyStarted(study))
        var outcome = withAudit(
            await transfer.run(plan, from: source, to: destination, session: sessions[index]))
        if !outcome.stored.isEmpty {
            // Kept once, for the run's commitment request; the study's result (in the summary) does not carry it.
            stored.withLock { [outcome] in $0[target, default: []] += outcome.stored }
            outcome.stored = []
        }
        finish(SyncStudyResult(study: study, result: outcome.failure == nil ? .transferred : .failed, outcome: outcome))
    }

    /// The instances of a study both places hold whose checksums differ, in UID order.
    static func differences(_ study: String, _ source: any ContentAuditing, _ destination: any ContentAuditing)
        async throws(PXError) -> [(uid: String, source: String, destination: String)]
    {
        let ours = try await source.contentChecksums(ofStudy: study)
        let theirs = try await destination.contentChecksums(ofStudy: study)
        return ours.keys.sorted().compactMap { uid in
            guard let mine = ours[uid], let other = theirs[uid], mine != other else { return nil }
            return (uid, mine.description, other.description)
        }
    }

    func finish(_ result: SyncStudyResult) {
        state.withLock {
            switch result.result {
            case .alreadyPresent: $0.alreadyPresent += 1
            case .transferred: $0.transferred += 1
            case .failed: $0.failed += 1
            case .planned: $0.planned += 1
            }
            $0.instancesTransferred += result.outcome?.transferred ?? 0
            $0.studies.append(result)
        }
        onEvent(.studyEnded(result))
    }
}

/// The studies still to sync (with their source's and destination's indices), taken one at a time by the lanes.
final class StudyQueue: Sendable {
    private let pending: Mutex<IndexingIterator<[(StudyHolding, Int, Int)]>>
    init(_ studies: [(StudyHolding, Int, Int)]) { pending = Mutex(studies.makeIterator()) }
    func next() -> (StudyHolding, Int, Int)? { pending.withLock { $0.next() } }
}
