import DICOMData
import Logging
import PXCommandLine
import PXCore
import Synchronization

extension FindCommand {
    /// px-find `--queries FILE`: a cohort, one query per row of the file (``QueryRowReader``), every row the
    /// command's query (its level, model, return keys and keys) with the row's keys over it.
    ///
    /// The rows run over one association (``Querying/withQuerySession(logger:_:)``), or `parallel` lanes each
    /// with its own. Each match is written as it arrives, an NDJSON line with `"row"` first; a row that fails
    /// (it cannot be read, its C-FIND fails or ends with a failure status) is one `{"row": N, "error": {...}}`
    /// line and the next row runs. The envelope's `data` is ``CohortCounts``; when a row failed its error is
    /// ``PXError/partialFailure(failed:total:what:)`` (exit 1).
    public static func run(
        queries path: String, parallel: Int, connection: ConnectionOptions, timeouts: TimeoutOptions,
        backend: BackendOptions, logging: LoggingOptions, query: QueryOptions, output: CommandOutput
    ) async throws {
        let logger = logging.makeLogger(label: "px-find")
        try await CommandRunner.run(
            output: output, backend: backend, need: .cohort, peer: connection, timeouts: timeouts.timeouts,
            state: CohortCounts(), data: JSONValueEncoder.encode
        ) { peer, counts in
            try checkTreeLevel(format: .ndjson, query: query)
            let common = try query.matchingKeys()
            let rows = try CohortRows(reader: QueryRowReader(path: path))
            let sink = CohortSink(output: output)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<parallel {
                    group.addTask {
                        await runLane(rows: rows, peer: peer, query: query, common: common, logger: logger, sink: sink)
                    }
                }
            }
            counts = sink.counts
            if let failure = await rows.failure { return failure }
            guard counts.failed > 0 else { return nil }
            return .partialFailure(failed: counts.failed, total: counts.rows, what: "rows")
        }
    }

    /// One lane: rows taken from `rows` until there are none, on one query session.
    static func runLane(
        rows: CohortRows, peer: any Querying, query: QueryOptions, common: [QueryKey], logger: Logger,
        sink: CohortSink
    ) async {
        func fail(_ row: Int, _ error: PXError) { sink.fail(row: row, error) }
        do throws(PXError) {
            try await peer.withQuerySession(logger: logger) { session throws(PXError) in
                while let next = await rows.next() {
                    sink.started()
                    let row: QueryRow
                    switch next {
                    case .failure(let failure):
                        fail(failure.row, failure.error)
                        continue
                    case .success(let value): row = value
                    }
                    let tagged = { @Sendable (match: DataSet) in sink.match(match, row: row.number) }
                    do throws(PXError) {
                        let keys = common + row.keys
                        if let (level, identifier) = try singleQuery(query, keys: keys) {
                            let request = FindRequest(
                                level: level, model: query.model, identifier: identifier, limit: query.limit,
                                maxResponses: query.responseBound)
                            let result = try await session.find(request, logger: logger) { response in
                                if let match = response.identifier { tagged(match) }
                            }
                            if result.status.isFailure {
                                throw PXError.dimseFailure(result.status, operation: session.queryOperation)
                            }
                        } else {
                            let (studyKeys, seriesKeys) = twoPhaseKeys(keys)
                            var seriesFailure: DIMSEStatus?
                            let status = try await session.forEachStudyWithSeries(
                                studyKeys: try query.identifier(level: .study, keys: studyKeys),
                                seriesKeys: try query.identifier(level: .series, keys: seriesKeys), model: query.model,
                                studyLimit: query.limit, maxResponses: query.responseBound, logger: logger
                            ) { study throws(PXError) in
                                if !seriesKeys.isEmpty && study.series.isEmpty { return }
                                if study.seriesStatus.isFailure && seriesFailure == nil {
                                    seriesFailure = study.seriesStatus
                                }
                                tagged(study.study)
                                for series in study.series { tagged(series) }
                            }
                            if status.isFailure {
                                throw PXError.dimseFailure(status, operation: session.queryOperation)
                            }
                            if let seriesFailure {
                                throw PXError.dimseFailure(
                                    seriesFailure, operation: "\(session.queryOperation) (series)")
                            }
                        }
                    } catch {
                        fail(row.number, error)
                    }
                }
            }
        } catch {
            // The session could not be opened: every row this lane takes fails with that error.
            while let next = await rows.next() {
                sink.started()
                switch next {
                case .failure(let failure): fail(failure.row, failure.error)
                case .success(let row): fail(row.number, error)
                }
            }
        }
    }

    /// The two-phase query's keys: those of the series level (``QueryDefaults/seriesKeywords``), and the rest
    /// for the study level.
    static func twoPhaseKeys(_ keys: [QueryKey]) -> (study: [QueryKey], series: [QueryKey]) {
        let series = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
        let study = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
        return (study, series)
    }

    /// `data` of px-find `--queries`: `{"rows": R, "failed": F, "matches": M}`, M counting every match line
    /// (in the two-phase query a study's line and each of its series' lines).
    public struct CohortCounts: Encodable, Sendable {
        public var rows = 0
        public var failed = 0
        public var matches = 0
    }
}

/// Where the lanes of a cohort write: one line at a time (lanes' lines never interleave inside a line), and
/// the counts.
final class CohortSink: Sendable {
    private let output: Mutex<CommandOutput>
    private let tally = Mutex(FindCommand.CohortCounts())

    init(output: CommandOutput) {
        self.output = Mutex(output)
    }

    var counts: FindCommand.CohortCounts { tally.withLock { $0 } }

    func started() { tally.withLock { $0.rows += 1 } }

    /// A match of row `row`: its NDJSON line with `"row"` first.
    func match(_ match: DataSet, row: Int) {
        tally.withLock { $0.matches += 1 }
        guard case .object(let members) = PXOutput.ndjsonLine(match) else { return }
        write(.object([JSONMember("row", .number(String(row)))] + members))
    }

    /// Row `row` failed: its `{"row", "error"}` line.
    func fail(row: Int, _ error: PXError) {
        tally.withLock { $0.failed += 1 }
        write(
            .object([
                JSONMember("row", .number(String(row))),
                JSONMember("error", JSONValueEncoder.encode(PXOutput.ErrorOutput(error))),
            ]))
    }

    private func write(_ line: JSONValue) { output.withLock { $0.write(line, pretty: false) } }
}

/// The rows of a cohort handed to the lanes one at a time, in the file's order.
actor CohortRows {
    struct RowFailure: Error {
        var row: Int
        var error: PXError
    }

    private var reader: QueryRowReader
    private var number = 0
    /// Why the file could not be read on (an I/O error), reported as the command's error.
    private(set) var failure: PXError?

    init(reader: consuming QueryRowReader) {
        self.reader = reader
    }

    /// The next row or its failure; `nil` when there are no more.
    func next() -> Result<QueryRow, RowFailure>? {
        guard failure == nil else { return nil }
        do throws(PXError) {
            guard let row = try reader.next() else { return nil }
            number += 1
            switch row {
            case .success(let value): return .success(value)
            case .failure(let error): return .failure(RowFailure(row: number, error: error))
            }
        } catch {
            failure = error
            return nil
        }
    }
}
