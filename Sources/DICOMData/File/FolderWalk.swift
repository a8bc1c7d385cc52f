#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one walk of a folder of DICOM files that px does: every regular file below a root, with its size and
/// modification time, symbolic links never followed (so a link cannot lead the walk out of the root), and the
/// folders px keeps for itself inside a place (``isPrivate(_:)``) skipped.
public enum FolderWalk {
    /// One regular file found by the walk.
    public struct Entry: Hashable, Sendable {
        /// The path relative to the root, `/`-separated, without a leading `/`.
        public var relativePath: String
        /// `st_size`.
        public var size: Int
        /// `st_mtim` in nanoseconds since the epoch.
        public var modified: Int64

        public init(relativePath: String, size: Int, modified: Int64) {
            self.relativePath = relativePath
            self.size = size
            self.modified = modified
        }
    }

    /// Whether a file or folder name is one px keeps for itself inside a place and no walker enters: the
    /// place's index (`.px/`) and the staging folder of files being received (`.px-incoming/`).
    public static func isPrivate(_ name: String) -> Bool {
        name.hasPrefix(".px")
    }

    /// Every regular file below `root`, in no particular order. Folders that cannot be read below the root are
    /// skipped (their count is returned); symbolic links, sockets and FIFOs are not files of the place.
    ///
    /// - Throws: the errno of opening `root` itself.
    public static func regularFiles(below root: String) throws(POSIX.Failure) -> (
        files: [Entry], unreadableFolders: Int
    ) {
        var files: [Entry] = []
        var unreadable = 0
        guard let handle = opendir(root) else { throw .current() }
        closedir(handle)
        Self.walk(root, relative: "", into: &files, unreadable: &unreadable)
        return (files, unreadable)
    }

    private static func walk(_ directory: String, relative: String, into files: inout [Entry], unreadable: inout Int) {
        guard let handle = opendir(directory) else {
            unreadable += 1
            return
        }
        defer { closedir(handle) }
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." || Self.isPrivate(name) { continue }
            let path = directory + "/" + name
            let relativePath = relative.isEmpty ? name : relative + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                Self.walk(path, relative: relativePath, into: &files, unreadable: &unreadable)
            case S_IFREG:
                files.append(
                    Entry(
                        relativePath: relativePath, size: Int(info.st_size),
                        modified: Self.nanoseconds(info.st_mtim)))
            default:
                continue
            }
        }
    }

    /// The size and modification time of one file (not following a final symbolic link); `nil` when it is not a
    /// regular file or cannot be stat'ed.
    public static func entry(at path: String, relativePath: String) -> Entry? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return Entry(
            relativePath: relativePath, size: Int(info.st_size),
            modified: Self.nanoseconds(info.st_mtim))
    }

    /// A `timespec` (`st_mtim`) in nanoseconds since the epoch: how ``Entry/modified`` is kept.
    public static func nanoseconds(_ time: timespec) -> Int64 {
        Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
