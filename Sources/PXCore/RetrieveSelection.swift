import DICOMData

/// What one C-MOVE or C-GET names (PS3.4 §C.4.2, §C.4.3): a study, optionally one series of it,
/// optionally instances of that series; or a whole patient (``isPatient``); or a series or instances whose
/// study is still to be found (``needsStudy``). px-move and px-get read it from their options
/// (``RetrieveOptions``) or from a px-find result: its JSON envelope (pypx or DICOM JSON shape) or
/// its NDJSON lines.
public struct RetrieveSelection: Hashable, Sendable {
    public var patientID: String?
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]

    public init(
        patientID: String? = nil, studyInstanceUID: String, seriesInstanceUID: String? = nil,
        sopInstanceUIDs: [String] = []
    ) {
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
    }

    /// A whole patient: no StudyInstanceUID (retrieved at PATIENT level in the patient-root model, else
    /// study by study).
    public static func patient(_ patientID: String) -> RetrieveSelection {
        RetrieveSelection(patientID: patientID, studyInstanceUID: "")
    }

    /// A whole patient, no study, series or instance named.
    public var isPatient: Bool { studyInstanceUID.isEmpty && seriesInstanceUID == nil && sopInstanceUIDs.isEmpty }

    /// A series or instances named without their study (pypx's `--seriesUID S`): px finds the study with one
    /// C-FIND before the retrieve.
    public var needsStudy: Bool { studyInstanceUID.isEmpty && !isPatient }

    /// The targets in px-find output, most specific first: each series of a study with a `series`
    /// list, else the entry's own level.
    /// - Throws: ``PXError/usage(_:)`` when the text is not px-find output.
    public static func parse(pxFindOutput text: String) throws(PXError) -> [RetrieveSelection] {
        let values = try jsonValues(text)
        var out: [RetrieveSelection] = []
        for value in values {
            if let data = value["data"] {
                if let entries = data.arrayValue { for e in entries { out += targets(in: e) } }
            } else {
                out += targets(in: value)
            }
        }
        var seen = Set<RetrieveSelection>()
        return out.filter { seen.insert($0).inserted }
    }

    /// Whether `text` is px-find's answer when nothing matched: its successful envelope with an empty `data`
    /// array (JSON and pypx formats), its NDJSON closing envelope (`data` the counts) with no match line before
    /// it, or a bare `[]`. Piped into px-move or px-get it means nothing to do (a nightly job with nothing
    /// new), as for px-sync; any other text without a StudyInstanceUID is not a px-find result of studies.
    public static func isNoMatch(pxFindOutput text: String) -> Bool {
        guard case .success(let values) = Result(catching: { () throws(PXError) in try jsonValues(text) }),
            !values.isEmpty
        else { return false }
        return values.allSatisfy { value in
            if let array = value.arrayValue { return array.isEmpty }
            guard value["status"]?.stringValue == "success", let data = value["data"] else { return false }
            if let entries = data.arrayValue { return entries.isEmpty }
            return data.objectValue != nil
        }
    }

    /// The `command` of px-find's envelope in `text` (its last JSON value with one): px-find's argv, or in the
    /// pypx format the findscu command line it stands for. `nil` when `text` holds no envelope.
    public static func findCommand(pxFindOutput text: String) throws(PXError) -> PXOutput.EnvelopeHead.Command? {
        for value in try jsonValues(text).reversed() {
            guard value["status"] != nil, let command = value["command"] else { continue }
            if let words = command.arrayValue {
                return .argv(words.compactMap(\.stringValue))
            }
            if let line = command.stringValue { return .line(line) }
        }
        return nil
    }

    /// The JSON values of `text`: one document (px-find's envelope), else one per non-empty line (NDJSON).
    /// - Throws: ``PXError/usage(_:)`` when neither parses.
    static func jsonValues(_ text: String) throws(PXError) -> [JSONValue] {
        do {
            return [try JSONParser.parse(text)]
        } catch {
            var values: [JSONValue] = []
            for line in text.split(separator: "\n") where !line.trimmed.isEmpty {
                do { values.append(try JSONParser.parse(String(line))) } catch {
                    throw .usage("stdin is not px-find JSON or NDJSON: \(error)")
                }
            }
            return values
        }
    }

    /// A keyword's value in any of the shapes: pypx `{"value": ...}`, flat, or DICOM JSON by tag.
    static func value(_ entry: JSONValue, _ keyword: String, tag: String) -> String? {
        if let v = entry[keyword] {
            if let s = v.stringValue { return s.isEmpty ? nil : s }
            // pypx writes an empty value as "no value provided for gggg,eeee" (px-find's pypx format too).
            if let s = v["value"]?.stringValue { return s.isEmpty || DataSet.isPypxNoValue(s) ? nil : s }
        }
        if let s = entry[tag]?["Value"]?.arrayValue?.first?.stringValue { return s }
        return nil
    }

    static func targets(in entry: JSONValue) -> [RetrieveSelection] {
        // DICOM JSON two-phase shape: {"study": ..., "series": [...]}.
        let study = entry["study"] ?? entry
        guard let studyUID = value(study, "StudyInstanceUID", tag: "0020000D") else { return [] }
        let patientID = value(study, "PatientID", tag: "00100020")
        // The series: pypx's `series` list, or in DICOM JSON the study's Referenced Series Sequence (0008,1115).
        if let series = entry["series"]?.arrayValue ?? entry["00081115"]?["Value"]?.arrayValue, !series.isEmpty {
            return series.compactMap { s in
                value(s, "SeriesInstanceUID", tag: "0020000E").map {
                    RetrieveSelection(patientID: patientID, studyInstanceUID: studyUID, seriesInstanceUID: $0)
                }
            }
        }
        return [
            RetrieveSelection(
                patientID: patientID, studyInstanceUID: studyUID,
                seriesInstanceUID: value(entry, "SeriesInstanceUID", tag: "0020000E"),
                sopInstanceUIDs: value(entry, "SOPInstanceUID", tag: "00080018").map { [$0] } ?? [])
        ]
    }
}
