/// A small JSON parser (RFC 8259) producing ``JSONValue``, with a nesting limit so hostile input
/// cannot recurse without bound. Numbers are kept as text.
public struct JSONParser {
    private let bytes: [UInt8]
    private var i = 0
    private let maximumDepth: Int

    /// Parses one JSON value that fills the whole text (surrounding white space allowed).
    public static func parse(_ text: String, maximumDepth: Int = 256) throws(DICOMDataError) -> JSONValue {
        try parse(Array(text.utf8), maximumDepth: maximumDepth)
    }

    public static func parse(_ bytes: [UInt8], maximumDepth: Int = 256) throws(DICOMDataError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maximumDepth: maximumDepth)
        parser.skipSpace()
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.i == bytes.count else { throw parser.failure("trailing characters") }
        return value
    }

    private init(bytes: [UInt8], maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    private func failure(_ what: String) -> DICOMDataError {
        .invalidJSON("\(what) at character offset \(i)")
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func literal(_ word: String, _ value: JSONValue) throws(DICOMDataError) -> JSONValue {
        let w = Array(word.utf8)
        guard bytes.count - i >= w.count, Array(bytes[i..<(i + w.count)]) == w else { throw failure("invalid literal") }
        i += w.count
        return value
    }

    private mutating func value(depth: Int) throws(DICOMDataError) -> JSONValue {
        guard depth <= maximumDepth else { throw failure("nesting deeper than \(maximumDepth)") }
        guard i < bytes.count else { throw failure("unexpected end") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var members: [JSONMember] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw failure("expected a key") }
                let key = try string()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                i += 1
                skipSpace()
                members.append(JSONMember(key, try value(depth: depth + 1)))
                skipSpace()
                guard i < bytes.count else { throw failure("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return .object(members)
                }
                throw failure("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var values: [JSONValue] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return .array(values)
            }
            while true {
                skipSpace()
                values.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw failure("unexpected end") }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return .array(values)
                }
                throw failure("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default: return try number()
        }
    }

    private mutating func number() throws(DICOMDataError) -> JSONValue {
        let start = i
        func isNumberByte(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
                || b == UInt8(ascii: "e") || b == UInt8(ascii: "E")
        }
        while i < bytes.count, isNumberByte(bytes[i]) { i += 1 }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard !text.isEmpty, Double(text) != nil else { throw failure("invalid value") }
        return .number(text)
    }

    private mutating func hex4() throws(DICOMDataError) -> UInt32 {
        guard bytes.count - i >= 4, let v = UInt32(String(decoding: bytes[i..<(i + 4)], as: UTF8.self), radix: 16)
        else {
            throw failure("invalid \\u escape")
        }
        i += 4
        return v
    }

    private mutating func string() throws(DICOMDataError) -> String {
        i += 1  // opening quote
        var out: [UInt8] = []
        while true {
            guard i < bytes.count else { throw failure("unterminated string") }
            let b = bytes[i]
            i += 1
            switch b {
            case UInt8(ascii: "\""):
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { throw failure("unterminated escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), bytes.count - i >= 6, bytes[i] == 0x5C,
                        bytes[i + 1] == UInt8(ascii: "u")
                    {
                        i += 2
                        let low = try hex4()
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low &- 0xDC00 & 0x3FF)
                    }
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
                default: throw failure("invalid escape")
                }
            default:
                if b < 0x20 { throw failure("control character in string") }
                out.append(b)
            }
        }
    }
}
