import ArgumentParser
import DICOMData
import Logging
import PX
import PXCommandLine
import PXCore
import PXIndex
import PXPlaces
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

/// px-ls's options besides the query and output ones: the place, and whether to bring its index up to date.
public struct ListOptions: ParsableArguments {
    @Argument(
        help:
            "The place to list: a folder (its index, PLACE/.px/index.sqlite, is made on first use), zip:PATH (a zip place, read from its archives' manifests and directories), or a config place."
    )
    public var place: String
    @Flag(
        name: .customLong("no-refresh"),
        help: "Answer from the index as it is, without walking the place for new, changed or removed files.")
    public var noRefresh = false

    public init() {}
}

/// px-ls: what a folder place holds, asked and printed as px-find asks a node (the same keys, levels, models and
/// formats; C-FIND matching of PS3.4 §C.2.2.2 over the place's index), after bringing the index up to date.
public enum ListCommand {
    public static func run(
        list: ListOptions, query: QueryOptions, output outputOptions: FindOutputOptions, logging: LoggingOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-ls")
        let format = outputOptions.format
        let csvRaw = outputOptions.csvRaw
        let output = outputOptions.output
        // A table, tree or CSV is for people and spreadsheets: the envelope follows it only to report a failure.
        let forPeople = format == .table || format == .tree || format == .csv
        var data: JSONValue?
        var failure: PXError?
        // A zip place's archives that cannot be read: each fails alone, the others are listed.
        var archiveFailure: PXError?
        do {
            let listing: Listing
            switch try Self.place(list.place) {
            case .folder(let path, _):
                let place = try FolderPlace(root: absolutePath(path), index: .readOnly, logger: logger)
                if !list.noRefresh {
                    let report = try await place.refresh()
                    logger.debug(
                        "index refreshed",
                        metadata: [
                            "added": "\(report.added)", "updated": "\(report.updated)",
                            "removed": "\(report.removed)", "unreadable": "\(report.unreadable)",
                            "instances": "\(report.instances)",
                        ])
                }
                listing = .folder(place)
            case .zip(let path):
                let listed = try ZipPlace(root: absolutePath(path)).instanceRecords()
                listing = .records(listed.records)
                archiveFailure = PXError.zipArchives(listed.failures)
            case let other:
                throw PXError.usage("px-ls lists folder and zip places; \(other) is a \(other.kind)")
            }
            if query.model == .worklist {
                throw PXError.usage("px-ls lists what a place holds: it has no worklist (use --model study or patient)")
            }
            let keys = try query.matchingKeys()
            try FindCommand.checkTreeLevel(format: format, query: query)
            if let level = query.singleLevel {
                let identifier = try query.identifier(level: level, keys: keys)
                // NDJSON lines are written as the matches are found, none kept: a listing of any size is
                // printed in the memory of one batch of records.
                var matches: [DataSet] = []
                let count = try await Self.find(listing, level: level, identifier: identifier, limit: query.limit) {
                    if format == .ndjson {
                        output.write(PXOutput.ndjsonLine($0), pretty: false)
                    } else {
                        matches.append($0)
                    }
                }
                if format == .csv {
                    let columns = PXOutput.csvColumns(identifier)
                    output.writeText(
                        ([PXOutput.csvRecord(columns)]
                            + matches.map {
                                PXOutput.csvRecord(PXOutput.csvFields([$0], columns: columns), raw: csvRaw)
                            })
                            .joined())
                }
                FindCommand.writeForPeople(matches, format: format, to: output)
                data =
                    forPeople
                    ? nil
                    : format == .ndjson
                        ? JSONValueEncoder.encode(PXOutput.FindCountOutput(count: count))
                        : PXOutput.findData(matches, format: format)
            } else {
                let seriesKeys = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
                let studyKeys = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
                let seriesIdentifier = try query.identifier(level: .series, keys: seriesKeys)
                let studyIdentifier = try query.identifier(level: .study, keys: studyKeys)
                var studies: [StudyWithSeries] = []
                for study in try await Self.matches(
                    listing, level: .study, identifier: studyIdentifier, limit: query.limit)
                {
                    var identifier = seriesIdentifier
                    identifier.set(.studyInstanceUID, vr: .UI, string: study.string(.studyInstanceUID) ?? "")
                    let series = try await Self.matches(listing, level: .series, identifier: identifier, limit: nil)
                    if !seriesKeys.isEmpty && series.isEmpty { continue }
                    studies.append(StudyWithSeries(study: study, series: series, seriesStatus: .success))
                }
                if format == .csv {
                    let columns = PXOutput.csvColumns(study: studyIdentifier, series: seriesIdentifier)
                    output.writeText(
                        PXOutput.csvRecord(columns)
                            + studies.map { PXOutput.csvRecords($0, columns: columns, raw: csvRaw) }.joined()
                    )
                }
                FindCommand.writeLines(studies, format: format, to: output)
                data = forPeople ? nil : PXOutput.findData(studies, format: format)
            }
            failure = archiveFailure
        } catch {
            failure = error.asPXError
        }
        if failure == nil && forPeople { return }
        let status = output.finish(backend: "place", data: data, error: failure)
        if status != PXExit.success { throw ExitCode(status) }
    }

    /// The place to list: an existing folder as it is written (px-ls's first form, also a bare relative name),
    /// else a place as px-sync reads one (`zip:PATH`, `folder:PATH`, a config place).
    static func place(_ text: String) throws(PXError) -> Place {
        var info = stat()
        if !text.hasPrefix("zip:") && !text.hasPrefix("folder:") && stat(text, &info) == 0
            && info.st_mode & S_IFMT == S_IFDIR
        {
            return .folder(path: text, layout: nil)
        }
        return try Place.parse(text, config: try PX.config())
    }

    /// What px-ls matches: a folder place's index, or records made elsewhere.
    enum Listing {
        case folder(FolderPlace)
        case records([DataSet])

        /// The instance records, with their computed counts, a query with `identifier` can match, handed to
        /// `body` in order until it returns `false`.
        func forEachRecord(for identifier: DataSet, _ body: (DataSet) throws(PXError) -> Bool) async throws(PXError) {
            switch self {
            case .folder(let place): try await place.forEachRecord(for: identifier, body)
            case .records(let records): for record in records { guard try body(record) else { return } }
            }
        }

        /// Whether the records' SOP Instance UIDs are known to be distinct (``FolderPlace/instancesAreDistinct(for:)``).
        func instancesAreDistinct(for identifier: DataSet) async throws(PXError) -> Bool {
            switch self {
            case .folder(let place): return try await place.instancesAreDistinct(for: identifier)
            case .records: return false
            }
        }
    }

    /// The answers of one query over the place, at most `limit`: the first record of each matching entity at
    /// `level`, answered as a C-FIND SCP would (PS3.4 §C.4.1.1.3.2, Retrieve AE Title "PXLS"), each handed to
    /// `each` as it is found; returns how many.
    static func find(
        _ listing: Listing, level: QueryLevel, identifier: DataSet, limit: Int?, each: (DataSet) -> Void
    ) async throws(PXError) -> Int {
        if let tag = EntityMatching.misplacedKey(in: identifier) {
            throw PXError.usage("cannot query the place: \(tag) does not belong in an identifier")
        }
        guard let uniqueKey = EntityMatching.uniqueKey(level: level.dicomValue) else {
            throw PXError.usage("level \(level.rawValue) is not a Query/Retrieve Level")
        }
        // An image-level listing of a place whose instances are each held once remembers none of their UIDs.
        let distinct = uniqueKey == .sopInstanceUID ? try await listing.instancesAreDistinct(for: identifier) : false
        var first = EntityMatching.FirstOfEachEntity(matching: identifier, uniqueKey: uniqueKey, distinctKeys: distinct)
        var count = 0
        try await listing.forEachRecord(for: identifier) { record in
            guard first.accepts(record) else { return true }
            each(
                EntityMatching.response(
                    to: identifier, level: level.dicomValue, uniqueKey: uniqueKey, from: record,
                    retrieveAETitle: "PXLS"))
            count += 1
            return limit.map { count < $0 } ?? true
        }
        return count
    }

    /// ``find(_:level:identifier:limit:each:)``'s answers, kept.
    static func matches(_ listing: Listing, level: QueryLevel, identifier: DataSet, limit: Int?) async throws(PXError)
        -> [DataSet]
    {
        var matches: [DataSet] = []
        _ = try await Self.find(listing, level: level, identifier: identifier, limit: limit) { matches.append($0) }
        return matches
    }
}
