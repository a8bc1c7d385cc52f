/// An error from reading, writing or converting DICOM data.
///
/// Errors carry a ``Code`` that callers can match on, the byte offset where the problem was found
/// (when there is one), and a message for people. They are built through the named factories.
public struct DICOMDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a value callers can match on.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Hashable, Sendable {
            case truncated, lengthPastEnd, invalidVR, invalidLength, nestingTooDeep, notDICOM
            case missingTransferSyntax, inflateFailed, io, invalidJSON, invalidValue, unexpectedTag
            case tooLarge, notTheIndexedFile
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The data ended inside an element header or value.
        public static let truncated = Code(.truncated)
        /// A value length points past the end of its container.
        public static let lengthPastEnd = Code(.lengthPastEnd)
        /// Two bytes that should be a value representation are not one.
        public static let invalidVR = Code(.invalidVR)
        /// A length that the encoding does not allow (undefined length on a plain value, for instance).
        public static let invalidLength = Code(.invalidLength)
        /// Sequences nested deeper than the reader allows.
        public static let nestingTooDeep = Code(.nestingTooDeep)
        /// Not a DICOM file: no `DICM` prefix and not a recognisable raw dataset.
        public static let notDICOM = Code(.notDICOM)
        /// The file meta information has no Transfer Syntax UID.
        public static let missingTransferSyntax = Code(.missingTransferSyntax)
        /// A deflated dataset could not be inflated.
        public static let inflateFailed = Code(.inflateFailed)
        /// The file system refused a read or a write.
        public static let io = Code(.io)
        /// JSON that is not the DICOM JSON Model.
        public static let invalidJSON = Code(.invalidJSON)
        /// A value that cannot be represented in the requested form.
        public static let invalidValue = Code(.invalidValue)
        /// A tag where the encoding does not allow one (a stray delimiter, for instance).
        public static let unexpectedTag = Code(.unexpectedTag)
        /// Data larger than the configured limit.
        public static let tooLarge = Code(.tooLarge)
        /// A file of a place is no longer the one its index recorded: a symbolic link on its way, or replaced or
        /// changed since it was indexed (``IndexedFile``).
        public static let notTheIndexedFile = Code(.notTheIndexedFile)

        public var description: String { kind.rawValue }
    }

    public let code: Code
    /// The byte offset in the input where the problem was found, when known.
    public let offset: Int?
    public let message: String

    private init(code: Code, offset: Int?, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String {
        if let offset { return "\(message) (at byte offset \(offset))" }
        return message
    }

    public static func truncated(at offset: Int, needed: Int, context: String) -> Self {
        .init(code: .truncated, offset: offset, message: "data ends inside \(context): \(needed) more bytes needed")
    }

    public static func lengthPastEnd(tag: Tag, length: UInt32, at offset: Int, available: Int) -> Self {
        .init(
            code: .lengthPastEnd, offset: offset,
            message: "element \(tag) announces \(length) bytes but only \(available) remain")
    }

    public static func invalidVR(_ b0: UInt8, _ b1: UInt8, tag: Tag, at offset: Int) -> Self {
        let hex = String(b0, radix: 16) + " " + String(b1, radix: 16)
        return .init(code: .invalidVR, offset: offset, message: "element \(tag) has no valid VR (bytes \(hex))")
    }

    public static func undefinedLength(tag: Tag, vr: VR, at offset: Int) -> Self {
        .init(code: .invalidLength, offset: offset, message: "element \(tag) (\(vr.rawValue)) has an undefined length")
    }

    /// An odd value length: PS3.5 §7.1.1 requires every value (and every Pixel Data fragment) to have an even length.
    public static func oddLength(tag: Tag, length: UInt32, at offset: Int) -> Self {
        .init(
            code: .invalidLength, offset: offset, message: "element \(tag) has an odd length \(length) (PS3.5 §7.1.1)")
    }

    public static func nestingTooDeep(limit: Int, at offset: Int) -> Self {
        .init(code: .nestingTooDeep, offset: offset, message: "sequences nested deeper than \(limit) levels")
    }

    public static func notDICOM(_ reason: String) -> Self {
        .init(code: .notDICOM, offset: nil, message: "not a DICOM file: \(reason)")
    }

    public static func missingTransferSyntax() -> Self {
        .init(code: .missingTransferSyntax, offset: nil, message: "file meta information has no Transfer Syntax UID")
    }

    public static func inflateFailed(_ reason: String, at offset: Int) -> Self {
        .init(code: .inflateFailed, offset: offset, message: "cannot inflate deflated dataset: \(reason)")
    }

    public static func io(_ operation: String, path: String, errno: Int32) -> Self {
        .init(code: .io, offset: nil, message: "\(operation) \(path): \(POSIX.errorText(errno))")
    }

    public static func invalidJSON(_ reason: String) -> Self {
        .init(code: .invalidJSON, offset: nil, message: "invalid DICOM JSON: \(reason)")
    }

    public static func invalidValue(_ reason: String) -> Self {
        .init(code: .invalidValue, offset: nil, message: reason)
    }

    public static func unexpectedTag(_ tag: Tag, at offset: Int, context: String) -> Self {
        .init(code: .unexpectedTag, offset: offset, message: "unexpected \(tag) \(context)")
    }

    /// `path` is not the file its place's index recorded (``IndexedFile/open()``), for `reason`.
    public static func notTheIndexedFile(_ reason: String, path: String) -> Self {
        .init(code: .notTheIndexedFile, offset: nil, message: "\(path) is not the indexed file: \(reason)")
    }

    public static func tooLarge(_ what: String, limit: Int) -> Self {
        .init(code: .tooLarge, offset: nil, message: "\(what) exceeds the limit of \(limit) bytes")
    }

    /// A deflated data set expands beyond ``InflateLimits/maximumRatio``: a decompression bomb, refused
    /// before it costs the memory it asks for.
    public static func inflateRatioExceeded(ratio: Int) -> Self {
        .init(
            code: .tooLarge, offset: nil,
            message: "deflated data set expands more than \(ratio) times its compressed size (a decompression bomb?)")
    }
}
