import DICOMData

/// An error of the zip reader or writer (PKWARE APPNOTE 6.3.x): a file-system failure, or an archive the
/// reader refuses because it is damaged, unsupported or hostile.
///
/// Built only through the named factories, so each carries a stable ``Code``. PXCore turns it into a
/// `PXError` with `PXError.zip(_:)`.
public struct ZipError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: String, Hashable, Sendable {
            case io, truncated, malformed, unsafeName, tooLarge, overlapping, sizeMismatch, checksum, encrypted
            case unsupported, duplicateName, missingEntry, placement, notDICOM, conflict
        }
        let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// A file-system call failed (disk full, permissions, a missing file).
        public static let io = Code(.io)
        /// The archive ends before a structure it declares (no end of central directory record, a central
        /// directory or entry past the end of the file).
        public static let truncated = Code(.truncated)
        /// A record with a wrong signature, or fields that contradict each other.
        public static let malformed = Code(.malformed)
        /// An entry name that could leave the extraction folder: `..`, an absolute path, a backslash, a
        /// drive letter, NUL or a control character, an empty component, or invalid UTF-8.
        public static let unsafeName = Code(.unsafeName)
        /// Past a limit: an entry or the whole archive inflating beyond ``ZipLimits``, or a ratio of a
        /// decompression bomb, or a central directory larger than allowed.
        public static let tooLarge = Code(.tooLarge)
        /// Two entries share bytes of the archive (the overlapping-entries bomb), or an entry reaches into
        /// the central directory.
        public static let overlapping = Code(.overlapping)
        /// An entry's data is not as long as its headers say (compressed or uncompressed), or the local
        /// header disagrees with the central directory.
        public static let sizeMismatch = Code(.sizeMismatch)
        /// An entry's CRC-32 is not the one its headers give, or its deflate stream is corrupt.
        public static let checksum = Code(.checksum)
        /// An encrypted entry (traditional PKWARE or strong encryption): refused, never guessed at.
        public static let encrypted = Code(.encrypted)
        /// A compression method other than stored (0) and deflate (8), or a multi-disk archive.
        public static let unsupported = Code(.unsupported)
        /// Two entries with the same name: which one is meant is ambiguous.
        public static let duplicateName = Code(.duplicateName)
        /// The archive has no entry of the name asked for.
        public static let missingEntry = Code(.missingEntry)
        /// Placing an extracted instance in a folder place failed: ``ZipError/storage`` says why.
        public static let placement = Code(.placement)
        /// An archive without a manifest (another tool's) in which no entry is a DICOM Part 10 file, or a
        /// DICOM entry without the Study, Series and SOP Instance UIDs that place it (PS3.10 §7.1).
        public static let notDICOM = Code(.notDICOM)
        /// One SOP Instance UID with different content in two archives of a place: one of them is not the
        /// instance, and which is cannot be told.
        public static let conflict = Code(.conflict)

        public var description: String { kind.rawValue }
    }

    public let code: Code
    /// A one-line explanation for people (without the path).
    public let message: String
    /// The archive (or file) concerned, when there is one.
    public let path: String?
    /// For ``Code/placement``: the storage engine's error.
    public let storage: StorageError?

    private init(_ code: Code, _ message: String, path: String?, storage: StorageError? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.storage = storage
    }

    public var description: String { path.map { "\(message): \($0)" } ?? message }

    /// A failed file-system call; `errno` is the code it set, named in the message.
    public static func io(_ message: String, path: String?, errno code: Int32? = nil) -> ZipError {
        ZipError(.io, code.map { "\(message) (\(POSIX.errorText($0)))" } ?? message, path: path)
    }

    public static func truncated(_ message: String, path: String?) -> ZipError {
        ZipError(.truncated, message, path: path)
    }

    public static func malformed(_ message: String, path: String?) -> ZipError {
        ZipError(.malformed, message, path: path)
    }

    public static func unsafeName(_ name: String, path: String?) -> ZipError {
        ZipError(
            .unsafeName, "refusing an entry name that could leave its folder: \(name.debugDescription)", path: path)
    }

    public static func tooLarge(_ message: String, path: String?) -> ZipError {
        ZipError(.tooLarge, message, path: path)
    }

    public static func overlapping(_ name: String, path: String?) -> ZipError {
        ZipError(
            .overlapping, "entry \(name.debugDescription) overlaps another entry or the central directory", path: path)
    }

    public static func sizeMismatch(_ message: String, path: String?) -> ZipError {
        ZipError(.sizeMismatch, message, path: path)
    }

    public static func checksum(_ message: String, path: String?) -> ZipError {
        ZipError(.checksum, message, path: path)
    }

    public static func encrypted(_ name: String, path: String?) -> ZipError {
        ZipError(.encrypted, "entry \(name.debugDescription) is encrypted", path: path)
    }

    public static func unsupported(_ message: String, path: String?) -> ZipError {
        ZipError(.unsupported, message, path: path)
    }

    public static func duplicateName(_ name: String, path: String?) -> ZipError {
        ZipError(.duplicateName, "two entries are named \(name.debugDescription)", path: path)
    }

    /// An extracted instance could not be placed in a folder place.
    public static func placement(_ error: StorageError) -> ZipError {
        ZipError(.placement, error.message, path: error.path, storage: error)
    }

    /// An archive of another tool that holds no usable DICOM file (``Code/notDICOM``).
    public static func notDICOM(_ message: String, path: String?) -> ZipError {
        ZipError(.notDICOM, message, path: path)
    }

    public static func missingEntry(_ name: String, path: String?) -> ZipError {
        ZipError(.missingEntry, "no entry \(name.debugDescription)", path: path)
    }

    /// Instances held twice with different content (``Code/conflict``).
    public static func conflict(_ message: String, path: String?) -> ZipError {
        ZipError(.conflict, message, path: path)
    }
}
