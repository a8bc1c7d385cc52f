import DICOMData

/// An error of the storage engine: a layout that cannot be used, a file-system failure, or something in
/// the tree that placement refuses to go through (a symbolic link where a folder or file goes).
///
/// Built only through the named factories, so each carries a stable ``Code``. PXCore turns it into a
/// `PXError` (`usage` for ``Code/layout``, `io` for the others) with `PXError.storage(_:)`.
public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: String, Hashable, Sendable {
            case layout, io, unsafePath, busy
        }
        let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The layout template is invalid (a usage error: `--layout`).
        public static let layout = Code(.layout)
        /// A file-system call failed (disk full, permissions, a missing folder).
        public static let io = Code(.io)
        /// The tree holds a symbolic link or another kind of file where placement needs a folder or a
        /// regular file: placement never follows or replaces it.
        public static let unsafePath = Code(.unsafePath)
        /// Another px holds the place's lock (``PlaceLock``) and did not release it in time.
        public static let busy = Code(.busy)

        public var description: String { kind.rawValue }
    }

    public let code: Code
    /// A one-line explanation for people (without the path).
    public let message: String
    /// The path concerned, when there is one.
    public let path: String?

    private init(_ code: Code, _ message: String, path: String?) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String { path.map { "\(message): \($0)" } ?? message }

    /// An invalid `--layout` template.
    public static func layout(_ message: String) -> StorageError {
        StorageError(.layout, message, path: nil)
    }

    /// A failed file-system call; `errno` is the code it set, named in the message.
    public static func io(_ message: String, path: String?, errno code: Int32? = nil) -> StorageError {
        StorageError(.io, code.map { "\(message) (\(POSIX.errorText($0)))" } ?? message, path: path)
    }

    /// The place's lock (`path`) is held by another process.
    public static func busy(_ message: String, path: String) -> StorageError {
        StorageError(.busy, message, path: path)
    }

    /// `path` is a symbolic link or not the kind of file placement needs there.
    public static func unsafePath(_ message: String, path: String) -> StorageError {
        StorageError(.unsafePath, message, path: path)
    }
}
