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
        let walker = try Walker(root: root)
        var files: [Entry] = []
        while let entry = walker.next() { files.append(entry) }
        return (files, walker.unreadableFolders)
    }

    /// The walk of ``regularFiles(below:)`` one file at a time, for a folder too large to list at once: what it
    /// keeps is the open folders of the current path, not the files seen.
    public final class Walker {
        #if canImport(Darwin)
            typealias Handle = UnsafeMutablePointer<DIR>
        #else
            typealias Handle = OpaquePointer
        #endif
        /// A folder being read: its handle (`DIR *`) and its path relative to the root.
        private var open: [(handle: Handle, relative: String)] = []
        /// Folders below the root that could not be read so far.
        public private(set) var unreadableFolders = 0

        /// - Throws: the errno of opening `root`.
        public init(root: String) throws(POSIX.Failure) {
            guard let handle = opendir(root) else { throw .current() }
            self.open = [(handle, "")]
        }

        deinit {
            for folder in self.open { closedir(folder.handle) }
        }

        /// The next regular file, `nil` when the walk is over.
        public func next() -> Entry? {
            while let folder = self.open.last {
                guard let entry = readdir(folder.handle) else {
                    closedir(folder.handle)
                    self.open.removeLast()
                    continue
                }
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." || FolderWalk.isPrivate(name) { continue }
                let relativePath = folder.relative.isEmpty ? name : folder.relative + "/" + name
                // Relative to the open folder (no walk of the whole path for each file), a final link not
                // followed.
                let parent = dirfd(folder.handle)
                var info = stat()
                guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    let descriptor = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                    if descriptor >= 0, let handle = fdopendir(descriptor) {
                        self.open.append((handle, relativePath))
                    } else {
                        if descriptor >= 0 { close(descriptor) }
                        self.unreadableFolders += 1
                    }
                case S_IFREG:
                    return Entry(
                        relativePath: relativePath, size: Int(info.st_size),
                        modified: FolderWalk.nanoseconds(info.st_mtim))
                default:
                    continue
                }
            }
            return nil
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
