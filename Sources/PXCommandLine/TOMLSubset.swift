import PXCore

/// A reader for the small part of TOML px's config file uses: `[table]` and `[a.b]` headers,
/// `key = "string"` (basic strings with `\"`, `\\`, `\n`, `\t` escapes, or 'literal' strings),
/// integers, booleans, and `#` comments.
public enum TOMLSubset {
    public enum Value: Hashable, Sendable {
        case string(String)
        case integer(Int)
        case bool(Bool)
    }

    /// Tables by dotted name (`nodes.pacs`, `local`; `""` for top-level keys), each a key → value map.
    /// - Throws: ``PXError/usage(_:)`` with the line number of the first problem.
    public static func parse(_ text: String) throws(PXError) -> [String: [String: Value]] {
        var tables: [String: [String: Value]] = ["": [:]]
        var current = ""
        var number = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = stripComment(Substring(rawLine)).trimmed
            if line.isEmpty { continue }
            if line.hasPrefix("[") {
                guard line.hasSuffix("]"), !line.hasPrefix("[[") else {
                    throw .usage("config line \(number): bad table header")
                }
                let name = line.dropFirst().dropLast().trimmed
                guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }) else {
                    throw .usage("config line \(number): bad table name '\(name)'")
                }
                current = String(name)
                tables[current, default: [:]] = tables[current, default: [:]]
                continue
            }
            guard let eq = line.firstIndex(of: "=") else { throw .usage("config line \(number): expected key = value") }
            var key = line[..<eq].trimmed
            if key.hasPrefix("\""), key.hasSuffix("\""), key.count >= 2 { key = key.dropFirst().dropLast() }
            guard !key.isEmpty else { throw .usage("config line \(number): empty key") }
            let valueText = line[line.index(after: eq)...].trimmed
            let value: Value
            if valueText.hasPrefix("\"") {
                value = .string(try basicString(valueText, line: number))
            } else if valueText.hasPrefix("'") {
                guard valueText.count >= 2, valueText.hasSuffix("'") else {
                    throw .usage("config line \(number): unterminated string")
                }
                value = .string(String(valueText.dropFirst().dropLast()))
            } else if valueText == "true" || valueText == "false" {
                value = .bool(valueText == "true")
            } else if let n = Int(valueText.filter { $0 != "_" }) {
                value = .integer(n)
            } else {
                throw .usage("config line \(number): unsupported value '\(valueText)'")
            }
            tables[current, default: [:]][String(key)] = value
        }
        return tables
    }

    private static func stripComment(_ line: Substring) -> Substring {
        var inString: Character?
        var escaped = false
        for i in line.indices {
            let c = line[i]
            if let q = inString {
                if escaped {
                    escaped = false
                } else if c == "\\" && q == "\"" {
                    escaped = true
                } else if c == q {
                    inString = nil
                }
            } else if c == "\"" || c == "'" {
                inString = c
            } else if c == "#" {
                return line[..<i]
            }
        }
        return line
    }

    private static func basicString(_ text: Substring, line: Int) throws(PXError) -> String {
        var out = ""
        var escaped = false
        var closed = false
        for c in text.dropFirst() {
            if closed { throw .usage("config line \(line): text after string") }
            if escaped {
                switch c {
                case "n": out.append("\n")
                case "t": out.append("\t")
                case "\\": out.append("\\")
                case "\"": out.append("\"")
                default: throw .usage("config line \(line): unsupported escape \\\(c)")
                }
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "\"" {
                closed = true
            } else {
                out.append(c)
            }
        }
        guard closed else { throw .usage("config line \(line): unterminated string") }
        return out
    }
}

extension StringProtocol {
    public var trimmed: Substring {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" || f == "\r" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" || l == "\r" { s = s.dropLast() }
        return s
    }
}
