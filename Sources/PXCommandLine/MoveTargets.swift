import DICOMData
import PXCore

/// What to move, read from a px-find result: its JSON envelope (pypx or DICOM JSON shape) or its
/// NDJSON lines.
public struct MoveTarget: Hashable, Sendable {
    public var patientID: String?
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUID: String?

    public init(patientID: String? = nil, studyInstanceUID: String, seriesInstanceUID: String? = nil, sopInstanceUID: String? = nil) {
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUID = sopInstanceUID
    }

    /// The targets in px-find output, most specific first: each series of a study with a `series`
    /// list, else the entry's own level.
    /// - Throws: ``PXError/usage(_:)`` when the text is not px-find output.
    public static func parse(pxFindOutput text: String) throws(PXError) -> [MoveTarget] {
        var values: [JSONValue] = []
        do {
            values = [try JSONParser.parse(text)]
        } catch {
            for line in text.split(separator: "\n") where !line.trimmed.isEmpty {
                do { values.append(try JSONParser.parse(String(line))) } catch {
                    throw .usage("stdin is not px-find JSON or NDJSON: \(error)")
                }
            }
        }
        var out: [MoveTarget] = []
        for value in values {
            if let data = value["data"] {
                if let entries = data.arrayValue { for e in entries { out += targets(in: e) } }
            } else {
                out += targets(in: value)
            }
        }
        var seen = Set<MoveTarget>()
        return out.filter { seen.insert($0).inserted }
    }

    /// A keyword's value in any of the shapes: pypx `{"value": ...}`, flat, or DICOM JSON by tag.
    static func value(_ entry: JSONValue, _ keyword: String, tag: String) -> String? {
        if let v = entry[keyword] {
            if let s = v.stringValue { return s.isEmpty ? nil : s }
            if let s = v["value"]?.stringValue { return s.isEmpty ? nil : s }
        }
        if let s = entry[tag]?["Value"]?.arrayValue?.first?.stringValue { return s }
        return nil
    }

    static func targets(in entry: JSONValue) -> [MoveTarget] {
        // DICOM JSON two-phase shape: {"study": ..., "series": [...]}.
        let study = entry["study"] ?? entry
        guard let studyUID = value(study, "StudyInstanceUID", tag: "0020000D") else { return [] }
        let patientID = value(study, "PatientID", tag: "00100020")
        if let series = entry["series"]?.arrayValue, !series.isEmpty {
            return series.compactMap { s in
                value(s, "SeriesInstanceUID", tag: "0020000E").map {
                    MoveTarget(patientID: patientID, studyInstanceUID: studyUID, seriesInstanceUID: $0)
                }
            }
        }
        return [
            MoveTarget(
                patientID: patientID, studyInstanceUID: studyUID,
                seriesInstanceUID: value(entry, "SeriesInstanceUID", tag: "0020000E"),
                sopInstanceUID: value(entry, "SOPInstanceUID", tag: "00080018"))
        ]
    }
}
