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

    /// `raw` without the password a debug dump of an A-ASSOCIATE-RQ shows (DCMTK 3.6.7 prints a username and
    /// password identity's secondary field as `Password: [...]`), for px's own log.
    public static func redacted(_ raw: some StringProtocol) -> String {
        guard let range = raw.firstRange(of: "Password: [") else { return String(raw) }
        return String(raw[..<range.upperBound]) + "(redacted)]"
    }
}
