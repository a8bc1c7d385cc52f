import DICOMData

extension PXOutput {
    /// px-find's output formats.
    public enum FindFormat: String, Hashable, Sendable, CaseIterable {
        /// pypx 3.x: entries `{tag, value, label}` with a synthetic `uid` index, studies with a
        /// nested `series` list.
        case pypx
        /// PS3.18 Annex F datasets.
        case dicomJSON = "dicom-json"
        /// One flat `{Keyword: value}` object per response, written as each arrives.
        case ndjson
        /// A text table for people.
        case table
        /// Patient → study (→ series) with counts, for people (``PXOutput/tree(_:)``).
        case tree
    }

    /// pypx's synthetic index entry, `{"tag": 0, "value": N, "label": "uid"}`.
    static func pypxIndex(_ n: Int) -> JSONMember {
        JSONMember(
            "uid",
            .object([
                JSONMember("tag", .integer(0)), JSONMember("value", .integer(n)), JSONMember("label", .string("uid")),
            ]))
    }

    /// One pypx entry: the index then the data set's `{tag, value, label}` members.
    public static func pypxEntry(_ dataSet: DataSet, index: Int) -> JSONValue {
        var members = [pypxIndex(index)]
        if case .object(let m) = dataSet.pypxJSON() { members += m }
        return .object(members)
    }

    /// Data for a single-level find: a list of entries in the chosen format.
    public static func findData(_ matches: [DataSet], format: FindFormat) -> JSONValue {
        switch format {
        case .pypx, .table, .tree:
            return .array(matches.enumerated().map { pypxEntry($0.element, index: $0.offset) })
        case .dicomJSON: return .array(matches.map { $0.dicomJSON() })
        case .ndjson: return .object([JSONMember("count", .integer(matches.count))])
        }
    }

    /// Data for a single-level find from its result: ``findData(_:format:)-([DataSet],_)`` of the matches;
    /// for ndjson (whose lines were written as the responses arrived, none kept) the count.
    public static func findData(_ result: FindResult, format: FindFormat) -> JSONValue {
        format == .ndjson
            ? .object([JSONMember("count", .integer(result.count))]) : findData(result.matches, format: format)
    }

    /// Data for the two-phase query: studies with a nested `series` list (pypx 3.x), or
    /// `{"study": ..., "series": [...]}` pairs for DICOM JSON.
    public static func findData(_ studies: [StudyWithSeries], format: FindFormat) -> JSONValue {
        switch format {
        case .pypx, .table, .tree, .dicomJSON:
            return .array(studies.enumerated().map { index, study in studyEntry(study, index: index, format: format) })
        case .ndjson:
            return .object([
                JSONMember("studies", .integer(studies.count)),
                JSONMember("series", .integer(studies.reduce(0) { $0 + $1.series.count })),
            ])
        }
    }

    /// One study of the two-phase answer as an element of `data`: pypx 3.x's entry with its `series` list
    /// (also for table and tree), or `{"study": ..., "series": [...]}` in DICOM JSON.
    public static func studyEntry(_ study: StudyWithSeries, index: Int, format: FindFormat) -> JSONValue {
        if format == .dicomJSON {
            return .object([
                JSONMember("study", study.study.dicomJSON()),
                JSONMember("series", .array(study.series.map { $0.dicomJSON() })),
            ])
        }
        var members: [JSONMember] = []
        if case .object(let m) = pypxEntry(study.study, index: index) { members = m }
        let series: [JSONValue] = study.series.enumerated().map { seriesIndex, series in
            var entry = pypxSeriesMembers(series, study: study.study, index: seriesIndex)
            entry.append(pypxSynthetic("label", "SERIES", label: "RetrieveLevel"))
            entry.append(pypxSynthetic("status", study.seriesStatus.isFailure ? "error" : "success", label: "status"))
            return .object(entry)
        }
        members.append(JSONMember("series", .array(series)))
        return .object(members)
    }

    /// The study's patient and study keys that pypx 3.x's series entries repeat, so that a consumer reads
    /// them from the series (pypx 3.12.6 against dcmqrscp).
    public static let pypxSeriesStudyKeywords: Set<String> = [
        "SpecificCharacterSet", "PatientID", "PatientName", "PatientBirthDate", "PatientAge", "PatientSex",
        "StudyDate", "StudyDescription", "AccessionNumber",
    ]

    /// A series entry's members as pypx 3.x has them: the index, the series' own `{tag, value, label}`
    /// members and those of ``pypxSeriesStudyKeywords`` that the series response leaves out or empty, taken
    /// from the study, all in tag order. Each value is decoded with its own data set's Specific Character
    /// Set (PS3.5 §6.1.2.5), so a study in Latin-1 and a series in UTF-8 both read right; the series'
    /// SpecificCharacterSet, when it has one, is the one reported.
    static func pypxSeriesMembers(_ series: DataSet, study: DataSet, index: Int) -> [JSONMember] {
        guard case .object(var members) = series.pypxJSON(), case .object(let studyMembers) = study.pypxJSON() else {
            return [pypxIndex(index)]
        }
        for member in studyMembers where pypxSeriesStudyKeywords.contains(member.key) {
            if let at = members.firstIndex(where: { $0.key == member.key }) {
                if members[at].value["value"] == .string("") { members[at] = member }
            } else {
                members.append(member)
            }
        }
        // Tags are fixed-width "gggg,eeee" text: their order is the tag order.
        let ordered = members.enumerated().sorted { a, b in
            let (x, y) = (a.element.value["tag"]?.stringValue ?? "", b.element.value["tag"]?.stringValue ?? "")
            return x == y ? a.offset < b.offset : x < y
        }
        return [pypxIndex(index)] + ordered.map(\.element)
    }

    static func pypxSynthetic(_ key: String, _ value: String, label: String) -> JSONMember {
        JSONMember(
            key,
            .object([
                JSONMember("tag", .integer(0)), JSONMember("value", .string(value)),
                JSONMember("label", .string(label)),
            ]))
    }

    /// An NDJSON line for one response.
    public static func ndjsonLine(_ dataSet: DataSet) -> JSONValue { dataSet.flatJSON() }

    /// A plain-text table: one row per data set, one column per keyword (in first-seen order).
    public static func table(_ rows: [DataSet]) -> String {
        var columns: [String] = []
        var flat: [[String: String]] = []
        for ds in rows {
            var row: [String: String] = [:]
            if case .object(let members) = ds.flatJSON() {
                for m in members
                where m.key != "QueryRetrieveLevel" && m.key != "SpecificCharacterSet" && m.key != "RetrieveAETitle" {
                    if !columns.contains(m.key) { columns.append(m.key) }
                    switch m.value {
                    case .string(let s): row[m.key] = s
                    case .array(let a): row[m.key] = a.compactMap(\.stringValue).joined(separator: "\\")
                    default: row[m.key] = ""
                    }
                }
            }
            flat.append(row)
        }
        var widths = columns.map { $0.count }
        for row in flat {
            for (i, c) in columns.enumerated() { widths[i] = min(64, max(widths[i], row[c, default: ""].count)) }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in
                let text = cell.count > widths[i] ? String(cell.prefix(widths[i] - 1)) + "…" : cell
                return text + String(repeating: " ", count: max(0, widths[i] - text.count))
            }.joined(separator: "  ")
        }
        var out = line(columns) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in flat { out += line(columns.map { row[$0, default: ""] }) + "\n" }
        return out
    }
}
