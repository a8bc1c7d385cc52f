import DICOMData
import DICOMWeb
import Logging
import PXCommandLine
import PXCore
import PXPlaces
import UnixSignals

/// What a retrieve retrieves, asked once the peer is known: ``RetrieveOptions`` (px-move, px-get) or a find's
/// matches (px-find --then retrieve), found by searching the peer.
public typealias RetrieveTargets = (any Querying, Logger) async throws(PXError) -> [RetrieveSelection]

/// px-move: a C-MOVE per target to `destination` (PS3.4 §C.4.2).
public enum MoveCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        retrieve: RetrieveOptions, destination: String?, output: OutputOptions
    ) async throws {
        try await run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, model: retrieve.model,
            destination: destination, output: output.output, label: "px-move"
        ) { _, _ throws(PXError) in try retrieve.targets(verb: "move") }
    }

    /// A C-MOVE in `model` of each of `targets` (whole patients and series without their study resolved by
    /// ``RetrieveResolution``), the envelope written to `output`.
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        model: QueryModel, destination: String?, output: CommandOutput, label: String,
        targets: RetrieveTargets
    ) async throws {
        let logger = logging.makeLogger(label: label)
        try await CommandRunner.run(
            output: output, backend: backend, need: .move, peer: connection, timeouts: timeouts.timeouts,
            state: RetrieveRun<MoveResult>(), data: summary
        ) { node, run in
            guard let destination = destination ?? connection.callingAETitle else {
                throw PXError.usage("give the move destination with --destination")
            }
            let targets = try await RetrieveResolution.resolve(
                try await targets(node, logger), expandPatients: model != .patientRoot, model: model, peer: node,
                logger: logger)
            let verb = RetrieveVerb(
                operation: "C-MOVE", progress: RetrieveProgressLine(command: "px-move", showsRemaining: true),
                request: { (t: RetrieveSelection, model: QueryModel) throws(PXError) in
                    try MoveRequest(
                        model: model, destination: destination, patientID: t.patientID,
                        studyInstanceUID: t.studyInstanceUID, seriesInstanceUID: t.seriesInstanceUID,
                        sopInstanceUIDs: t.sopInstanceUIDs)
                },
                send: { session, request, progress throws(PXError) in
                    try await session.move(request, onProgress: progress)
                })
            return try await RetrieveLoop.each(targets, verb, model: model, into: &run, node: node, logger: logger)
        }
    }

    /// The envelope's data: each C-MOVE, each target's outcome and the sub-operation totals.
    static func summary(_ run: RetrieveRun<MoveResult>) -> JSONValue {
        JSONValueEncoder.encode(PXOutput.MoveSummaryOutput(run.results, targets: run.targets))
    }
}

/// px-get: a C-GET per target, the instances stored under `root` (PS3.4 §C.4.3).
public enum GetCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        retrieve: RetrieveOptions, root: String, output: OutputOptions, parallel: Int? = nil
    ) async throws {
        try await run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, model: retrieve.model,
            root: root, output: output.output, parallel: parallel, label: "px-get"
        ) { _, _ throws(PXError) in try retrieve.targets(verb: "get") }
    }

    /// A C-GET (WADO-RS for a DICOMweb peer, PS3.18 §10.4) in `model` of each of `targets` (resolved by
    /// ``RetrieveResolution``) into `root`, the envelope written to `output`.
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        model: QueryModel, root: String, output: CommandOutput, parallel: Int? = nil, label: String,
        targets: RetrieveTargets
    ) async throws {
        let logger = logging.makeLogger(label: label)
        // Each retrieve's report (its instances) goes to a temporary file as it ends and none is kept, so memory
        // stays flat however many instances the run stores (issue 34). A spool that cannot be made is the
        // command's error, in its envelope.
        var spoolingOutput = output
        let made = Result { () throws(PXError) in try JSONArraySpool(pretty: output.pretty, member: "gets") }
        let spool: JSONArraySpool? = if case .success(let value) = made { value } else { nil }
        spool?.complete()
        spoolingOutput.spool = spool
        try await CommandRunner.run(
            output: spoolingOutput, backend: backend, need: .retrieve, peer: connection, timeouts: timeouts.timeouts,
            state: RetrieveRun<GetResult>(spool: spool), data: summary
        ) { peer, run in
            if case .failure(let error) = made { throw error }
            let parallel = try parallel.map(DICOMWebService.validatedParallel)
            let absoluteRoot = absolutePath(root)
            if parallel != nil && peer.parallelRetrieval == nil {
                throw PXError.usage("--parallel applies to a DICOMweb peer (WADO-RS); a C-GET runs on one association")
            }
            let targets = try await RetrieveResolution.resolve(
                try await targets(peer, logger), expandPatients: model != .patientRoot || !peer.retrievesWholePatients,
                model: model, peer: peer, logger: logger)
            let verb = RetrieveVerb(
                operation: peer.retrieveOperation,
                progress: RetrieveProgressLine(command: "px-get", showsRemaining: false),
                request: { (t: RetrieveSelection, model: QueryModel) throws(PXError) in
                    var request = try GetRequest(
                        model: model, patientID: t.patientID, studyInstanceUID: t.studyInstanceUID,
                        seriesInstanceUID: t.seriesInstanceUID, sopInstanceUIDs: t.sopInstanceUIDs,
                        root: absoluteRoot)
                    // The output names each instance's path and UIDs only: no header kept per instance.
                    request.keepsHeaders = false
                    return request
                },
                send: { session, request, progress throws(PXError) in
                    try await session.get(request, onProgress: progress)
                })
            let node: DIMSEPeer
            switch peer.retrieval {
            case .parallel(var web):
                let requests = try targets.map { (t: RetrieveSelection) throws(PXError) in
                    try verb.request(t, model)
                }
                // WADO-RS: --parallel requests at once, across the targets and the series of a study.
                web.parallel = parallel ?? DICOMWebService.defaultParallel
                let format = verb.progress
                let failure = await RetrieveLoop.concurrently(targets, into: &run, operation: verb.operation) {
                    progressLine, record in
                    try await web.get(
                        requests, logger: logger,
                        onProgress: { request, progress in progressLine(format.line(request, progress)) },
                        onResult: record)
                }
                // A part that is not a complete instance was not placed: the retrieval is incomplete.
                if failure == nil && run.failed > 0 {
                    return .partialFailure(failed: run.failed, total: run.failed + run.completed, what: "instances")
                }
                return failure
            case .inSessions(let dimse): node = dimse
            }
            return try await RetrieveLoop.each(targets, verb, model: model, into: &run, node: node, logger: logger)
        }
    }

    /// The envelope's data: each C-GET with its instances (spooled: ``RetrieveRun/spool``), each target's
    /// outcome, and the totals.
    static func summary(_ run: RetrieveRun<GetResult>) -> JSONValue {
        JSONValueEncoder.encode(
            PXOutput.GetSummaryOutput(
                gets: run.results.map(PXOutput.GetOutput.init), targets: run.targets, completed: run.completed,
                failed: run.failed, warning: run.warning, instances: run.instances))
    }
}

/// A finished retrieve as the loop px-move and px-get share reads it.
protocol RetrieveOutcome {
    /// The final response's status.
    var status: DIMSEStatus { get }
    var completed: Int { get }
    /// The failed sub-operations, each once (``FailedSubOperations``).
    var failedCount: Int { get }
    var warning: Int { get }
    /// The error for failed or warning sub-operations, `nil` when all succeeded.
    var subOperationFailure: PXError? { get }
    /// What the run keeps of it for its report: without what only the retrieve's own consumer needed.
    var reported: Self { get }
    /// How many instances it stored where the run can list them (px-get's), 0 for a C-MOVE.
    var storedInstances: Int { get }
    /// Its entry in the run's report, for a run that spools them (``RetrieveRun/spool``).
    var reportEntry: JSONValue { get }
}

/// What a px-move or px-get run has done so far: every retrieve's result (or its report, spooled), the totals,
/// and every target's outcome (each target is listed, failed or not, so that a batch loses none: issue 32).
struct RetrieveRun<Result: RetrieveOutcome> {
    /// The retrieves' results as reported (``RetrieveOutcome/reported``), when there is no ``spool``.
    var results: [Result] = []
    var targets: [PXOutput.RetrieveTargetOutput] = []
    /// Where each retrieve's report entry (``RetrieveOutcome/reportEntry``) goes as it is recorded, instead of
    /// ``results``: px-get keeps no instance of a run in memory (issue 34).
    let spool: JSONArraySpool?
    /// Totals over every retrieve recorded.
    private(set) var completed = 0
    private(set) var failed = 0
    private(set) var warning = 0
    private(set) var instances = 0

    init(spool: JSONArraySpool? = nil) {
        self.spool = spool
    }

    /// Records `target`'s retrieves (several for a patient retrieved study by study) and its failure.
    mutating func record(_ target: RetrieveSelection, _ results: [Result], failure: PXError?, tried: Bool = true) {
        for result in results {
            completed += result.completed
            failed += result.failedCount
            warning += result.warning
            instances += result.storedInstances
            if let spool { spool.append(result.reportEntry) } else { self.results.append(result.reported) }
        }
        targets.append(
            PXOutput.RetrieveTargetOutput(
                patientID: target.patientID, studyInstanceUID: target.studyInstanceUID,
                seriesInstanceUID: target.seriesInstanceUID, sopInstanceUIDs: target.sopInstanceUIDs,
                completed: results.reduce(0) { $0 + $1.completed }, failed: results.reduce(0) { $0 + $1.failedCount },
                warning: results.reduce(0) { $0 + $1.warning }, error: failure, tried: tried))
    }

    /// A run of the same kind, spooling to the same place, that has recorded nothing yet.
    var empty: RetrieveRun { RetrieveRun(spool: spool) }

    /// Adds what `other` (an ``empty`` run of this one) recorded.
    mutating func merge(_ other: RetrieveRun) {
        results += other.results
        targets += other.targets
        completed += other.completed
        failed += other.failed
        warning += other.warning
        instances += other.instances
    }

    /// A target's failure: the first failure status of its retrieves, as
    /// ``PXError/dimseFailure(_:operation:)``, else the first ``RetrieveOutcome/subOperationFailure``.
    static func failure(of results: [Result], operation: String) -> PXError? {
        if let failed = results.lazy.map(\.status).first(where: \.isFailure) {
            return .dimseFailure(failed, operation: operation)
        }
        return results.lazy.compactMap(\.subOperationFailure).first
    }
}

extension MoveResult: RetrieveOutcome {
    var reported: MoveResult { self }
    var storedInstances: Int { 0 }
    var reportEntry: JSONValue { PXOutput.json(self) }
}

extension GetResult: RetrieveOutcome {
    /// Without the received instances' headers (``ReceivedInstance/header``, parsed on receipt for an index
    /// that px-get does not keep): a run of 30,000 instances held 22 KB an instance with them (655 MiB).
    var reported: GetResult {
        var out = self
        out.instances = instances.map { instance in
            var kept = instance
            kept.header = nil
            return kept
        }
        return out
    }

    var storedInstances: Int { instances.count }
    var reportEntry: JSONValue { PXOutput.json(self) }
}

/// A retrieve request as a progress line names it.
protocol RetrieveRequestKeys {
    var level: QueryLevel { get }
    var keys: [(keyword: String, value: String)] { get }
}

extension MoveRequest: RetrieveRequestKeys {}
extension GetRequest: RetrieveRequestKeys {}

/// A retrieve's progress line on stderr: `px-get: STUDY 1.2.3: completed 4, failed 0`, with
/// `, remaining N` (`-` when unknown) for a move.
struct RetrieveProgressLine: Sendable {
    /// The command the line names (`px-move`).
    let command: String
    /// Whether the line shows the remaining sub-operations.
    let showsRemaining: Bool

    func line(_ request: some RetrieveRequestKeys, _ progress: MoveProgress) -> String {
        "\(command): \(RetrieveLoop.describe(request.level, request.keys)): "
            + "completed \(progress.completed), failed \(progress.failed)"
            + (showsRemaining ? ", remaining \(progress.remaining.map(String.init) ?? "-")" : "")
    }
}

/// What px-move and px-get differ in: the request a target becomes, the session call that runs it, and the
/// progress line.
struct RetrieveVerb<Request: RetrieveRequestKeys & Sendable, Result: RetrieveOutcome> {
    /// The operation a failure status is reported for: `C-MOVE`, `C-GET`, or `WADO-RS` for a DICOMweb peer.
    let operation: String
    let progress: RetrieveProgressLine
    /// The request for a target in a model.
    let request: (RetrieveSelection, QueryModel) throws(PXError) -> Request
    /// Runs a request on the session.
    let send:
        (any RetrieveSession, Request, _ onProgress: @escaping @Sendable (MoveProgress) async -> Void)
            async throws(PXError) -> Result
}

/// The loop px-move and px-get share: one retrieve after the other on one ``RetrieveSession`` (one
/// association on the native backend), a progress line on stderr when it is a terminal. A target that fails
/// does not stop the others (as px-sync goes on after a failed study); only a peer that cannot be reached
/// at all (``stopsTheRun(_:)``) leaves the rest `notTried`. Every target is in the run's outcomes.
enum RetrieveLoop {
    /// Retrieves each of `targets` in `model` with `verb` (a whole patient the peer refuses at PATIENT level,
    /// study by study: ``RetrieveResolution/retrieve(_:model:peer:logger:status:completed:_:)``),
    /// recording each target's results and outcome in `run`. Every target is made into its request first, so
    /// that every usage error comes before the first retrieve.
    /// - Returns: the first target's failure (a failure status as ``PXError/dimseFailure(_:operation:)``,
    ///   failed or warning sub-operations as ``RetrieveOutcome/subOperationFailure``, or the error that
    ///   ended its retrieve): the run is then a failure, whatever the other targets did.
    static func each<Request, Result>(
        _ targets: [RetrieveSelection], _ verb: RetrieveVerb<Request, Result>, model: QueryModel,
        into run: inout RetrieveRun<Result>, node: DIMSEPeer, logger: Logger
    ) async throws(PXError) -> PXError? {
        for target in targets { _ = try verb.request(target, model) }
        let (showProgress, progressLine) = progress()
        var done = run.empty
        defer { run.merge(done) }
        // SIGINT/SIGTERM from here on cancel the retrieve in progress (C-CANCEL, PS3.7 §9.3.2.3, §9.3.3.3) and
        // stop the run once its final response has come or the grace is over.
        let cancellation = RetrieveCancellation()
        let signals = await UnixSignalsSequence(trapping: .sigint, .sigterm)
        let watcher = Task {
            for await signal in signals {
                logger.notice("cancelling the retrieve in progress", metadata: ["signal": "\(signal)"])
                cancellation.request(signal: signal.rawValue)
            }
        }
        defer { watcher.cancel() }
        do {
            return try await RetrieveCancellation.$current.withValue(cancellation) { () async throws(PXError) in
                try await node.withRetrieveSession(logger: logger) {
                    session throws(PXError) in
                    var first: PXError?
                    for (index, target) in targets.enumerated() {
                        do throws(PXError) {
                            let out = try await RetrieveResolution.retrieve(
                                target, model: model, peer: node, logger: logger, status: \.status,
                                completed: \.completed
                            ) { target, model throws(PXError) in
                                let request = try verb.request(target, model)
                                let format = verb.progress
                                return try await verb.send(session, request) { progress in
                                    progressLine(format.line(request, progress))
                                }
                            }
                            if showProgress { CommandOutput.writeStandardError("\n") }
                            let failure = RetrieveRun.failure(of: out, operation: verb.operation)
                            done.record(target, out, failure: failure)
                            first = first ?? failure
                        } catch {
                            if showProgress { CommandOutput.writeStandardError("\n") }
                            logger.notice(
                                "a retrieve failed; going on with the next target",
                                metadata: ["target": "\(target.studyInstanceUID)", "error": "\(error)"])
                            done.record(target, [], failure: error)
                            first = first ?? error
                            if stopsTheRun(error) {
                                for rest in targets[(index + 1)...] {
                                    done.record(rest, [], failure: error, tried: false)
                                }
                                break
                            }
                        }
                        if let signal = cancellation.requestedSignal {
                            let interrupted = PXError.interrupted(
                                signal: signal,
                                detail: "\(verb.operation) cancelled after \(done.completed) completed sub-operations")
                            for rest in targets[(index + 1)...] {
                                done.record(rest, [], failure: interrupted, tried: false)
                            }
                            return interrupted
                        }
                    }
                    return first
                }
            }
        } catch {
            throw PXError.from(error)
        }
    }

    /// Whether `error` says the peer cannot serve any retrieve of this run (it cannot be reached, refuses the
    /// association, accepts no context for the service, or the TLS handshake fails), so that the targets
    /// after it are not tried; a failure status, a timeout or an abort belongs to one target only.
    static func stopsTheRun(_ error: PXError) -> Bool {
        let unreachable: [PXError.Code] = [
            .connectionRefused, .unknownHost, .associationRejected, .noAcceptablePresentationContext,
            .tls(.untrustedCertificate), .tls(.hostnameMismatch), .tls(.expiredCertificate), .tls(.peerNotTLS),
            .tls(.peerExpectsTLS), .tls(.certificateRequired), .tls(.handshakeFailed),
        ]
        return unreachable.contains(error.code)
    }

    /// What a progress line names: the level and the deepest key (a PatientID at PATIENT level).
    static func describe(_ level: QueryLevel, _ keys: [(keyword: String, value: String)]) -> String {
        "\(level.dicomValue) \(keys.last?.value ?? "")"
    }

    /// Whether progress lines are shown (stderr is a terminal), and the function writing one over the last, its
    /// text escaped (``HumanText``: the keys may come from a peer's answer on stdin).
    static func progress() -> (show: Bool, line: @Sendable (String) -> Void) {
        let show = CommandOutput.standardErrorIsTerminal
        return (
            show,
            { line in if show { CommandOutput.writeStandardError("\r" + HumanText.escaped(line) + "   ") } }
        )
    }

    /// Runs `retrieve` once, which retrieves the request of each of `targets` side by side and hands each
    /// target's result (by its index in `targets`) to its `record` as it is done, and records each target's
    /// outcome in `targets`' order (a result that comes before those of earlier targets waits for them); an
    /// error that ended the retrieval is the failure of every target not yet done.
    /// - Returns: the first target's failure, as ``RetrieveLoop/each(_:_:model:into:node:logger:)``.
    static func concurrently<Result: RetrieveOutcome>(
        _ targets: [RetrieveSelection], into run: inout RetrieveRun<Result>, operation: String,
        _ retrieve:
            (
                _ progressLine: @escaping @Sendable (String) -> Void,
                _ record: (Int, Result) async -> Void
            ) async throws -> Void
    ) async -> PXError? {
        let (showProgress, progressLine) = progress()
        var first: PXError?
        var recorded = 0
        var waiting: [Int: Result] = [:]
        func record(_ index: Int, _ result: Result) {
            waiting[index] = result.reported
            while let next = waiting.removeValue(forKey: recorded) {
                let failure = RetrieveRun.failure(of: [next], operation: operation)
                run.record(targets[recorded], [next], failure: failure)
                first = first ?? failure
                recorded += 1
            }
        }
        /// Records the targets not recorded yet: those with a result as done, the others with `failure`.
        func recordRest(failing failure: PXError) -> PXError {
            for index in recorded..<targets.count {
                let results = waiting.removeValue(forKey: index).map { [$0] } ?? []
                let failed = results.isEmpty ? failure : RetrieveRun.failure(of: results, operation: operation)
                run.record(targets[index], results, failure: failed)
                first = first ?? failed
            }
            recorded = targets.count
            return first ?? failure
        }
        do {
            try await retrieve(progressLine) { index, result in record(index, result) }
        } catch {
            if showProgress { CommandOutput.writeStandardError("\n") }
            return recordRest(failing: error.asPXError)
        }
        if showProgress { CommandOutput.writeStandardError("\n") }
        guard recorded == targets.count else {
            // A retrieval that ended without a result for some target: none is lost from the report.
            return recordRest(failing: .invalidResponse("\(operation) ended without a result for this target"))
        }
        return first
    }
}
