import DICOMData

extension PXOutput {
    /// px-find's output formats.
    public enum FindFormat: String, Hashable, Sendable, CaseIterable {
        /// pypx 3.12.6's JSON, key for key (docs/commands.rst, "Formats"): entries `{tag, value, label}` with a
        /// synthetic `uid` index, studies with a nested `series` list, an empty value as `"no value provided for
        /// gggg,eeee"`, several values joined with `\`, and `command` a findscu command line (a string, as
        /// pypx's px-report reads it) of the query px sent.
        case pypx
        /// pypx's shape, cleaned: empty values `""`, several values an array, `command` px's argv.
        case pypxClean = "pypx-clean"
        /// PS3.18 Annex F data sets; the two-phase answer is one data set per study with its series as the
        /// items of Referenced Series Sequence (0008,1115).
        case dicomJSON = "dicom-json"
        /// One flat `{Keyword: value}` object per response, written as each arrives.
        case ndjson
        /// RFC 4180 comma-separated values: a header row of the keywords asked, one row per match, CRLF.
        case csv
        /// A text table for people, its columns aligned by display width.
        case table
        /// Patient → study (→ series) with counts, for people (``PXOutput/tree(_:)``).
        case tree

        /// pypx's entry shape, strict or clean.
        public var isPypx: Bool { self == .pypx || self == .pypxClean }
    }

    /// A member pypx adds that is no DICOM attribute, `{"tag": 0, "value": ..., "label": ...}`: the `uid`
    /// index of an entry, a series' `label`, `command` and `status`.
    struct PypxSynthetic<Value: Encodable>: Encodable {
        let tag = 0
        var value: Value
        var label: String
    }

    /// pypx's synthetic index entry, `{"tag": 0, "value": N, "label": "uid"}`.
    static func pypxIndex(_ n: Int) -> JSONMember {
        JSONMember("uid", JSONValueEncoder.encode(PypxSynthetic(value: n, label: "uid")))
    }

    /// One pypx entry: the index then the data set's `{tag, value, label}` members, strict (pypx's values,
    /// ``FindFormat/pypx``) or clean.
    public static func pypxEntry(_ dataSet: DataSet, index: Int, strict: Bool = false) -> JSONValue {
        var members = [pypxIndex(index)]
        if case .object(let m) = dataSet.pypxJSON(strict: strict) { members += m }
        return .object(members)
    }

    /// px-find's data in NDJSON, whose lines were written as the responses arrived: `{"count"}`.
    public struct FindCountOutput: Encodable {
        public var count: Int

        public init(count: Int) { self.count = count }
    }

    /// The two-phase query's data in NDJSON: `{"studies", "series"}`, the studies and series written.
    public struct TwoPhaseCountOutput: Encodable {
        public var studies: Int
        public var series: Int

        public init(studies: Int, series: Int) {
            self.studies = studies
            self.series = series
        }
    }

    /// Data for a single-level find: a list of entries in the chosen format.
    public static func findData(_ matches: [DataSet], format: FindFormat) -> JSONValue {
        switch format {
        case .pypx, .pypxClean, .table, .tree, .csv:
            return .array(matches.enumerated().map { pypxEntry($0.element, index: $0.offset, strict: format == .pypx) })
        case .dicomJSON: return .array(matches.map { $0.dicomJSON() })
        case .ndjson: return JSONValueEncoder.encode(FindCountOutput(count: matches.count))
        }
    }

    /// Data for a single-level find from its result: ``findData(_:format:)-([DataSet],_)`` of the matches;
    /// for ndjson (whose lines were written as the responses arrived, none kept) the count.
    public static func findData(_ result: FindResult, format: FindFormat) -> JSONValue {
        format == .ndjson
            ? JSONValueEncoder.encode(FindCountOutput(count: result.count))
            : findData(result.matches, format: format)
    }

    /// Data for the two-phase query: studies with a nested `series` list (pypx 3.x), or in DICOM JSON
    /// study data sets with their series in Referenced Series Sequence (``studyEntry(_:index:format:seriesCommand:)``).
    public static func findData(_ studies: [StudyWithSeries], format: FindFormat) -> JSONValue {
        switch format {
        case .pypx, .pypxClean, .table, .tree, .csv, .dicomJSON:
            return .array(studies.enumerated().map { index, study in studyEntry(study, index: index, format: format) })
        case .ndjson:
            return JSONValueEncoder.encode(
                TwoPhaseCountOutput(studies: studies.count, series: studies.reduce(0) { $0 + $1.series.count }))
        }
    }

    /// Referenced Series Sequence (0008,1115): "a Sequence of Items, each of which includes the Attributes of a
    /// Series" (PS3.3 §10.4, Series and Instance Reference Macro), where the two-phase DICOM JSON puts a study's
    /// series.
    public static let referencedSeriesSequence = Tag(0x0008, 0x1115)

    /// One study of the two-phase answer as an element of `data`: pypx 3.x's entry with its `series` list
    /// (also for table, tree and csv), each series with pypx's `label`, `command` (`seriesCommand`, the series
    /// query as a findscu command line, when given) and `status` entries; or in DICOM JSON the study's data set
    /// with its series as the items of Referenced Series Sequence (0008,1115), a valid PS3.18 Annex F data set.
    public static func studyEntry(
        _ study: StudyWithSeries, index: Int, format: FindFormat, seriesCommand: String? = nil
    ) -> JSONValue {
        if format == .dicomJSON {
            var members = study.study.dicomJSON().objectValue ?? []
            members.removeAll { $0.key == referencedSeriesSequence.hexString }
            let sequence = JSONMember(
                referencedSeriesSequence.hexString,
                .object([
                    JSONMember("vr", .string("SQ")),
                    JSONMember("Value", .array(study.series.map { $0.dicomJSON() })),
                ]))
            // Members in tag order, as PS3.18 §F.2.1 lists them (eight upper-case hex digits sort as the tags).
            let at = members.firstIndex { $0.key > sequence.key } ?? members.count
            members.insert(sequence, at: at)
            return .object(members)
        }
        let strict = format == .pypx
        var members: [JSONMember] = []
        if case .object(let m) = pypxEntry(study.study, index: index, strict: strict) { members = m }
        let series: [JSONValue] = study.series.enumerated().map { seriesIndex, series in
            var entry = pypxSeriesMembers(series, study: study.study, index: seriesIndex, strict: strict)
            entry.append(pypxSynthetic("label", "SERIES", label: "RetrieveLevel"))
            if let seriesCommand { entry.append(pypxSynthetic("command", seriesCommand, label: "command")) }
            entry.append(pypxSynthetic("status", study.seriesStatus.isFailure ? "error" : "success", label: "status"))
            return .object(entry)
        }
        members.append(JSONMember("series", .array(series)))
        return .object(members)
    }

    /// The study's patient and study keys that pypx 3.x's series entries repeat (the peer answers them at the
    /// series level too, as px asks them there in the pypx formats): a series response that leaves one out or
    /// empty gets the study's, so that a consumer reads them from the series.
    public static let pypxSeriesStudyKeywords: Set<String> = [
        "SpecificCharacterSet", "PatientID", "PatientName", "PatientBirthDate", "PatientAge", "PatientSex",
        "StudyDate", "StudyDescription", "AccessionNumber",
    ]

    /// A series entry's members: the index, the series' own `{tag, value, label}` members and those of
    /// ``pypxSeriesStudyKeywords`` that the series response leaves out or empty, taken from the study, all in
    /// tag order. Each value is decoded with its own data set's Specific Character Set (PS3.5 §6.1.2.5), so a
    /// study in Latin-1 and a series in UTF-8 both read right; the series' SpecificCharacterSet, when it has
    /// one, is the one reported.
    static func pypxSeriesMembers(_ series: DataSet, study: DataSet, index: Int, strict: Bool) -> [JSONMember] {
        guard case .object(var members) = series.pypxJSON(strict: strict),
            case .object(let studyMembers) = study.pypxJSON(strict: strict)
        else { return [pypxIndex(index)] }
        func empty(_ member: JSONMember) -> Bool {
            guard let value = member.value["value"]?.stringValue else { return false }
            return value.isEmpty || (strict && DataSet.isPypxNoValue(value))
        }
        for member in studyMembers where pypxSeriesStudyKeywords.contains(member.key) {
            if let at = members.firstIndex(where: { $0.key == member.key }) {
                if empty(members[at]) { members[at] = member }
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

    /// A series entry's synthetic member `key` (``PypxSynthetic``).
    static func pypxSynthetic(_ key: String, _ value: String, label: String) -> JSONMember {
        JSONMember(key, JSONValueEncoder.encode(PypxSynthetic(value: value, label: label)))
    }

    /// An NDJSON line for one response.
    public static func ndjsonLine(_ dataSet: DataSet) -> JSONValue { dataSet.flatJSON() }

    /// A plain-text table: one row per data set, one column per keyword (in first-seen order), the columns
    /// aligned by display width (``displayWidth(_:)-(String)``), a cell wider than 64 columns cut with `…`.
    /// Every value is written by ``HumanText/escaped(values:)``: no control character from a peer reaches the
    /// terminal.
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
                    case .string(let s): row[m.key] = HumanText.escaped(s)
                    case .array(let a): row[m.key] = HumanText.escaped(values: a.compactMap(\.stringValue))
                    default: row[m.key] = ""
                    }
                }
            }
            flat.append(row)
        }
        // Widths in terminal columns (a CJK or Hangul character takes two, a combining mark none), at most 64.
        var widths = columns.map { displayWidth($0) }
        for row in flat {
            for (i, c) in columns.enumerated() {
                widths[i] = min(64, max(widths[i], displayWidth(row[c, default: ""])))
            }
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in fit(cell, width: widths[i]) }.joined(separator: "  ")
        }
        var out = line(columns) + "\n" + line(widths.map { String(repeating: "-", count: $0) }) + "\n"
        for row in flat { out += line(columns.map { row[$0, default: ""] }) + "\n" }
        return out
    }
}
