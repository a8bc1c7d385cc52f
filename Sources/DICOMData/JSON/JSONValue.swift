/// A JSON value with object members kept in order and numbers kept as their text, so that output is
/// stable and a DS value such as `1.50` is written as it was.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number, as JSON text (`-1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([JSONMember])

    /// A number from an integer.
    public static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(String(value)) }

    /// A number from a `Double`; non-finite values (which JSON cannot hold) become strings.
    public static func double(_ value: Double) -> JSONValue {
        guard value.isFinite else { return .string(String(value)) }
        if value == value.rounded(), abs(value) < 1e15 { return .number(String(Int64(value))) }
        return .number(String(value))
    }

    /// The member with a key, for objects.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [JSONMember]? {
        if case .object(let o) = self { return o }
        return nil
    }
}

/// One member of a JSON object.
public struct JSONMember: Sendable, Equatable {
    public var key: String
    public var value: JSONValue

    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
