import DICOMData
import Logging
import PXCommandLine
import PXCore
import Synchronization

/// One px-sync run: finds the selected studies in the sources, plans each against the destination
/// (``SyncPlanner``) and transfers what is missing (``SyncTransfer``), `parallel` studies at once, reporting
/// each step as an event and in the ``Report``.
public final class SyncEngine: Sendable {
    public let sources: [SyncPlace]
    public let destination: SyncPlace
    public let transfer: SyncTransfer
    public let force: Bool
    public let dryRun: Bool
    public let parallel: Int
    public let report: Report
    let logger: Logger
    let emit: @Sendable (JSONValue) -> Void

    public init(
        sources: [SyncPlace], destination: SyncPlace, transfer: SyncTransfer, force: Bool, dryRun: Bool,
        parallel: Int, report: Report, logger: Logger, emit: @escaping @Sendable (JSONValue) -> Void
    ) {
        self.sources = sources
        self.destination = destination
        self.transfer = transfer
        self.force = force
        self.dryRun = dryRun
        self.parallel = parallel
        self.report = report
        self.logger = logger
        self.emit = emit
    }

    /// Runs the whole sync. Per-study and per-line failures are in the report; what is thrown stopped the run
    /// (a source that cannot be asked at all).
    public func run(_ selection: SyncSelection) async throws(PXError) {
        let found = try await find(selection)
        report.found(found.count)
        let showProgress = CommandOutput.standardErrorIsTerminal
        let queue = StudyQueue(found)
        let nodes = sources.indices.filter { if case .node = sources[$0] { true } else { false } }
        // `parallel` lanes, each with its own retrieve session per source node (many C-GETs and C-MOVEs on
        // one association where the backend can), taking the next study when it is done with one.
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<min(parallel, found.count) {
                group.addTask {
                    await self.withSessions(nodes[...], [:]) { sessions in
                        while let (study, source) = queue.next() {
                            await self.sync(study, source: source, sessions: sessions)
                            if showProgress {
                                CommandOutput.writeStandardError("\r" + self.report.progressLine(total: found.count))
                            }
                        }
                    }
                }
            }
        }
        if showProgress && !found.isEmpty { CommandOutput.writeStandardError("\n") }
    }

    /// Runs `body` with a retrieve session open on each of the source nodes `indices`.
    func withSessions(
        _ indices: ArraySlice<Int>, _ sessions: [Int: any RetrieveSession],
        _ body: @Sendable ([Int: any RetrieveSession]) async -> Void
    ) async {
        guard let first = indices.first, case .node(let node) = sources[first], !dryRun else {
            await body(sessions)
            return
        }
        do {
            try await node.backend.withRetrieveSession(connection: node.connection, logger: logger) {
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
            for line in lines {
                var keys = DataSet()
                let key = try QueryKey.make(name: line.keyword, value: line.value)
                keys.set(key)
                queries.append((line, keys))
            }
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
                    guard let line else { throw PXError.from(error) }
                    logger.debug("query failed", metadata: ["line": "\(line.number)", "error": "\(error)"])
                    failure = PXError.from(error)
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
        report.lineFailed(error)
        emit(
            .object([
                JSONMember("event", .string("failed")), JSONMember("line", .integer(error.number)),
                JSONMember("text", .string(error.text)), JSONMember("error", PXOutput.json(error.error)),
            ]))
    }

    func sync(_ study: StudyHolding, source index: Int, sessions: [Int: any RetrieveSession]) async {
        let source = sources[index]
        let plan: StudyPlan
        do {
            plan = try await SyncPlanner.plan(
                study, source: index, from: source.inventory, to: destination.inventory, force: force)
        } catch {
            var outcome = SyncTransfer.Outcome()
            outcome.failure = PXError.from(error)
            finish(study, source: index, result: .failed, planned: nil, outcome: outcome)
            return
        }
        if plan.units.isEmpty {
            finish(study, source: index, result: .alreadyPresent, planned: plan, outcome: nil)
            return
        }
        emit(
            event(
                "planned", study, source: index,
                [
                    JSONMember("instances", plan.instances.map { .integer($0) } ?? .null),
                    JSONMember("units", .array(plan.units.map(\.json))),
                ]))
        if dryRun {
            finish(study, source: index, result: .planned, planned: plan, outcome: nil)
            return
        }
        emit(event("studyStarted", study, source: index, []))
        let outcome = await transfer.run(plan, from: source, to: destination, session: sessions[index])
        finish(
            study, source: index, result: outcome.failure == nil ? .transferred : .failed, planned: plan,
            outcome: outcome)
    }

    func finish(
        _ study: StudyHolding, source: Int, result: Report.Result, planned: StudyPlan?, outcome: SyncTransfer.Outcome?
    ) {
        var members: [JSONMember] = []
        if let outcome {
            members.append(JSONMember("transferred", .integer(outcome.transferred)))
            members.append(JSONMember("failed", .integer(outcome.failed)))
            if let failure = outcome.failure { members.append(JSONMember("error", PXOutput.json(failure))) }
        }
        let name: String =
            switch result {
            case .alreadyPresent: "skipped"
            case .failed: "failed"
            case .transferred: "studyFinished"
            case .planned: ""
            }
        let entry = event(name, study, source: source, [JSONMember("result", .string(result.rawValue))] + members)
        if !name.isEmpty { emit(entry) }
        report.studyDone(result, transferred: outcome?.transferred ?? 0, entry: entry)
    }

    func event(_ name: String, _ study: StudyHolding, source: Int, _ extra: [JSONMember]) -> JSONValue {
        var members = [
            JSONMember("event", .string(name)), JSONMember("StudyInstanceUID", .string(study.studyInstanceUID)),
        ]
        if let id = study.patientID { members.append(JSONMember("PatientID", .string(id))) }
        if let accession = study.accessionNumber { members.append(JSONMember("AccessionNumber", .string(accession))) }
        members.append(JSONMember("source", .string(sources[source].label)))
        return .object(members + extra)
    }
}

/// What a run found and did: the envelope's data.
public final class Report: Sendable {
    public enum Result: String, Sendable {
        case alreadyPresent, transferred, failed, planned
    }

    struct State {
        var found = 0
        var alreadyPresent = 0
        var transferred = 0
        var failed = 0
        var planned = 0
        var instances = 0
        var studies: [JSONValue] = []
        var lineErrors: [JSONValue] = []
    }

    private let state = Mutex(State())

    public init() {}

    func found(_ count: Int) { state.withLock { $0.found += count } }

    func lineFailed(_ error: SyncSelection.LineError) {
        state.withLock {
            $0.lineErrors.append(
                .object([
                    JSONMember("line", .integer(error.number)), JSONMember("text", .string(error.text)),
                    JSONMember("error", PXOutput.json(error.error)),
                ]))
        }
    }

    func studyDone(_ result: Result, transferred: Int, entry: JSONValue) {
        state.withLock {
            switch result {
            case .alreadyPresent: $0.alreadyPresent += 1
            case .transferred: $0.transferred += 1
            case .failed: $0.failed += 1
            case .planned: $0.planned += 1
            }
            $0.instances += transferred
            $0.studies.append(.object((entry.objectValue ?? []).filter { $0.key != "event" }))
        }
    }

    func progressLine(total: Int) -> String {
        state.withLock {
            "px-sync: \($0.alreadyPresent + $0.transferred + $0.failed + $0.planned)/\(total) studies, "
                + "\($0.instances) instances transferred, \($0.failed) failed   "
        }
    }

    /// The failure the run ends with: studies or lines that failed.
    func failure() -> PXError? {
        state.withLock { s in
            let failed = s.failed + s.lineErrors.count
            guard failed > 0 else { return nil }
            return .partialFailure(failed: failed, total: s.found + s.lineErrors.count, what: "studies and batch lines")
        }
    }

    public func json() -> JSONValue {
        state.withLock { s in
            let studies = s.studies.sorted {
                ($0["StudyInstanceUID"]?.stringValue ?? "") < ($1["StudyInstanceUID"]?.stringValue ?? "")
            }
            return .object([
                JSONMember("found", .integer(s.found)), JSONMember("alreadyPresent", .integer(s.alreadyPresent)),
                JSONMember("transferred", .integer(s.transferred)), JSONMember("failed", .integer(s.failed)),
                JSONMember("planned", .integer(s.planned)), JSONMember("instancesTransferred", .integer(s.instances)),
                JSONMember("studies", .array(studies)), JSONMember("lineErrors", .array(s.lineErrors)),
            ])
        }
    }
}

/// The studies still to sync, taken one at a time by the lanes.
final class StudyQueue: Sendable {
    private let pending: Mutex<IndexingIterator<[(StudyHolding, Int)]>>
    init(_ studies: [(StudyHolding, Int)]) { pending = Mutex(studies.makeIterator()) }
    func next() -> (StudyHolding, Int)? { pending.withLock { $0.next() } }
}
