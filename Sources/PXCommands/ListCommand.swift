import ArgumentParser
import DICOMData
import DICOMNetwork
import Logging
import PXCommandLine
import PXCore
import PXIndex

/// px-ls's options besides the query and output ones: the place, and whether to bring its index up to date.
public struct ListOptions: ParsableArguments {
    @Argument(help: "The folder place to list (its index, PLACE/.px/index.sqlite, is made on first use).")
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
        let output = outputOptions.output
        // A table or a tree is for people: the envelope follows it only to report a failure.
        let forPeople = format == .table || format == .tree
        var data: JSONValue?
        var failure: PXError?
        do {
            let place = try FolderPlace(root: absolutePath(list.place), logger: logger)
            if !list.noRefresh {
                let report = try await place.refresh()
                logger.debug(
                    "index refreshed",
                    metadata: [
                        "added": "\(report.added)", "updated": "\(report.updated)", "removed": "\(report.removed)",
                        "unreadable": "\(report.unreadable)", "instances": "\(report.instances)",
                    ])
            }
            let provider = FolderPlaceProvider(place: place, moveDestinations: [:])
            let model: QueryRetrieveModel = query.model == .studyRoot ? .studyRoot : .patientRoot
            let keys = try query.matchingKeys()
            try FindCommand.checkTreeLevel(format: format, query: query)
            if let level = query.singleLevel {
                let matches = try await Self.find(
                    provider, model: model, level: level, identifier: try query.identifier(level: level, keys: keys),
                    limit: query.limit)
                if format == .ndjson {
                    for ds in matches { output.write(PXOutput.ndjsonLine(ds), pretty: false) }
                }
                FindCommand.writeForPeople(matches, format: format, to: output)
                data = forPeople ? nil : PXOutput.findData(matches, format: format)
            } else {
                let seriesKeys = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
                let studyKeys = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
                let seriesIdentifier = try query.identifier(level: .series, keys: seriesKeys)
                var studies: [StudyWithSeries] = []
                for study in try await Self.find(
                    provider, model: model, level: .study,
                    identifier: try query.identifier(level: .study, keys: studyKeys), limit: query.limit)
                {
                    var identifier = seriesIdentifier
                    identifier.set(.studyInstanceUID, vr: .UI, string: study.string(.studyInstanceUID) ?? "")
                    let series = try await Self.find(
                        provider, model: model, level: .series, identifier: identifier, limit: nil)
                    if !seriesKeys.isEmpty && series.isEmpty { continue }
                    studies.append(StudyWithSeries(study: study, series: series, seriesStatus: .success))
                }
                FindCommand.writeLines(studies, format: format, to: output)
                data = forPeople ? nil : PXOutput.findData(studies, format: format)
            }
        } catch {
            failure = error.asPXError
        }
        if failure == nil && forPeople { return }
        let status = output.finish(backend: "place", data: data, error: failure)
        if status != PXExit.success { throw ExitCode(status) }
    }

    /// The responses of one C-FIND over the place's index, at most `limit`.
    static func find(
        _ provider: FolderPlaceProvider, model: QueryRetrieveModel, level: QueryLevel, identifier: DataSet, limit: Int?
    ) async throws -> [DataSet] {
        guard let networkLevel = QueryRetrieveLevel(rawValue: level.dicomValue) else {
            throw PXError.usage("level \(level.rawValue) is not a level of \(model)")
        }
        var withLevel = identifier
        withLevel.set(.queryRetrieveLevel, vr: .CS, string: level.dicomValue)
        let request = QueryRetrieveRequest(
            model: model, level: networkLevel, identifier: withLevel, callingAETitle: "PXLS", calledAETitle: "PXLS")
        var matches: [DataSet] = []
        do {
            for try await response in try await provider.find(request) {
                matches.append(response)
                if let limit, matches.count >= limit { break }
            }
        } catch let failure as QueryRetrieveFailure {
            throw PXError.usage("cannot query the place: \(failure.comment)")
        }
        return matches
    }
}
