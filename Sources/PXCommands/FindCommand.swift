import DICOMData
import PXCommandLine
import PXCore

/// px-find: one C-FIND at `--level`, or pypx 3.x's two-phase query (studies, then the series of each),
/// printed in the `--format` asked for (PS3.4 §C.4.1).
public enum FindCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        query: QueryOptions, output outputOptions: FindOutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-find")
        let format = outputOptions.format
        let csvRaw = outputOptions.csvRaw
        var spoolingOutput = outputOptions.output
        // pypx or DICOM JSON shape: each match (a study with its series, in the two-phase query) goes to a
        // temporary file as it is ready and none is kept, so memory stays flat however many the peer sends
        // (issue 14).
        let spooled = format.isPypx || format == .dicomJSON
        // A spool that cannot be made (TMPDIR missing, a full disk) is the command's error, in its envelope.
        let made = Result { () throws(PXError) in spooled ? try JSONArraySpool(pretty: spoolingOutput.pretty) : nil }
        let spool: JSONArraySpool? = if case .success(let value) = made { value } else { nil }
        let spoolFailure: PXError? = if case .failure(let error) = made { error } else { nil }
        spoolingOutput.spool = spool
        // pypx's `command`: the (study) query as a findscu command line. Options that cannot make it fail the
        // command below, in its envelope.
        if format == .pypx,
            case .success(let line) = Result(catching: {
                try commandLine(query, connection: connection, timeouts: timeouts)
            })
        {
            spoolingOutput.commandLine = line
        }
        let output = spoolingOutput
        // A table, tree or CSV is for people and spreadsheets: the envelope follows it only to report a failure.
        let forPeople = format == .table || format == .tree || format == .csv
        try await CommandRunner.run(
            output: output, backend: backend, need: .query, peer: connection, timeouts: timeouts.timeouts,
            envelopeOnSuccess: !forPeople
        ) { peer, data in
            if let spoolFailure { throw spoolFailure }
            // pypx's per-series `command` names the peer as findscu would (``FindscuAddress``).
            let address = format.isPypx ? try connection.findscuAddress(timeouts: timeouts.timeouts) : nil
            let keys = try query.matchingKeys()
            var failure: PXError?
            try checkTreeLevel(format: format, query: query)
            if let (level, identifier) = try singleQuery(query, keys: keys) {
                let request = FindRequest(
                    level: level, model: query.model, identifier: identifier, limit: query.limit,
                    maxResponses: query.responseBound, keepMatches: forPeople && format != .csv)
                let columns = PXOutput.csvColumns(identifier)
                if format == .csv { output.writeText(PXOutput.csvRecord(columns)) }
                let result = try await peer.find(request, logger: logger) { response in
                    guard let ds = response.identifier else { return }
                    if format == .ndjson {
                        output.write(PXOutput.ndjsonLine(ds), pretty: false)
                    } else if format == .csv {
                        output.writeText(PXOutput.csvRecord(PXOutput.csvFields([ds], columns: columns), raw: csvRaw))
                    } else if let spool {
                        spool.append(
                            format.isPypx
                                ? PXOutput.pypxEntry(ds, index: spool.count, strict: format == .pypx) : ds.dicomJSON())
                    }
                }
                var matches = result.matches
                if format == .tree {
                    // The counts the peer left empty, one level down.
                    matches = await countingOneLevelDown(
                        matches.map { StudyWithSeries(study: $0, series: [], seriesStatus: .success) },
                        seriesKnown: false, peer: peer, model: query.model, maxResponses: query.responseBound,
                        logger: logger
                    ).map(\.study)
                }
                if forPeople {
                    let rows = query.model == .worklist ? matches.flatMap(WorklistQuery.rows) : matches
                    writeForPeople(rows, format: format, to: output)
                }
                spool?.complete()
                data = forPeople || spool != nil ? nil : PXOutput.findData(result, format: format)
                if result.status.isFailure { failure = .dimseFailure(result.status, operation: peer.queryOperation) }
            } else {
                let (studyKeys, seriesKeys) = twoPhaseKeys(keys)
                let seriesOnly = !seriesKeys.isEmpty
                var kept: [StudyWithSeries] = []
                var (studyCount, seriesCount) = (0, 0)
                var seriesFailure: DIMSEStatus?
                let studyIdentifier = try twoPhaseIdentifier(query, format: format, level: .study, keys: studyKeys)
                let seriesIdentifier = try twoPhaseIdentifier(query, format: format, level: .series, keys: seriesKeys)
                let columns = PXOutput.csvColumns(study: studyIdentifier, series: seriesIdentifier)
                if format == .csv { output.writeText(PXOutput.csvRecord(columns)) }
                let status = try await peer.forEachStudyWithSeries(
                    studyKeys: studyIdentifier, seriesKeys: seriesIdentifier, model: query.model,
                    studyLimit: query.limit, maxResponses: query.responseBound,
                    keptIfReturned: format.isPypx ? [EntityMatching.retrieveAETitle] : [], logger: logger
                ) { study throws(PXError) in
                    if seriesOnly && study.series.isEmpty { return }
                    if study.seriesStatus.isFailure && seriesFailure == nil { seriesFailure = study.seriesStatus }
                    if let spool {
                        // pypx's per-series `command`: the series query of this study as a findscu command line.
                        var keys = seriesIdentifier
                        keys.set(.studyInstanceUID, vr: .UI, string: study.study.string(.studyInstanceUID) ?? "")
                        if query.model == .patientRoot, let id = study.study.string(.patientID) {
                            keys.set(.patientID, vr: .LO, string: id)
                        }
                        let seriesCommand = address.map {
                            PXOutput.findscuCommandLine(keys, level: .series, model: query.model, address: $0)
                        }
                        spool.append(
                            PXOutput.studyEntry(
                                study, index: spool.count, format: format, seriesCommand: seriesCommand))
                    } else if format == .csv {
                        output.writeText(PXOutput.csvRecords(study, columns: columns, raw: csvRaw))
                    } else if format == .ndjson {
                        writeLines([study], format: format, to: output)
                        studyCount += 1
                        seriesCount += study.series.count
                    } else {
                        kept.append(study)
                    }
                }
                if format == .tree {
                    kept = await countingOneLevelDown(
                        kept, seriesKnown: true, peer: peer, model: query.model, maxResponses: query.responseBound,
                        logger: logger)
                }
                if forPeople { writeLines(kept, format: format, to: output) }
                spool?.complete()
                data =
                    forPeople || spool != nil
                    ? nil
                    : JSONValueEncoder.encode(PXOutput.TwoPhaseCountOutput(studies: studyCount, series: seriesCount))
                if status.isFailure { failure = .dimseFailure(status, operation: peer.queryOperation) }
                if let seriesFailure {
                    failure = failure ?? .dimseFailure(seriesFailure, operation: "\(peer.queryOperation) (series)")
                }
            }
            return failure
        }
    }

    /// The level and identifier of a single C-FIND: `--level` (or `--StudyOnly`), or a worklist query
    /// (``WorklistQuery``; its level is unused); `nil` for the two-phase query.
    static func singleQuery(_ query: QueryOptions, keys: [QueryKey]) throws(PXError) -> (QueryLevel, DataSet)? {
        if query.model == .worklist {
            let returnTags = query.queryReturnTags.map { $0.split(separator: ",").map { String($0.trimmed) } }
            return (.study, try WorklistQuery.identifier(keys: keys, returnTags: returnTags))
        }
        guard let level = query.singleLevel else { return nil }
        return (level, try query.identifier(level: level, keys: keys))
    }

    /// The two-phase query's identifier at `level`: in the pypx formats pypx 3.12.6's return keys at both
    /// levels (``PXOutput/pypxReturnKeywords``, with SpecificCharacterSet) unless `--QueryReturnTags` names
    /// them, else px's keys for the level; then the matching keys.
    static func twoPhaseIdentifier(
        _ query: QueryOptions, format: PXOutput.FindFormat, level: QueryLevel, keys: [QueryKey]
    ) throws(PXError) -> DataSet {
        guard format.isPypx, query.queryReturnTags == nil else { return try query.identifier(level: level, keys: keys) }
        return try QueryKey.identifier(
            returning: ["SpecificCharacterSet"] + PXOutput.pypxReturnKeywords, matching: keys)
    }

    /// The envelope's `command` in pypx's format: the C-FIND px sends first (the single-level one, or the
    /// study query of the two-phase one) as a findscu command line.
    static func commandLine(
        _ query: QueryOptions, connection options: ConnectionOptions, timeouts: TimeoutOptions
    ) throws(PXError) -> String {
        let address = try options.findscuAddress(timeouts: timeouts.timeouts)
        let keys = try query.matchingKeys()
        if let level = query.singleLevel {
            return PXOutput.findscuCommandLine(
                try query.identifier(level: level, keys: keys), level: level, model: query.model, address: address)
        }
        let studyKeys = twoPhaseKeys(keys).study
        return PXOutput.findscuCommandLine(
            try twoPhaseIdentifier(query, format: .pypx, level: .study, keys: studyKeys), level: .study,
            model: query.model, address: address)
    }

    /// `--format tree` shows studies: with `--level` other than study it is a usage error.
    static func checkTreeLevel(format: PXOutput.FindFormat, query: QueryOptions) throws(PXError) {
        if format == .tree && query.model == .worklist {
            throw PXError.usage("--format tree shows studies: a worklist query lists scheduled procedure steps")
        }
        if format == .tree, let level = query.singleLevel, level != .study {
            throw PXError.usage("--format tree shows studies: use it without --level, or with --level study")
        }
    }

    /// The single-level matches as the table or tree people read (printed before any envelope).
    static func writeForPeople(_ matches: [DataSet], format: PXOutput.FindFormat, to output: CommandOutput) {
        switch format {
        case .table: output.writeText(PXOutput.table(matches))
        case .tree:
            let studies = matches.map { StudyWithSeries(study: $0, series: [], seriesStatus: .success) }
            output.writeText(PXOutput.tree(PXOutput.treeStudies(studies, seriesKnown: false)))
        default: break
        }
    }

    /// The two-phase answer's lines: NDJSON (each study, then its series), a table row per series, or the tree.
    static func writeLines(_ studies: [StudyWithSeries], format: PXOutput.FindFormat, to output: CommandOutput) {
        switch format {
        case .ndjson:
            for s in studies {
                output.write(PXOutput.ndjsonLine(s.study), pretty: false)
                for series in s.series { output.write(PXOutput.ndjsonLine(series), pretty: false) }
            }
        case .table:
            output.writeText(
                PXOutput.table(
                    studies.flatMap { s in s.series.isEmpty ? [s.study] : s.series.map { merge(s.study, $0) } }))
        case .tree:
            output.writeText(PXOutput.tree(PXOutput.treeStudies(studies)))
        default: break
        }
    }

    /// A table row for one series: its study's attributes, then the series' own.
    static func merge(_ study: DataSet, _ series: DataSet) -> DataSet {
        var out = study
        for element in series.elements { out.set(element) }
        return out
    }
}
