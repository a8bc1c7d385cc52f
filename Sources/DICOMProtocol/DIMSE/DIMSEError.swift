/// An error in a DIMSE message: a command set that cannot be decoded, or messages in the wrong order
/// (PS3.7 §9.3, §E.1). The association should be aborted (PS3.8 §9.3.8, A-P-ABORT).
public struct DIMSEError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of error.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedCommandSet, missingElement, unknownCommand, unexpectedDataSet, missingDataSet
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A command set element is truncated, malformed, or outside group 0000.
        public static let malformedCommandSet = Code(.malformedCommandSet)
        /// A required command element is missing.
        public static let missingElement = Code(.missingElement)
        /// Command Field holds a value this implementation does not know.
        public static let unknownCommand = Code(.unknownCommand)
        /// A data set arrived for a command that announced none.
        public static let unexpectedDataSet = Code(.unexpectedDataSet)
        /// A command arrived while the previous command's data set was still expected.
        public static let missingDataSet = Code(.missingDataSet)

        public var description: String { self.base.rawValue }
    }

    /// The kind of error.
    public let code: Code
    /// What was wrong.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "DIMSEError.\(self.code): \(self.detail)" }

    /// A command set element is malformed.
    public static func malformedCommandSet(_ detail: String) -> DIMSEError { DIMSEError(.malformedCommandSet, detail) }
    /// A required element is missing from a command.
    public static func missingElement(_ name: String, in command: String) -> DIMSEError {
        DIMSEError(.missingElement, "\(command) has no \(name)")
    }
    /// Command Field is unknown.
    public static func unknownCommand(_ field: UInt16?) -> DIMSEError {
        DIMSEError(.unknownCommand, field.map { "command field 0x" + String($0, radix: 16) } ?? "no command field")
    }
    /// A data set followed a command that announced none.
    public static func unexpectedDataSet(after command: String) -> DIMSEError {
        DIMSEError(.unexpectedDataSet, "data set after \(command), which announced none")
    }
    /// A command arrived instead of an announced data set.
    public static func missingDataSet(for command: String) -> DIMSEError {
        DIMSEError(.missingDataSet, "\(command) announced a data set that never came")
    }
}
