import DICOMData

extension PXOutput {
    /// The columns of px-find's CSV for an identifier: the keywords asked, in the identifier's (tag) order,
    /// without QueryRetrieveLevel and SpecificCharacterSet (the CSV is UTF-8 text, whatever the peer's
    /// character set).
    public static func csvColumns(_ identifier: DataSet) -> [String] {
        var columns: [String] = []
        for element in identifier.elements where !element.tag.isGroupLength {
            let keyword = element.keyword
            if keyword == "QueryRetrieveLevel" || keyword == "SpecificCharacterSet" { continue }
            if !columns.contains(keyword) { columns.append(keyword) }
        }
        return columns
    }

    /// The columns of the two-phase query's CSV: the study identifier's, then the series identifier's others.
    public static func csvColumns(study: DataSet, series: DataSet) -> [String] {
        let studyColumns = csvColumns(study)
        return studyColumns + csvColumns(series).filter { !studyColumns.contains($0) }
    }

    /// A study's CSV records: one per series (the series' values, its study's where the series has none), or
    /// one for the study when it has no series. `raw`: see ``csvRecord(_:raw:)``.
    public static func csvRecords(_ study: StudyWithSeries, columns: [String], raw: Bool = false) -> String {
        let rows = study.series.isEmpty ? [[study.study]] : study.series.map { [$0, study.study] }
        return rows.map { csvRecord(csvFields($0, columns: columns), raw: raw) }.joined()
    }

    /// One CSV record (RFC 4180 §2): the fields separated by commas, a field holding a comma, a double quote,
    /// CR or LF enclosed in double quotes with its double quotes doubled, ended with CRLF.
    ///
    /// A field is first made safe for spreadsheets (``csvNeutralized(_:)``) unless `raw` (`--csv-raw`); NUL
    /// characters are left out either way.
    public static func csvRecord(_ fields: [String], raw: Bool = false) -> String {
        fields.map { field in
            var field = field.contains("\u{0}") ? field.filter { $0 != "\u{0}" } : field
            if !raw { field = csvNeutralized(field) }
            return field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
                ? "\"" + field.replacing("\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",") + "\r\n"
    }

    /// The characters a spreadsheet reads a cell starting with as a formula (OWASP, "CSV Injection"): `=`, `+`,
    /// `-`, `@`, TAB and CR.
    public static let csvFormulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    /// `field` as a spreadsheet shows it as text: a field starting with one of ``csvFormulaStarts`` gets a `'`
    /// before it (OWASP's guidance), so that `=HYPERLINK(...)` from a peer is never evaluated.
    public static func csvNeutralized(_ field: String) -> String {
        guard let first = field.unicodeScalars.first, csvFormulaStarts.contains(first) else { return field }
        return "'" + field
    }

    /// A data set's text for each column: the value (several joined with `\`, as DICOM writes them; a
    /// sequence as its flat JSON), `""` for a key the response left out or empty. Data sets earlier in
    /// `dataSets` win; a later one fills the columns they leave empty (a series row reads its study's keys).
    public static func csvFields(_ dataSets: [DataSet], columns: [String]) -> [String] {
        var values: [String: String] = [:]
        for dataSet in dataSets {
            guard case .object(let members) = dataSet.flatJSON() else { continue }
            for member in members where values[member.key, default: ""].isEmpty {
                values[member.key] = text(member.value)
            }
        }
        return columns.map { values[$0, default: ""] }
    }

    /// A flat JSON value as one line of text.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .string(let s): return s
        case .array(let values) where values.allSatisfy({ $0.stringValue != nil }):
            return values.compactMap(\.stringValue).joined(separator: "\\")
        case .null: return ""
        default: return value.serialized()
        }
    }
}
