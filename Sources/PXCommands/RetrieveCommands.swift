import DICOMData
import DICOMWeb
import Logging
import PXCommandLine
import PXCore

/// What a retrieve retrieves, asked once the backend and connection are known: ``RetrieveOptions`` (px-move,
/// px-get) or a find's matches (px-find --then retrieve).
public typealias RetrieveTargets = (any Querying, Connection, Logger) async throws(PXError) -> [RetrieveSelection]

/// px-move: a C-MOVE per target to `destination` (PS3.4 §C.4.2).
public enum MoveCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        retrieve: RetrieveOptions, destination: String?, output: OutputOptions
    ) async throws {
        try await run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, model: retrieve.model,
            destination: destination, output: output.output, label: "px-move"
        ) { _, _, _ throws(PXError) in try retrieve.targets(verb: "move") }
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
            output: output, backend: backend, need: .move, peer: connection,
            state: [MoveResult](), data: summary
        ) { dicomBackend, results in
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            guard let destination = destination ?? connection.callingAETitle else {
                throw PXError.usage("give the move destination with --destination")
            }
            let targets = try await RetrieveResolution.resolve(
                try await targets(dicomBackend, conn, logger), expandPatients: model != .patientRoot,
                model: model, backend: dicomBackend, connection: conn, logger: logger)
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
            return try await RetrieveLoop.each(
                targets, verb, model: model, into: &results, backend: dicomBackend, connection: conn, logger: logger)
        }
    }

    /// The envelope's data: each C-MOVE and the sub-operation totals.
    public static func summary(_ results: [MoveResult]) -> JSONValue {
        JSONValueEncoder.encode(PXOutput.MoveSummaryOutput(results))
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
        ) { _, _, _ throws(PXError) in try retrieve.targets(verb: "get") }
    }

    /// A C-GET (WADO-RS for a DICOMweb peer) in `model` of each of `targets` (resolved by
    /// ``RetrieveResolution``) into `root`, the envelope written to `output`.
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        model: QueryModel, root: String, output: CommandOutput, parallel: Int? = nil, label: String,
        targets: RetrieveTargets
    ) async throws {
        let logger = logging.makeLogger(label: label)
        try await CommandRunner.run(
            output: output, backend: backend, need: .retrieve, peer: connection,
            state: [GetResult](), data: summary
        ) { dicomBackend, results in
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            let parallel = try parallel.map(DICOMWebBackend.validatedParallel)
            let absoluteRoot = absolutePath(root)
            if parallel != nil && dicomBackend.parallelRetrieval == nil {
                throw PXError.usage("--parallel applies to a DICOMweb peer (WADO-RS); a C-GET runs on one association")
            }
            let targets = try await RetrieveResolution.resolve(
                try await targets(dicomBackend, conn, logger),
                expandPatients: model != .patientRoot || !dicomBackend.retrievesWholePatients,
                model: model, backend: dicomBackend, connection: conn, logger: logger)
            let verb = RetrieveVerb(
                operation: "C-GET", progress: RetrieveProgressLine(command: "px-get", showsRemaining: false),
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
            let sessions: any DICOMBackend
            switch dicomBackend.retrieval {
            case .parallel(var web):
                let requests = try targets.map { (t: RetrieveSelection) throws(PXError) in
                    try verb.request(t, model)
                }
                // WADO-RS: --parallel requests at once, across the targets and the series of a study.
                web.parallel = parallel ?? DICOMWebBackend.defaultParallel
                let format = verb.progress
                let failure = try await RetrieveLoop.concurrently(into: &results) { progressLine in
                    try await web.get(requests, connection: conn, logger: logger) { request, progress in
                        progressLine(format.line(request, progress))
                    }
                }
                // A part that is not a complete instance was not placed: the retrieval is incomplete.
                let failed = results.reduce(0) { $0 + $1.failed }
                if failure == nil && failed > 0 {
                    let total = failed + results.reduce(0) { $0 + $1.completed }
                    return .partialFailure(failed: failed, total: total, what: "instances")
                }
                return failure
            case .inSessions(let backend): sessions = backend
            }
            return try await RetrieveLoop.each(
                targets, verb, model: model, into: &results, backend: sessions, connection: conn, logger: logger)
        }
    }

    /// The envelope's data: each C-GET with its instances, and the totals.
    public static func summary(_ results: [GetResult]) -> JSONValue {
        JSONValueEncoder.encode(PXOutput.GetSummaryOutput(results))
    }
}

/// A finished retrieve as the loop px-move and px-get share reads it.
protocol RetrieveOutcome {
    /// The final response's status.
    var status: DIMSEStatus { get }
    var completed: Int { get }
    var failed: Int { get }
    /// The error for failed or warning sub-operations, `nil` when all succeeded.
    var subOperationFailure: PXError? { get }
}

extension MoveResult: RetrieveOutcome {}
extension GetResult: RetrieveOutcome {}

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
    /// The DIMSE operation a failure status is reported for (`C-MOVE`).
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
/// association on the native backend), a progress line on stderr when it is a terminal, and a stop at the
/// first that ends with a failure status.
enum RetrieveLoop {
    /// Retrieves each of `targets` in `model` with `verb` (a whole patient the peer refuses at PATIENT level,
    /// study by study: ``RetrieveResolution/retrieve(_:model:backend:connection:logger:status:completed:_:)``),
    /// appending the results. Every target is made into its request first, so that every usage error comes
    /// before the first retrieve.
    /// - Returns: the failure status that stopped the loop, as ``PXError/dimseFailure(_:operation:)``; else the
    ///   first result's ``RetrieveOutcome/subOperationFailure`` (failed or warning sub-operations, as with a
    ///   final 0xB000): the run is a partial failure, never a success.
    static func each<Request, Result>(
        _ targets: [RetrieveSelection], _ verb: RetrieveVerb<Request, Result>, model: QueryModel,
        into results: inout [Result], backend: any DICOMBackend, connection: Connection, logger: Logger
    ) async throws(PXError) -> PXError? {
        for target in targets { _ = try verb.request(target, model) }
        let (showProgress, progressLine) = progress()
        var done: [Result] = []
        defer { results += done }
        return try await backend.withRetrieveSession(connection: connection, logger: logger) {
            session throws(PXError) in
            for target in targets {
                let out = try await RetrieveResolution.retrieve(
                    target, model: model, backend: backend, connection: connection, logger: logger,
                    status: \.status, completed: \.completed
                ) { target, model throws(PXError) in
                    let request = try verb.request(target, model)
                    let format = verb.progress
                    return try await verb.send(session, request) { progress in
                        progressLine(format.line(request, progress))
                    }
                }
                if showProgress { CommandOutput.writeStandardError("\n") }
                done += out
                if let failed = out.lazy.map(\.status).first(where: \.isFailure) {
                    return .dimseFailure(failed, operation: verb.operation)
                }
            }
            return done.lazy.compactMap(\.subOperationFailure).first
        }
    }

    /// What a progress line names: the level and the deepest key (a PatientID at PATIENT level).
    static func describe(_ level: QueryLevel, _ keys: [(keyword: String, value: String)]) -> String {
        "\(level.dicomValue) \(keys.last?.value ?? "")"
    }

    /// Whether progress lines are shown (stderr is a terminal), and the function writing one over the last.
    static func progress() -> (show: Bool, line: @Sendable (String) -> Void) {
        let show = CommandOutput.standardErrorIsTerminal
        return (show, { line in if show { CommandOutput.writeStandardError("\r" + line + "   ") } })
    }

    /// Runs `retrieve` once, which retrieves every request side by side, and appends its results.
    /// - Returns: the first failure status, as ``PXError/dimseFailure(_:operation:)``.
    static func concurrently<Result: RetrieveOutcome>(
        into results: inout [Result],
        _ retrieve: (_ progressLine: @escaping @Sendable (String) -> Void) async throws -> [Result]
    ) async throws -> PXError? {
        let (showProgress, progressLine) = progress()
        results += try await retrieve(progressLine)
        if showProgress { CommandOutput.writeStandardError("\n") }
        if let failed = results.map(\.status).first(where: \.isFailure) {
            return .dimseFailure(failed, operation: "C-GET")
        }
        return nil
    }
}
