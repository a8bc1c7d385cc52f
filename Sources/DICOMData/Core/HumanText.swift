/// Text for people's eyes: what every human rendering (px-find and px-ls `--format table` and `tree`,
/// px-dump `--format text`) passes a value from a peer or a file through before it reaches a terminal, so
/// that a value can neither retitle, clear or move in the terminal (ESC, BEL, CR...), nor fake rows (LF),
/// nor reorder what is shown around it (bidi overrides) (issue 36). JSON needs none of this: its encoder
/// escapes every control character.
public enum HumanText {
    /// `text` with every character that acts on a terminal or on the order of the text written visibly:
    /// C0 controls (U+0000–U+001F) and DEL as `\x1b`, C1 controls (U+0080–U+009F), the bidi controls
    /// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and paragraph separators
    /// (U+2028, U+2029) as `\u202e`, and a backslash as `\\`, so that an escape is never ambiguous.
    ///
    /// DICOM's value separator, a single `\` between the values of a multi-valued element, is not part of any
    /// value: renderers escape each value and join them with `\`.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                out.append(scalar)
                continue
            }
            if scalar == "\\" {
                out.append(contentsOf: #"\\"#.unicodeScalars)
            } else if scalar.value < 0x80 {
                out.append(contentsOf: "\\x".unicodeScalars)
                out.append(contentsOf: hex(scalar.value, digits: 2).unicodeScalars)
            } else {
                out.append(contentsOf: "\\u".unicodeScalars)
                out.append(contentsOf: hex(scalar.value, digits: 4).unicodeScalars)
            }
        }
        return String(out)
    }

    /// The values of an element for people: each ``escaped(_:)``, joined with DICOM's separator `\`.
    public static func escaped(values: [String]) -> String {
        values.map(escaped).joined(separator: "\\")
    }

    /// Whether ``escaped(_:)`` writes `scalar` as an escape.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F: return true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
