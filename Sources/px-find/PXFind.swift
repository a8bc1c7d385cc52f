import ArgumentParser
import DICOMData
import Logging
import PXCommandLine
import PXCore

@main
struct PXFind: PXCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-find",
        abstract: "Query a DICOM peer with C-FIND and print the matches as JSON.",
        discussion: """
            Without --level, px-find does pypx 3.x's two-phase query: a STUDY-level
            C-FIND, then a SERIES-level C-FIND under each study, printed as studies with a
            nested "series" list of {tag, value, label} entries. With --level, one C-FIND
            at that level.

            Keys: -k Keyword=value, -k "(gggg,eeee)=value", -k Keyword (return key only);
            or pypx's flags (--PatientID, --patientID, --StudyDate, ...). Wildcards * and
            ? as the peer allows.

            Formats: pypx (default), dicom-json (PS3.18 datasets), ndjson (one flat
            {Keyword: value} line per response, written as each arrives, then the
            envelope), table.

            Examples:
              px-find QRSCP@127.0.0.1:11112 --PatientName 'Doe*'
              px-find pacs --level image -k StudyInstanceUID=1.2.3 --format ndjson

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    @Option(name: .long, help: "patient, study, series or image (default: studies with their series).")
    var level: String?
    @Option(name: .long, help: "Information model: study (default) or patient.")
    var model: String = "study"
    @Option(name: .long, help: "pypx, dicom-json, ndjson or table.")
    var format: String = "pypx"
    @Option(name: [.customShort("k"), .customLong("key")], help: "A query key: Keyword=value, (gggg,eeee)=value or Keyword.")
    var keys: [String] = []
    @Option(name: .long, help: "Stop after N matches: px sends C-CANCEL (with --level; else limits the studies).")
    var limit: Int?
    @Flag(name: .long, help: "Indent the JSON.") var pretty = false

    // pypx 0.8 spellings.
    @Option(name: .customLong("patientID"), help: .hidden) var patientID0: String?
    @Option(name: .customLong("patientName"), help: .hidden) var patientName0: String?
    @Option(name: .customLong("patientSex"), help: .hidden) var patientSex0: String?
    @Option(name: .customLong("studyDate"), help: .hidden) var studyDate0: String?
    @Option(name: .customLong("modalitiesInStudy"), help: .hidden) var modalitiesInStudy0: String?
    @Option(name: .customLong("performedStationAETitle"), help: .hidden) var performedStationAETitle0: String?
    @Option(name: .customLong("studyDescription"), help: .hidden) var studyDescription0: String?
    @Option(name: .customLong("seriesDescription"), help: .hidden) var seriesDescription0: String?

    // pypx 3.x spellings (DICOM keywords).
    @Option(name: .customLong("PatientID"), help: "Match PatientID (pypx 3.x).") var patientID: String?
    @Option(name: .customLong("PatientName"), help: "Match PatientName.") var patientName: String?
    @Option(name: .customLong("PatientSex"), help: .hidden) var patientSex: String?
    @Option(name: .customLong("AccessionNumber"), help: .hidden) var accessionNumber: String?
    @Option(name: .customLong("StudyDate"), help: "Match StudyDate (YYYYMMDD or a range).") var studyDate: String?
    @Option(name: .customLong("ModalitiesInStudy"), help: .hidden) var modalitiesInStudy: String?
    @Option(name: .customLong("Modality"), help: .hidden) var modality: String?
    @Option(name: .customLong("PerformedStationAETitle"), help: .hidden) var performedStationAETitle: String?
    @Option(name: .customLong("StudyDescription"), help: .hidden) var studyDescription: String?
    @Option(name: .customLong("SeriesDescription"), help: .hidden) var seriesDescription: String?
    @Option(name: .customLong("StudyInstanceUID"), help: "Match StudyInstanceUID.") var studyInstanceUID: String?
    @Option(name: .customLong("SeriesInstanceUID"), help: "Match SeriesInstanceUID.") var seriesInstanceUID: String?
    @Option(name: .customLong("ProtocolName"), help: .hidden) var protocolName: String?
    @Option(name: .customLong("AcquisitionProtocolName"), help: .hidden) var acquisitionProtocolName: String?
    @Option(name: .customLong("AcquisitionProtocolDescription"), help: .hidden) var acquisitionProtocolDescription: String?
    @Flag(name: .customLong("StudyOnly"), help: "pypx 3.x: query at STUDY level only.") var studyOnly = false
    @Option(name: .customLong("QueryReturnTags"), help: "pypx 3.x: comma-separated return keys replacing the defaults.")
    var queryReturnTags: String?
    @Flag(name: .customLong("json"), help: .hidden) var json = false

    func validate() throws {
        if let level, QueryLevel(rawValue: level) == nil { throw ValidationError("--level must be patient, study, series or image") }
        if QueryModel(rawValue: model) == nil { throw ValidationError("--model must be study or patient") }
        if PXOutput.FindFormat(rawValue: format) == nil { throw ValidationError("--format must be pypx, dicom-json, ndjson or table") }
        for key in keys {
            do { _ = try QueryKey.parse(key) } catch { throw ValidationError(error.message) }
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if level == "patient" && model == "study" { throw ValidationError("--level patient needs --model patient") }
    }

    /// The matching keys from every spelling, in the order given by kind.
    func matchingKeys() throws(PXError) -> [QueryKey] {
        let named: [(String, String?)] = [
            ("PatientID", patientID ?? patientID0), ("PatientName", patientName ?? patientName0),
            ("PatientSex", patientSex ?? patientSex0), ("AccessionNumber", accessionNumber),
            ("StudyDate", studyDate ?? studyDate0), ("ModalitiesInStudy", modalitiesInStudy ?? modalitiesInStudy0),
            ("Modality", modality), ("PerformedStationAETitle", performedStationAETitle ?? performedStationAETitle0),
            ("StudyDescription", studyDescription ?? studyDescription0),
            ("SeriesDescription", seriesDescription ?? seriesDescription0),
            ("StudyInstanceUID", studyInstanceUID), ("SeriesInstanceUID", seriesInstanceUID),
            ("ProtocolName", protocolName), ("AcquisitionProtocolName", acquisitionProtocolName),
            ("AcquisitionProtocolDescription", acquisitionProtocolDescription),
        ]
        var out: [QueryKey] = []
        for (name, value) in named {
            if let value, !value.isEmpty { out.append(try QueryKey.make(name: name, value: value)) }
        }
        for key in keys { out.append(try QueryKey.parse(key)) }
        return out
    }

    func identifier(level: QueryLevel, keys: [QueryKey]) throws(PXError) -> DataSet {
        var ds = DataSet()
        let returnKeys =
            queryReturnTags.map { $0.split(separator: ",").map { String($0.trimmed) } } ?? QueryDefaults.returnKeys(for: level)
        for name in returnKeys where !name.isEmpty { ds.set(try QueryKey.make(name: name, value: nil)) }
        for key in keys { ds.set(key) }
        return ds
    }

    func run() async throws {
        let logger = logging.makeLogger(label: "px-find")
        let fmt = PXOutput.FindFormat(rawValue: format)!
        let output = CommandOutput(pretty: pretty)
        var backendName = backend.reportedName
        var data: JSONValue?
        var failure: PXError?
        do {
            let dicomBackend = try backend.make(executables: connection.executables(for: "findscu"), tool: "findscu")
            backendName = dicomBackend.name
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            let queryModel = QueryModel(rawValue: model)!
            let keys = try matchingKeys()
            let singleLevel = level.flatMap(QueryLevel.init(rawValue:)) ?? (studyOnly ? .study : nil)
            if let singleLevel {
                let request = FindRequest(level: singleLevel, model: queryModel, identifier: try identifier(level: singleLevel, keys: keys), limit: limit)
                let result = try await dicomBackend.find(request, connection: conn, logger: logger) { response in
                    if fmt == .ndjson, let ds = response.identifier { output.write(PXOutput.ndjsonLine(ds), pretty: false) }
                }
                if fmt == .table { output.writeText(PXOutput.table(result.matches)) }
                data = PXOutput.findData(result.matches, format: fmt)
                if result.status.isFailure { failure = .dimseFailure(result.status, operation: "C-FIND") }
            } else {
                let seriesKeys = keys.filter { QueryDefaults.seriesKeywords.contains($0.keyword) }
                let studyKeys = keys.filter { !QueryDefaults.seriesKeywords.contains($0.keyword) }
                var (studies, status) = try await dicomBackend.findStudiesWithSeries(
                    studyKeys: try identifier(level: .study, keys: studyKeys),
                    seriesKeys: try identifier(level: .series, keys: seriesKeys), model: queryModel, studyLimit: limit, connection: conn,
                    logger: logger)
                if !seriesKeys.isEmpty { studies.removeAll { $0.series.isEmpty } }
                switch fmt {
                case .ndjson:
                    for s in studies {
                        output.write(PXOutput.ndjsonLine(s.study), pretty: false)
                        for series in s.series { output.write(PXOutput.ndjsonLine(series), pretty: false) }
                    }
                case .table:
                    output.writeText(PXOutput.table(studies.flatMap { s in s.series.isEmpty ? [s.study] : s.series.map { merge(s.study, $0) } }))
                default: break
                }
                data = PXOutput.findData(studies, format: fmt)
                if status.isFailure { failure = .dimseFailure(status, operation: "C-FIND") }
                if let bad = studies.first(where: { $0.seriesStatus.isFailure }) {
                    failure = failure ?? .dimseFailure(bad.seriesStatus, operation: "C-FIND (series)")
                }
            }
        } catch {
            failure = error.asPXError
        }
        let status: Int32
        if fmt == .table && failure == nil {
            status = 0
        } else {
            status = output.finish(backend: backendName, data: fmt == .table ? nil : data, error: failure)
        }
        if status != 0 { throw ExitCode(status) }
    }

    func merge(_ study: DataSet, _ series: DataSet) -> DataSet {
        var out = study
        for element in series.elements { out.set(element) }
        return out
    }
}
