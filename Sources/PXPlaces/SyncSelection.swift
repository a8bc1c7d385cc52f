import DICOMData
import PXCore

/// What px-sync is asked to bring over: studies matching query keys, the studies of a px-find result, or the
/// lines of a batch file, each a query of its own.
public enum SyncSelection: Sendable {
    /// One study-level query (px-find's keys; no key: every study of each source).
    case keys(DataSet)
    /// Studies by StudyInstanceUID (a px-find result on stdin).
    case studies([String])
    /// A batch file's lines, each one key value.
    case lines([Line], errors: [LineError])

    /// One line of a batch file: a value of its key column.
    public struct Line: Hashable, Sendable {
        public var number: Int
        public var keyword: String
        public var value: String

        public init(number: Int, keyword: String, value: String) {
            self.number = number
            self.keyword = keyword
            self.value = value
        }

        /// The study-level query of the line: its key with its value (one exact value, ``problem(with:keyword:)``
        /// refused the others), in UTF-8 (ISO_IR 192) when it is not ASCII.
        /// - Throws: ``PXError/usage(_:)`` for a keyword outside ``SyncSelection/batchKeywords``.
        public func keys() throws(PXError) -> DataSet {
            guard let tag = DataDictionary.tag(forKeyword: keyword), let vr = DataDictionary.entry(for: tag)?.vr
            else { throw .usage("line \(number): unknown key \(keyword)") }
            var keys = DataSet()
            if value.utf8.contains(where: { $0 >= 0x80 }) {
                keys.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
            }
            keys.set(tag, vr: vr, strings: [value])
            return keys
        }
    }

    /// A line that names nothing px-sync can look for, or whose query found nothing or failed.
    public struct LineError: Sendable {
        public var number: Int
        public var text: String
        public var error: PXError

        public init(number: Int, text: String, error: PXError) {
            self.number = number
            self.text = text
            self.error = error
        }
    }

    /// The key columns a batch file may have.
    public static let batchKeywords = ["PatientID", "AccessionNumber", "StudyInstanceUID"]

    /// Reads a batch file (CSV): a header line naming the columns, one of them PatientID, AccessionNumber or
    /// StudyInstanceUID (the first of these is used), then one line per value. Empty lines and lines starting
    /// with `#` are ignored. A line without that column, with an empty value, or with a value C-FIND would read
    /// as a pattern or a list (`*`, `?`, `\`), control characters or over 64 characters is a line error; the
    /// others are kept.
    /// - Throws: ``PXError/usage(_:)`` when the header names none of the key columns.
    public static func parseBatch(_ text: String) throws(PXError) -> SyncSelection {
        var header: [String]?
        var column = 0
        var keyword = ""
        var lines: [Line] = []
        var errors: [LineError] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? String(raw.dropLast()) : String(raw)
            let trimmed = String(Self.trim(line))
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: ",", omittingEmptySubsequences: false).map {
                unquote(String(Self.trim($0)))
            }
            guard header != nil else {
                guard let found = fields.firstIndex(where: { batchKeywords.contains($0) }) else {
                    throw .usage(
                        "--from-file: line \(number): the first line must name a column \(batchKeywords.joined(separator: ", ")) (got '\(trimmed)')"
                    )
                }
                header = fields
                column = found
                keyword = fields[found]
                continue
            }
            guard column < fields.count else {
                errors.append(
                    LineError(number: number, text: line, error: .usage("line \(number): no \(keyword) column")))
                continue
            }
            let value = fields[column]
            if let problem = problem(with: value, keyword: keyword) {
                errors.append(LineError(number: number, text: line, error: .usage("line \(number): \(problem)")))
                continue
            }
            lines.append(Line(number: number, keyword: keyword, value: value))
        }
        guard header != nil else { throw .usage("--from-file: the file is empty") }
        return .lines(lines, errors: errors)
    }

    /// `text` without its leading and trailing spaces, tabs and carriage returns.
    static func trim<S: StringProtocol>(_ text: S) -> Substring {
        var s = Substring(text)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }

    static func unquote(_ field: String) -> String {
        guard field.count >= 2, field.hasPrefix("\""), field.hasSuffix("\"") else { return field }
        return String(field.dropFirst().dropLast()).split(separator: "\"\"", omittingEmptySubsequences: false).joined(
            separator: "\"")
    }

    /// Why a value cannot be one exact key, `nil` when it can (PS3.5 §6.2: LO and UI at most 64 characters).
    static func problem(with value: String, keyword: String) -> String? {
        if value.isEmpty { return "empty \(keyword)" }
        if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0 == "*" || $0 == "?" || $0 == "\\" }) {
            return "\(keyword) '\(value)' has a wildcard, a backslash or a control character"
        }
        if value.unicodeScalars.count > 64 { return "\(keyword) is longer than 64 characters" }
        if keyword == "StudyInstanceUID", !value.unicodeScalars.allSatisfy({ $0 == "." || ("0"..."9").contains($0) }) {
            return "StudyInstanceUID '\(value)' is not a UID (digits and dots)"
        }
        return nil
    }
}
