import ArgumentParser
import DICOMData
import DICOMNetwork
import Logging
import PXCommandLine
import PXCore
import PXIndex
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
        let output = outputOptions.output
        // A table, tree or CSV is for people and spreadsheets: the envelope follows it only to report a failure.
        let forPeople = format == .table || format == .tree || format == .csv
        var data: JSONValue?
        var failure: PXError?
        do {
            let provider: any QueryRetrieveProvider
            switch try Self.place(list.place) {
            case .folder(let path, _):
                let place = try FolderPlace(root: absolutePath(path), logger: logger)
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
                provider = FolderPlaceProvider(place: place, moveDestinations: [:])
            case .zip(let path):
                provider = try Self.zipListing(ZipPlace(root: absolutePath(path)))
            case let other:
                throw PXError.usage("px-ls lists folder and zip places; \(other) is a \(other.kind)")
            }
            let model: QueryRetrieveModel = query.model == .studyRoot ? .studyRoot : .patientRoot
            let keys = try query.matchingKeys()
            try FindCommand.checkTreeLevel(format: format, query: query)
            if let level = query.singleLevel {
                let identifier = try query.identifier(level: level, keys: keys)
                let matches = try await Self.find(
                    provider, model: model, level: level, identifier: identifier, limit: query.limit)
                if format == .csv {
                    let columns = PXOutput.csvColumns(identifier)
                    output.writeText(
                        ([PXOutput.csvRecord(columns)]
                            + matches.map { PXOutput.csvRecord(PXOutput.csvFields([$0], columns: columns)) })
                            .joined())
                }
                if format == .ndjson {
                    for ds in matches { output.write(PXOutput.ndjsonLine(ds), pretty: false) }
                }
                FindCommand.writeForPeople(matches, format: format, to: output)
                data = forPeople ? nil : PXOutput.findData(matches, format: format)
            } else {
                let seriesKeys = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
                let studyKeys = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
                let seriesIdentifier = try query.identifier(level: .series, keys: seriesKeys)
                let studyIdentifier = try query.identifier(level: .study, keys: studyKeys)
                var studies: [StudyWithSeries] = []
                for study in try await Self.find(
                    provider, model: model, level: .study, identifier: studyIdentifier, limit: query.limit)
                {
                    var identifier = seriesIdentifier
                    identifier.set(.studyInstanceUID, vr: .UI, string: study.string(.studyInstanceUID) ?? "")
                    let series = try await Self.find(
                        provider, model: model, level: .series, identifier: identifier, limit: nil)
                    if !seriesKeys.isEmpty && series.isEmpty { continue }
                    studies.append(StudyWithSeries(study: study, series: series, seriesStatus: .success))
                }
                if format == .csv {
                    let columns = PXOutput.csvColumns(study: studyIdentifier, series: seriesIdentifier)
                    output.writeText(
                        PXOutput.csvRecord(columns) + studies.map { PXOutput.csvRecords($0, columns: columns) }.joined()
                    )
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

    /// The place to list: an existing folder as it is written (px-ls's first form, also a bare relative name),
    /// else a place as px-sync reads one (`zip:PATH`, `folder:PATH`, a config place).
    static func place(_ text: String) throws(PXError) -> Place {
        var info = stat()
        if !text.hasPrefix("zip:") && !text.hasPrefix("folder:") && stat(text, &info) == 0
            && info.st_mode & S_IFMT == S_IFDIR
        {
            return .folder(path: text, layout: nil)
        }
        return try Place.parse(text, config: try PXConfig.load())
    }

    /// A zip place as a C-FIND provider over what its archives say without reading a DICOM header: each
    /// instance's record is its study's and series' manifest keys plus its SOP Instance UID (from the entry's
    /// name); patient, study and series counts are computed as for a folder. The files are not retrievable.
    static func zipListing(_ place: ZipPlace) throws(PXError) -> DirectoryArchive {
        let studies: [ZipPlace.Study]
        do { studies = try place.studies() } catch { throw .zip(error) }
        var instances: [DirectoryArchive.Instance] = []
        for study in studies {
            for series in study.series {
                var seriesRecord = study.record
                for element in series.record.elements { seriesRecord.set(element) }
                seriesRecord.set(.studyInstanceUID, vr: .UI, string: study.studyInstanceUID)
                seriesRecord.set(.seriesInstanceUID, vr: .UI, string: series.seriesInstanceUID)
                for uid in series.sopInstanceUIDs.sorted() {
                    var record = seriesRecord
                    record.set(.sopInstanceUID, vr: .UI, string: uid)
                    let entry = study.path + "#" + ZipPlace.entryName(series: series.seriesInstanceUID, instance: uid)
                    instances.append(
                        DirectoryArchive.Instance(
                            file: StorableFile(
                                path: entry, sopClassUID: "", sopInstanceUID: uid, transferSyntaxUID: ""),
                            record: record))
                }
            }
        }
        return DirectoryArchive(instances: instances)
    }

    /// The responses of one C-FIND over the place, at most `limit`.
    static func find(
        _ provider: any QueryRetrieveProvider, model: QueryRetrieveModel, level: QueryLevel, identifier: DataSet,
        limit: Int?
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
