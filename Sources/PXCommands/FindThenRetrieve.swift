import DICOMData
import Logging
import PXCommandLine
import PXCore

/// px-find `--then retrieve` (pypx 3.x): the query px-find would run (one C-FIND at `--level`, or the two-phase
/// study-then-series query), then every match retrieved as px-move or px-get would retrieve it piped in
/// (each series of a study with series, else each match at its level; a PATIENT-level match is the whole
/// patient). The output is the retrieve's envelope (data.moves or data.gets).
public enum FindThenRetrieve {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        query: QueryOptions, then: ThenOptions, output: CommandOutput
    ) async throws {
        let found: RetrieveTargets = { peer, logger throws(PXError) in
            try await targets(query: query, peer: peer, logger: logger)
        }
        if let root = then.datadir {
            try await GetCommand.run(
                connection: connection, timeouts: timeouts, backend: backend, logging: logging, model: query.model,
                root: root, output: output, label: "px-find", targets: found)
        } else {
            try await MoveCommand.run(
                connection: connection, timeouts: timeouts, backend: backend, logging: logging, model: query.model,
                destination: then.destination, output: output, label: "px-find", targets: found)
        }
    }

    /// What the query finds, as retrieve targets.
    /// - Throws: ``PXError/dimseFailure(_:operation:)`` for a failure status of the query.
    static func targets(
        query: QueryOptions, peer: any Querying, logger: Logger
    ) async throws(PXError) -> [RetrieveSelection] {
        let keys = try query.matchingKeys()
        var out: [RetrieveSelection] = []
        if let level = query.singleLevel {
            let result = try await peer.find(
                FindRequest(
                    level: level, model: query.model, identifier: try query.identifier(level: level, keys: keys),
                    limit: query.limit, maxResponses: query.responseBound),
                logger: logger, onResponse: { _ in })
            if result.status.isFailure { throw .dimseFailure(result.status, operation: peer.queryOperation) }
            for match in result.matches {
                if let target = target(match, level: level) { out.append(target) }
            }
        } else {
            let seriesKeys = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
            let studyKeys = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
            let status = try await peer.forEachStudyWithSeries(
                studyKeys: try query.identifier(level: .study, keys: studyKeys),
                seriesKeys: try query.identifier(level: .series, keys: seriesKeys), model: query.model,
                studyLimit: query.limit, maxResponses: query.responseBound, logger: logger
            ) { found throws(PXError) in
                if !seriesKeys.isEmpty && found.series.isEmpty { return }
                guard let study = target(found.study, level: .study) else { return }
                let series = found.series.compactMap { text($0, .seriesInstanceUID) }
                if series.isEmpty { out.append(study) }
                for uid in series {
                    out.append(
                        RetrieveSelection(
                            patientID: study.patientID, studyInstanceUID: study.studyInstanceUID,
                            seriesInstanceUID: uid))
                }
            }
            if status.isFailure { throw .dimseFailure(status, operation: peer.queryOperation) }
        }
        var seen = Set<RetrieveSelection>()
        return out.filter { seen.insert($0).inserted }
    }

    /// A match as a target at its level; `nil` when it lacks the level's UID.
    static func target(_ match: DataSet, level: QueryLevel) -> RetrieveSelection? {
        let patientID = text(match, .patientID)
        if level == .patient { return patientID.map(RetrieveSelection.patient) }
        guard let study = text(match, .studyInstanceUID) else { return nil }
        let series = level == .study ? nil : text(match, .seriesInstanceUID)
        let sop = level == .image ? text(match, .sopInstanceUID) : nil
        if level != .study && series == nil { return nil }
        if level == .image && sop == nil { return nil }
        return RetrieveSelection(
            patientID: patientID, studyInstanceUID: study, seriesInstanceUID: series,
            sopInstanceUIDs: sop.map { [$0] } ?? [])
    }

    static func text(_ match: DataSet, _ tag: Tag) -> String? {
        guard let value = match.string(tag), !value.isEmpty else { return nil }
        return value
    }
}
