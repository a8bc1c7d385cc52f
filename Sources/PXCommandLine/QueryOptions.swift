import ArgumentParser
import DICOMData
import PXCore

/// px-find's query: the level and model, the matching keys in every spelling (`-k`, pypx 3.x's DICOM
/// keywords, pypx 0.8's camelCase), the return keys and the limit.
public struct QueryOptions: ParsableArguments {
    @Option(name: .long, help: "One C-FIND at this level, in any case (default: studies with their series).")
    public var level: QueryLevel?
    @Option(
        name: .long,
        help: "Information model: Patient Root or Study Root (PS3.4 C.6), or worklist (Modality Worklist, PS3.4 K).")
    public var model: QueryModel = .studyRoot
    @Option(
        name: [.customShort("k"), .customLong("key")],
        help: ArgumentHelp(
            "Any query key, by DICOM keyword or tag: Keyword=value, (gggg,eeee)=value, or Keyword alone to have it returned (repeatable).",
            valueName: "key"))
    public var keys: [String] = []
    @Option(name: .long, help: "Stop after N matches: px sends C-CANCEL (with --level; else limits the studies).")
    public var limit: Int?
    @Option(
        name: .long,
        help: "Fail (C-CANCEL, error tooManyResponses) past N responses to one query (0: no bound).")
    public var maxResponses: Int = FindRequest.defaultMaxResponses

    // pypx 0.8 spellings.
    @Option(name: .customLong("patientID"), help: .hidden) public var patientID0: String?
    @Option(name: .customLong("patientName"), help: .hidden) public var patientName0: String?
    @Option(name: .customLong("patientSex"), help: .hidden) public var patientSex0: String?
    @Option(name: .customLong("studyDate"), help: .hidden) public var studyDate0: String?
    @Option(name: .customLong("modalitiesInStudy"), help: .hidden) public var modalitiesInStudy0: String?
    @Option(name: .customLong("performedStationAETitle"), help: .hidden) public var performedStationAETitle0: String?
    @Option(name: .customLong("studyDescription"), help: .hidden) public var studyDescription0: String?
    @Option(name: .customLong("seriesDescription"), help: .hidden) public var seriesDescription0: String?

    // pypx 3.x spellings (DICOM keywords): the common keys are listed in --help, the rest of pypx's are hidden
    // (`-k` takes those and any other keyword).
    @Option(name: .customLong("PatientID"), help: ArgumentHelp("Match PatientID.", valueName: "id")) public
        var patientID: String?
    @Option(
        name: .customLong("PatientName"), help: ArgumentHelp("Match PatientName (wildcards * ?).", valueName: "name"))
    public var patientName: String?
    @Option(
        name: .customLong("PatientBirthDate"),
        help: ArgumentHelp("Match PatientBirthDate (YYYYMMDD or a range).", valueName: "date"))
    public var patientBirthDate: String?
    @Option(name: .customLong("PatientSex"), help: ArgumentHelp("Match PatientSex (M, F, O).", valueName: "sex")) public
        var patientSex: String?
    @Option(name: .customLong("AccessionNumber"), help: ArgumentHelp("Match AccessionNumber.", valueName: "number"))
    public var accessionNumber: String?
    @Option(
        name: .customLong("StudyDate"),
        help: ArgumentHelp("Match StudyDate (YYYYMMDD, or a range YYYYMMDD-YYYYMMDD).", valueName: "date"))
    public var studyDate: String?
    @Option(
        name: .customLong("ModalitiesInStudy"),
        help: ArgumentHelp("Match ModalitiesInStudy (studies).", valueName: "modalities"))
    public var modalitiesInStudy: String?
    @Option(name: .customLong("Modality"), help: ArgumentHelp("Match Modality (series).", valueName: "modality")) public
        var modality: String?
    @Option(name: .customLong("PerformedStationAETitle"), help: .hidden) public var performedStationAETitle: String?
    @Option(name: .customLong("StudyDescription"), help: ArgumentHelp("Match StudyDescription.", valueName: "text"))
    public var studyDescription: String?
    @Option(name: .customLong("SeriesDescription"), help: ArgumentHelp("Match SeriesDescription.", valueName: "text"))
    public var seriesDescription: String?
    @Option(
        name: .customLong("StudyInstanceUID"),
        help: ArgumentHelp("Match StudyInstanceUID (several: UID1\\UID2).", valueName: "uid"))
    public var studyInstanceUID: String?
    @Option(name: .customLong("SeriesInstanceUID"), help: ArgumentHelp("Match SeriesInstanceUID.", valueName: "uid"))
    public var seriesInstanceUID: String?
    @Option(
        name: .customLong("SOPInstanceUID"),
        help: ArgumentHelp("Match SOPInstanceUID (with --level image).", valueName: "uid"))
    public var sopInstanceUID: String?
    @Option(name: .customLong("ProtocolName"), help: .hidden) public var protocolName: String?
    @Option(name: .customLong("AcquisitionProtocolName"), help: .hidden) public var acquisitionProtocolName: String?
    @Option(name: .customLong("AcquisitionProtocolDescription"), help: .hidden) public
        var acquisitionProtocolDescription: String?
    @Flag(name: .customLong("StudyOnly"), help: "pypx 3.x: query at STUDY level only.") public var studyOnly = false
    @Option(name: .customLong("QueryReturnTags"), help: "pypx 3.x: comma-separated return keys replacing the defaults.")
    public var queryReturnTags: String?
    @Flag(name: .customLong("json"), help: .hidden) public var json = false

    public init() {}

    public func validate() throws {
        for key in keys {
            do { _ = try QueryKey.parse(key) } catch { throw ValidationError(error.message) }
        }
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if maxResponses < 0 { throw ValidationError("--max-responses must be 0 (no bound) or more") }
        if level == .patient && model == .studyRoot { throw ValidationError("--level patient needs --model patient") }
        if model == .worklist && (level != nil || studyOnly) {
            throw ValidationError("--model worklist has no levels: leave out --level and --StudyOnly")
        }
    }

    /// The help of the `Keyword=value` words px-find and px-ls take after the peer or place.
    public static let positionalKeysHelp =
        "Query keys as dcm writes them: px-find pacs StudyDate=20240101 is px-find pacs -k StudyDate=20240101."

    /// Takes dcm-style `Keyword=value` words (see ``QueryKey/separate(first:rest:)``) as `-k` keys, and gives the
    /// one other word to the peer or place, wherever it stood on the command line.
    /// - Throws: `ValidationError` (a usage error) for a second word that is not `Keyword=value`, or an unknown key.
    public mutating func adopt(_ words: [String], before target: inout String?) throws {
        guard !words.isEmpty || target.map(QueryKey.isAssignment) == true else { return }
        do {
            let (first, assignments) = try QueryKey.separate(first: target, rest: words)
            target = first
            keys += assignments
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// ``maxResponses`` for a ``FindRequest``: `nil` for 0 (no bound).
    public var responseBound: Int? { maxResponses == 0 ? nil : maxResponses }

    /// The level of a single C-FIND (`--level`, or STUDY for `--StudyOnly`); `nil` for the two-phase
    /// query (studies, then the series of each).
    public var singleLevel: QueryLevel? { level ?? (studyOnly ? .study : nil) }

    /// The matching keys from every spelling, in the order given by kind.
    public func matchingKeys() throws(PXError) -> [QueryKey] {
        let named: [(String, String?)] = [
            ("PatientID", patientID ?? patientID0), ("PatientName", patientName ?? patientName0),
            ("PatientBirthDate", patientBirthDate), ("PatientSex", patientSex ?? patientSex0),
            ("AccessionNumber", accessionNumber),
            ("StudyDate", studyDate ?? studyDate0), ("ModalitiesInStudy", modalitiesInStudy ?? modalitiesInStudy0),
            ("Modality", modality), ("PerformedStationAETitle", performedStationAETitle ?? performedStationAETitle0),
            ("StudyDescription", studyDescription ?? studyDescription0),
            ("SeriesDescription", seriesDescription ?? seriesDescription0),
            ("StudyInstanceUID", studyInstanceUID), ("SeriesInstanceUID", seriesInstanceUID),
            ("SOPInstanceUID", sopInstanceUID),
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

    public func identifier(level: QueryLevel, keys: [QueryKey]) throws(PXError) -> DataSet {
        let returnKeys =
            queryReturnTags.map { $0.split(separator: ",").map { String($0.trimmed) } }
            ?? QueryDefaults.returnKeys(for: level)
        return try QueryKey.identifier(returning: returnKeys, matching: keys)
    }
}

/// Every value QueryOptions stores is a Sendable value (strings, numbers, enums) in ArgumentParser's
/// property wrappers, which do not say so themselves; a copy is handed to px-find `--queries`' lanes.
extension QueryOptions: @unchecked Sendable {}
