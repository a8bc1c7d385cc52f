import DICOMData

extension PXOutput {
    /// A member written as `null` when there is no value (a synthesized `Encodable` conformance leaves a `nil`
    /// optional out, and px's JSON keeps its keys).
    public struct Nullable<Wrapped: Encodable>: Encodable {
        public var value: Wrapped?

        public init(_ value: Wrapped?) { self.value = value }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if let value { try container.encode(value) } else { try container.encodeNil() }
        }
    }

    /// An object of strings with its keys sorted, so the output does not depend on a dictionary's order.
    public struct SortedStrings: Encodable {
        public var members: [String: String]

        public init(_ members: [String: String]) { self.members = members }

        struct Key: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                try container.encode(value, forKey: Key(stringValue: key))
            }
        }
    }

    /// `{"code": ..., "message": ..., "details": {...}}`, details only when there are some.
    public struct ErrorOutput: Encodable {
        public var code: String
        public var message: String
        public var details: SortedStrings?

        public init(_ error: PXError) {
            code = error.code.description
            message = error.message
            details = error.details.isEmpty ? nil : SortedStrings(error.details)
        }
    }

    /// `{"code": "0xa801", "name": "Refused: MoveDestinationUnknown", "category": "failure"}`.
    public struct StatusOutput: Encodable {
        public var code: String
        public var name: String
        public var category: String

        public init(_ status: DIMSEStatus) {
            code = status.hexCode
            name = status.name
            category = status.category.rawValue
        }
    }
}
