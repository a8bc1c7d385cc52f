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
    /// one for the study when it has no series.
    public static func csvRecords(_ study: StudyWithSeries, columns: [String]) -> String {
        let rows = study.series.isEmpty ? [[study.study]] : study.series.map { [$0, study.study] }
        return rows.map { csvRecord(csvFields($0, columns: columns)) }.joined()
    }

    /// One CSV record (RFC 4180 §2): the fields separated by commas, a field holding a comma, a double quote,
    /// CR or LF enclosed in double quotes with its double quotes doubled, ended with CRLF.
    public static func csvRecord(_ fields: [String]) -> String {
        fields.map { field in
            field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" })
                ? "\"" + field.replacing("\"", with: "\"\"") + "\"" : field
        }.joined(separator: ",") + "\r\n"
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
