/// One line of a DCMTK tool's log (oflog): `F: `, `E: `, `W: `, `I: `, `D: ` or `T: ` and a text.
public struct DCMTKLogLine: Hashable, Sendable {
    public enum Level: Character, Hashable, Sendable {
        case fatal = "F"
        case error = "E"
        case warning = "W"
        case info = "I"
        case debug = "D"
        case trace = "T"
    }

    /// `nil` for a line without a level prefix (a usage banner, a continuation).
    public let level: Level?
    /// The text after the prefix.
    public let text: String

    /// Splits a raw line into level and text.
    public init(_ line: some StringProtocol) {
        let utf8 = line.utf8
        if utf8.count >= 2, let first = line.first, let level = Level(rawValue: first),
            utf8[utf8.index(after: utf8.startIndex)] == UInt8(ascii: ":")
        {
            self.level = level
            var rest = line.dropFirst(2)
            if rest.first == " " { rest = rest.dropFirst() }
            self.text = String(rest)
        } else {
            self.level = nil
            self.text = String(line)
        }
    }

    /// Whether this is an `F:` or `E:` line.
    public var isFailure: Bool { level == .fatal || level == .error }
}
