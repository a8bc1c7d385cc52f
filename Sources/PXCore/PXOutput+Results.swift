import DICOMData

// The typed results as `Encodable` values, each encoding to the `data` its command prints through the one
// rendering of PXOutput (``JSONValueEncoder`` gives the same bytes as the command): a library user writes
// `PX.json(result)` or hands the value to any encoder.

extension PXOutput {
    /// A ``JSONValue`` that is already px's JSON (a find's pypx entries, DICOM JSON), encoded as it is: through
    /// ``JSONValueEncoder`` verbatim, through another encoder member by member (a number as an integer when its
    /// text is one, else as a `Double`).
    public struct Verbatim: Encodable, Sendable {
        public var value: JSONValue

        public init(_ value: JSONValue) { self.value = value }

        public func encode(to encoder: any Encoder) throws {
            switch value {
            case .null:
                var container = encoder.singleValueContainer()
                try container.encodeNil()
            case .bool(let flag):
                var container = encoder.singleValueContainer()
                try container.encode(flag)
            case .string(let text):
                var container = encoder.singleValueContainer()
                try container.encode(text)
            case .number(let text):
                var container = encoder.singleValueContainer()
                if let integer = Int64(text) {
                    try container.encode(integer)
                } else {
                    try container.encode(Double(text) ?? 0)
                }
            case .array(let elements):
                var container = encoder.unkeyedContainer()
                for element in elements { try container.encode(Verbatim(element)) }
            case .object(let members):
                var container = encoder.container(keyedBy: SortedStrings.Key.self)
                for member in members {
                    try container.encode(Verbatim(member.value), forKey: SortedStrings.Key(stringValue: member.key))
                }
            }
        }
    }
}

/// px-echo's data: ``PXOutput/EchoOutput`` for a node's C-ECHO, ``PXOutput/WebVerificationOutput`` for a
/// DICOMweb service.
extension Verification: Encodable {
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .echo(let result): try PXOutput.EchoOutput(result).encode(to: encoder)
        case .web(let result): try PXOutput.WebVerificationOutput(result).encode(to: encoder)
        }
    }
}

/// px-find's data for a single-level query in its default format (pypx 3.x's entries,
/// ``PXOutput/findData(_:format:)-(FindResult,_)``).
extension FindResult: Encodable {
    public func encode(to encoder: any Encoder) throws {
        try PXOutput.Verbatim(PXOutput.findData(self, format: .pypx)).encode(to: encoder)
    }
}

/// px-push's data (``PXOutput/PushOutput``).
extension PushResult: Encodable {
    public func encode(to encoder: any Encoder) throws { try PXOutput.PushOutput(self).encode(to: encoder) }
}

/// One C-GET's data (``PXOutput/GetOutput``).
extension GetResult: Encodable {
    public func encode(to encoder: any Encoder) throws { try PXOutput.GetOutput(self).encode(to: encoder) }
}

/// One C-MOVE's data (``PXOutput/MoveOutput``).
extension MoveResult: Encodable {
    public func encode(to encoder: any Encoder) throws { try PXOutput.MoveOutput(self).encode(to: encoder) }
}

/// One px-listen NDJSON line (``PXOutput/ListenEventOutput``).
extension ListenEvent: Encodable {
    public func encode(to encoder: any Encoder) throws { try PXOutput.ListenEventOutput(self).encode(to: encoder) }
}
