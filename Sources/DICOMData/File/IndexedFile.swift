#if canImport(Glibc)
    import Glibc
#endif

/// A file of a place (a folder px serves or syncs from) as the place's index recorded it: the place's root, the
/// path below it, and the size and modification time the file had when its header was read.
///
/// What px sends from a place is read through ``open()``, never by path. Every component below the root is
/// opened with `openat(2)` and `O_NOFOLLOW` (``POSIX/openNoFollow(_:in:flags:)``, the call PXStorage's placement
/// opens the folders it writes into with), so a symbolic link swapped in anywhere on the way (by another user of
/// a shared folder, while px runs) is refused instead of followed out of the place; and the file opened must
/// still be the one indexed, a regular file of the recorded size and modification time (`fstat(2)` of the
/// descriptor), so a file replaced or rewritten since is not sent on the index's word. The caller then reads
/// from that descriptor only.
public struct IndexedFile: Sendable, Hashable {
    /// The place's root (its own path is the administrator's choice: links in it are followed).
    public var root: String
    /// The path below the root, `/`-separated, as the index holds it.
    public var relativePath: String
    /// `st_size` when indexed.
    public var size: Int
    /// `st_mtim` in nanoseconds when indexed (``FolderWalk/Entry/modified``).
    public var modified: Int64

    public init(root: String, relativePath: String, size: Int, modified: Int64) {
        self.root = root
        self.relativePath = relativePath
        self.size = size
        self.modified = modified
    }

    /// The file's path, for messages.
    public var path: String { self.root + "/" + self.relativePath }

    /// Opens the file read-only below ``root`` without following a link at any component, and checks it is
    /// still the indexed file.
    ///
    /// - Returns: The open file (the caller closes it).
    /// - Throws: ``DICOMDataError/Code/notTheIndexedFile`` for a link (or a non-folder where a folder goes) on
    ///   the way, a file that is gone, not regular, or of another size or modification time;
    ///   ``DICOMDataError/Code/io`` when it cannot be opened otherwise.
    public func open() throws(DICOMDataError) -> OpenedFile {
        let file = try Self.open(self.relativePath, below: self.root)
        guard file.size == self.size && file.modified == self.modified else {
            file.close()
            throw .notTheIndexedFile(
                "changed since indexed (size \(file.size), was \(self.size); mtime \(file.modified) ns, was \(self.modified))",
                path: self.path)
        }
        return file
    }

    /// Opens the regular file `relativePath` read-only below `root` without following a link at any component
    /// (what ``open()`` does before it compares the file with the index).
    ///
    /// - Throws: ``DICOMDataError/Code/notTheIndexedFile`` for a link (or a non-folder where a folder goes) on
    ///   the way, a file that is gone or not regular; ``DICOMDataError/Code/io`` when it cannot be opened
    ///   otherwise.
    public static func open(_ relativePath: String, below root: String) throws(DICOMDataError) -> OpenedFile {
        let path = root + "/" + relativePath
        let names = relativePath.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !names.isEmpty, names.allSatisfy(POSIX.isPlainName) else {
            throw .notTheIndexedFile("its path has an empty, . or .. component", path: path)
        }
        var parent = Glibc.open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard parent >= 0 else { throw .io("cannot open the place", path: root, errno: errno) }
        for (index, name) in names.enumerated() {
            let last = index == names.count - 1
            // O_NONBLOCK: a FIFO swapped in for the file must not block the open; reads of a regular file ignore it.
            let flags = last ? O_RDONLY | O_NONBLOCK : O_RDONLY | O_DIRECTORY
            let next = POSIX.openNoFollow(name, in: parent, flags: flags)
            let code = errno
            Glibc.close(parent)
            guard next >= 0 else {
                let at = names[...index].joined(separator: "/")
                switch code {
                case ELOOP, ENOTDIR:
                    throw .notTheIndexedFile("\(at) is a symbolic link or not a folder", path: path)
                case ENOENT:
                    throw .notTheIndexedFile("\(at) is gone", path: path)
                default:
                    throw .io("cannot open", path: path, errno: code)
                }
            }
            parent = next
        }
        let descriptor = parent
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .io("cannot stat", path: path, errno: code)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw .notTheIndexedFile("it is not a regular file", path: path)
        }
        return OpenedFile(
            descriptor: descriptor, size: Int(info.st_size), modified: FolderWalk.nanoseconds(info.st_mtim), path: path)
    }
}

/// A regular file open for reading, with its size from `fstat(2)` of the descriptor.
public struct OpenedFile: Sendable {
    /// The descriptor (`O_RDONLY | O_CLOEXEC`).
    public let descriptor: Int32
    /// Its size when opened.
    public let size: Int
    /// Its modification time when opened, in nanoseconds (``FolderWalk/nanoseconds(_:)``).
    public let modified: Int64
    /// Its path, for messages.
    public let path: String

    /// The path through which the open descriptor can be read again (`/proc/self/fd/N`, Linux): the same file,
    /// whatever happens to its name meanwhile, for readers that take a path.
    public var descriptorPath: String { "/proc/self/fd/\(self.descriptor)" }

    public init(descriptor: Int32, size: Int, modified: Int64 = 0, path: String) {
        self.descriptor = descriptor
        self.size = size
        self.modified = modified
        self.path = path
    }

    /// Opens `path` as given (links followed): a file named by the user, not one taken from a place's index.
    ///
    /// - Throws: ``DICOMDataError/Code/io`` when it cannot be opened or is a folder.
    public init(path: String) throws(DICOMDataError) {
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io("cannot open", path: path, errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            throw .io("cannot stat", path: path, errno: code)
        }
        if info.st_mode & S_IFMT == S_IFDIR {
            Glibc.close(descriptor)
            throw .io("cannot read", path: path, errno: EISDIR)
        }
        self.init(
            descriptor: descriptor, size: Int(info.st_size), modified: FolderWalk.nanoseconds(info.st_mtim), path: path)
    }

    /// `count` bytes (fewer when the file ends first) from `offset`.
    public func read(count: Int, from offset: Int = 0) throws(DICOMDataError) -> [UInt8] {
        try FileIO.readPrefix(self.descriptor, path: self.path, count: max(0, count), from: offset)
    }

    /// The bytes from `offset` to the size the file had when opened.
    public func readAll(from offset: Int = 0) throws(DICOMDataError) -> [UInt8] {
        try self.read(count: self.size - offset, from: offset)
    }

    public func close() {
        Glibc.close(self.descriptor)
    }
}

extension POSIX {
    /// Whether `name` can be one component of a path below a root: not empty, `.` or `..`, and without `/` or NUL.
    public static func isPlainName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
    }

    /// `openat(parent, name, flags | O_NOFOLLOW | O_CLOEXEC)`: how px opens one name inside a tree it serves or
    /// stores into. A symbolic link fails with `ELOOP` (`ENOTDIR` with `O_DIRECTORY`), whatever it points to.
    /// `name` must pass ``isPlainName(_:)``.
    ///
    /// - Returns: The descriptor, or -1 with `errno` set.
    public static func openNoFollow(_ name: String, in parent: Int32, flags: Int32, mode: mode_t = 0) -> Int32 {
        openat(parent, name, flags | O_NOFOLLOW | O_CLOEXEC, mode)
    }
}
