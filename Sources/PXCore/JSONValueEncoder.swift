import DICOMData

/// Renders an `Encodable` value as a ``JSONValue``, so px's typed results print through
/// ``JSONValue/write(into:pretty:indent:)`` with exactly its bytes: members in the order `encode(to:)` writes
/// them (declaration order for a synthesized conformance), integers as their decimal text, a `Double` as
/// ``JSONValue/double(_:)`` writes it, `nil` from `encodeNil` as `null` (a synthesized conformance leaves a `nil` optional out).
///
/// Foundation's `JSONEncoder` is not used: it sorts or hashes keys and escapes `/`.
public enum JSONValueEncoder {
    /// The value as JSON.
    ///
    /// This encoder never throws; a conformance that throws from `encode(to:)` is a programming error in px's
    /// output types, and stops the program.
    public static func encode(_ value: some Encodable) -> JSONValue {
        let slot = Slot()
        do {
            try slot.encode(value, codingPath: [])
        } catch {
            preconditionFailure("JSONValueEncoder: \(type(of: value)) threw \(error) while encoding")
        }
        return slot.resolved
    }

    /// A value being built: a leaf, or an object or array whose members are still being written.
    final class Slot {
        enum Kind { case leaf, object, array }
        var kind = Kind.leaf
        var leaf = JSONValue.null
        var members: [(String, Slot)] = []
        var elements: [Slot] = []

        var resolved: JSONValue {
            switch kind {
            case .leaf: leaf
            case .object: .object(members.map { JSONMember($0.0, $0.1.resolved) })
            case .array: .array(elements.map(\.resolved))
            }
        }

        func set(_ value: JSONValue) {
            kind = .leaf
            leaf = value
        }

        func encode(_ value: some Encodable, codingPath: [any CodingKey]) throws {
            switch value {
            case let string as String: set(.string(string))
            case let double as Double: set(.double(double))
            case let verbatim as PXOutput.Verbatim: set(verbatim.value)
            default: try value.encode(to: SlotEncoder(slot: self, codingPath: codingPath))
            }
        }

        func child(key: String) -> Slot {
            kind = .object
            let slot = Slot()
            members.append((key, slot))
            return slot
        }

        func element() -> Slot {
            kind = .array
            let slot = Slot()
            elements.append(slot)
            return slot
        }

        var count: Int { kind == .object ? members.count : elements.count }
    }

    struct IndexKey: CodingKey {
        var stringValue: String { String(intValue ?? 0) }
        var intValue: Int?
        init(_ index: Int) { intValue = index }
        init?(stringValue: String) { nil }
        init?(intValue: Int) { self.intValue = intValue }
    }

    struct SlotEncoder: Encoder {
        let slot: Slot
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            slot.kind = .object
            return KeyedEncodingContainer(Keyed<Key>(slot: slot, codingPath: codingPath))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            slot.kind = .array
            return Unkeyed(slot: slot, codingPath: codingPath)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            Single(slot: slot, codingPath: codingPath)
        }
    }

    struct Keyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let slot: Slot
        var codingPath: [any CodingKey]

        mutating func encodeNil(forKey key: Key) throws { slot.child(key: key.stringValue).set(.null) }
        mutating func encode(_ value: Bool, forKey key: Key) throws {
            slot.child(key: key.stringValue).set(.bool(value))
        }
        mutating func encode(_ value: Int, forKey key: Key) throws {
            slot.child(key: key.stringValue).set(.integer(value))
        }
        mutating func encode(_ value: some Encodable, forKey key: Key) throws {
            try slot.child(key: key.stringValue).encode(value, codingPath: codingPath + [key])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            SlotEncoder(slot: slot.child(key: key.stringValue), codingPath: codingPath + [key])
                .container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            SlotEncoder(slot: slot.child(key: key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            SlotEncoder(slot: slot.child(key: "super"), codingPath: codingPath)
        }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            SlotEncoder(slot: slot.child(key: key.stringValue), codingPath: codingPath + [key])
        }
    }

    struct Unkeyed: UnkeyedEncodingContainer {
        let slot: Slot
        var codingPath: [any CodingKey]
        var count: Int { slot.count }

        mutating func encodeNil() throws { slot.element().set(.null) }
        mutating func encode(_ value: Bool) throws { slot.element().set(.bool(value)) }
        mutating func encode(_ value: Int) throws { slot.element().set(.integer(value)) }
        mutating func encode(_ value: some Encodable) throws {
            try slot.element().encode(value, codingPath: codingPath + [IndexKey(count)])
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            SlotEncoder(slot: slot.element(), codingPath: codingPath + [IndexKey(count)]).container(keyedBy: keyType)
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            SlotEncoder(slot: slot.element(), codingPath: codingPath + [IndexKey(count)]).unkeyedContainer()
        }
        mutating func superEncoder() -> any Encoder {
            SlotEncoder(slot: slot.element(), codingPath: codingPath + [IndexKey(count)])
        }
    }

    struct Single: SingleValueEncodingContainer {
        let slot: Slot
        var codingPath: [any CodingKey]

        mutating func encodeNil() throws { slot.set(.null) }
        mutating func encode(_ value: Bool) throws { slot.set(.bool(value)) }
        mutating func encode(_ value: Int) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: Int8) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: Int16) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: Int32) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: Int64) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: UInt) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: UInt8) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: UInt16) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: UInt32) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: UInt64) throws { slot.set(.integer(value)) }
        mutating func encode(_ value: Double) throws { slot.set(.double(value)) }
        mutating func encode(_ value: Float) throws { slot.set(.double(Double(value))) }
        mutating func encode(_ value: String) throws { slot.set(.string(value)) }
        mutating func encode(_ value: some Encodable) throws { try slot.encode(value, codingPath: codingPath) }
    }
}
