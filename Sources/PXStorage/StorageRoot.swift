import DICOMData
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The root of a storage tree, open as a directory descriptor, and the folders under it, each opened
/// relative to its parent with `O_NOFOLLOW | O_DIRECTORY` (`openat(2)`, `mkdirat(2)`).
///
/// No symbolic link inside the root is ever followed: a link (or any other kind of file) where a folder
/// goes is a ``StorageError/Code/unsafePath`` error, whatever it points to, so nothing received can be
/// written outside the root through one. The root's own path is the administrator's choice and is
/// resolved as given (links in it are followed once, when it is opened).
///
/// Folders opened once are kept open in a small least-recently-used cache (``cacheCapacity``
/// descriptors), so the steady state opens nothing: a file placed into a cached series folder costs
/// one `linkat(2)`, as many system calls as the `link(2)` by path it replaces. A cached descriptor
/// names the folder itself, not its path: replacing the folder by a link later cannot redirect it. A
/// folder removed behind our back is found on the next `ENOENT`; the caller then calls ``forget(_:)``
/// and opens it again.
public final class StorageRoot: Sendable {
    /// The root's path, without a trailing `/`.
    public let path: String
    /// The root folder.
    public let folder: Folder
    private let cache = Mutex(FolderCache())
    /// The staging folders whose abandoned files were already removed.
    private let swept = Mutex(Set<String>())

    /// Descriptors of folders kept open at most.
    public static let cacheCapacity = 64

    /// Opens `path`, first creating it and its missing parents (`mkdir -p`).
    ///
    /// - Throws: ``StorageError`` when it cannot be created or opened.
    public init(path: String) throws(StorageError) {
        let trimmed = path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
        try Self.makeDirectories(trimmed)
        let fd = open(trimmed, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open the storage root", path: trimmed, errno: errno) }
        self.path = trimmed
        self.folder = Folder(descriptor: fd, path: trimmed, names: [])
    }

    /// A folder of the tree: its descriptor stays valid for as long as this object lives (the cache may
    /// drop it meanwhile: it is closed when the last user lets go).
    public final class Folder: Sendable {
        /// An `O_RDONLY | O_DIRECTORY` descriptor of the folder.
        public let descriptor: Int32
        /// The folder's path, for messages and events.
        public let path: String
        /// The folder names from the root (empty for the root).
        public let names: [String]

        init(descriptor: Int32, path: String, names: [String]) {
            self.descriptor = descriptor
            self.path = path
            self.names = names
        }

        deinit { close(descriptor) }
    }

    /// The folder `names` under the root (`[]` is the root), every component opened without following
    /// links; with `create`, missing folders are made (`mkdirat`, mode 0755).
    ///
    /// - Throws: ``StorageError/Code/unsafePath`` for a link or a non-folder on the way (or a name that
    ///   is empty, `.`, `..` or holds `/`), ``StorageError/Code/io`` when a folder cannot be made or opened.
    public func folder(_ names: [String], create: Bool) throws(StorageError) -> Folder {
        if names.isEmpty { return folder }
        var keys: [String] = []
        keys.reserveCapacity(names.count)
        var key = ""
        for name in names {
            key += key.isEmpty ? name : "/" + name
            keys.append(key)
        }
        // The deepest folder already open.
        let (cached, depth): (Folder?, Int) = cache.withLock { cache in
            for depth in stride(from: names.count, to: 0, by: -1) {
                if let hit = cache.lookup(keys[depth - 1]) { return (hit, depth) }
            }
            return (nil, 0)
        }
        var current = cached ?? folder
        for index in depth..<names.count {
            let next = try openFolder(names[index], in: current, names: Array(names[...index]), create: create)
            cache.withLock { $0.insert(keys[index], next) }
            current = next
        }
        return current
    }

    /// Forgets the cached folders at `names`, above it and under it (after an `ENOENT` showed one of them
    /// was removed): the next ``folder(_:create:)`` opens the path again from the root.
    public func forget(_ names: [String]) {
        let key = names.joined(separator: "/")
        cache.withLock { $0.remove(under: key) }
    }

    /// One folder, opened relative to `parent`.
    private func openFolder(_ name: String, in parent: Folder, names: [String], create: Bool) throws(StorageError)
        -> Folder
    {
        let path = parent.path + "/" + name
        guard POSIX.isPlainName(name) else {
            throw .unsafePath("refusing a folder name that is empty, . or .., or holds / or NUL", path: path)
        }
        let flags = O_RDONLY | O_DIRECTORY
        var fd = POSIX.openNoFollow(name, in: parent.descriptor, flags: flags)
        if fd < 0 && errno == ENOENT && create {
            if mkdirat(parent.descriptor, name, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory", path: path, errno: errno)
            }
            fd = POSIX.openNoFollow(name, in: parent.descriptor, flags: flags)
        }
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR {
                throw .unsafePath("refusing to store through a symbolic link or a file where a folder goes", path: path)
            }
            throw .io("cannot open directory", path: path, errno: code)
        }
        return Folder(descriptor: fd, path: path, names: names)
    }

    /// `mkdir -p`, following links: for the root's own path only, which the administrator chose.
    static func makeDirectories(_ path: String) throws(StorageError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory", path: current, errno: errno)
            }
        }
    }

    /// The staging folder `name` directly under the root, created if missing: the temporary files of
    /// received instances are written there, on the root's file system, so that placing one is a link.
    ///
    /// - Returns: Its path.
    /// - Throws: ``StorageError/Code/unsafePath`` when `name` is a link or not a folder.
    ///
    /// Files left there by a px that was killed (older than ``staleAge``; a live transfer writes to its file
    /// far more often than that) are removed, once per root.
    public func stagingFolder(_ name: String = ".px-incoming") throws(StorageError) -> String {
        // Opened once to check it is a real folder (not cached: only its path is used).
        let staging = try openFolder(name, in: folder, names: [name], create: true)
        if swept.withLock({ swept in swept.insert(name).inserted }) {
            Self.removeStale(in: staging, olderThan: Self.staleAge)
        }
        return staging.path
    }

    /// The start of the name of a file that keeps a staging folder for a run (px-sync's hold, one per run).
    public static let holdPrefix = ".px-sync-hold-"

    /// A new hold file name for this process: `.px-sync-hold-run-PID-N.part`.
    public static func holdName() -> String { holdPrefix + StagingName.next("run") }

    /// Whether `name` is the hold of a process that is still running: it is never written after it is made, so
    /// its age says nothing, and removing it would let the folder go from under that run.
    static func isLiveHold(_ name: String) -> Bool {
        guard name.hasPrefix(holdPrefix) else { return false }
        let parts = name.dropFirst(holdPrefix.count).split(separator: "-")
        guard parts.count >= 2, let pid = pid_t(parts[1]), pid > 0 else { return false }
        return kill(pid, 0) == 0 || errno == EPERM
    }

    /// How old (since its last write) a file in a staging folder must be to count as abandoned: an hour.
    public static let staleAge: Int64 = 3600

    /// Removes the regular files of `folder` not modified for `seconds` (links and folders are left alone).
    static func removeStale(in folder: Folder, olderThan seconds: Int64) {
        let copy = dup(folder.descriptor)
        guard copy >= 0, let handle = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            return
        }
        defer { closedir(handle) }
        let now = Int64(time(nil))
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard POSIX.isPlainName(name) else { continue }
            var info = stat()
            guard fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0,
                info.st_mode & S_IFMT == S_IFREG, now - Int64(info.st_mtim.tv_sec) > seconds,
                !isLiveHold(name)
            else { continue }
            unlinkat(folder.descriptor, name, 0)
        }
    }
}

/// The open folders by their path under the root, least recently used dropped first.
struct FolderCache {
    private var entries: [String: (folder: StorageRoot.Folder, used: UInt64)] = [:]
    private var clock: UInt64 = 0

    mutating func lookup(_ key: String) -> StorageRoot.Folder? {
        guard let entry = entries[key] else { return nil }
        clock += 1
        entries[key] = (entry.folder, clock)
        return entry.folder
    }

    mutating func insert(_ key: String, _ folder: StorageRoot.Folder) {
        clock += 1
        entries[key] = (folder, clock)
        if entries.count > StorageRoot.cacheCapacity, let oldest = entries.min(by: { $0.value.used < $1.value.used }) {
            entries[oldest.key] = nil
        }
    }

    /// Removes `key`, the folders under it and those above it.
    mutating func remove(under key: String) {
        let prefix = key + "/"
        for candidate in entries.keys
        where candidate == key || candidate.hasPrefix(prefix) || prefix.hasPrefix(candidate + "/") {
            entries[candidate] = nil
        }
    }
}
