import DICOMData
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moves a completely written temporary file to its final name in the ``StorageLayout`` tree, atomically:
/// the final name either does not exist or names a complete file, never a partial one.
///
/// The temporary file must be on the same file system as the root (both backends write it under
/// `<root>/.px-incoming`), so placing it is a `link(2)` (no-clobber, for ``DuplicatePolicy/keep`` and
/// ``DuplicatePolicy/rename``) or a `rename(2)` (``DuplicatePolicy/overwrite``), both atomic. With
/// ``fsync`` the file is flushed before it is given its final name and the directory after, so a
/// placed file survives a power loss (the directories created on the way are not flushed).
///
/// Directories already created are remembered, so the steady state costs no `mkdir` per file; a
/// directory removed behind our back is recreated on the next `ENOENT`.
public final class InstancePlacer: Sendable {
    public let root: String
    public let layout: StorageLayout
    public let duplicates: DuplicatePolicy
    public let fsync: Bool
    private let madeDirectories = Mutex<Set<String>>([])

    /// Where an instance went.
    public struct Placement: Sendable, Hashable {
        /// The final path holding the instance (for a kept duplicate: the file already there).
        public var path: String
        /// The directories of each path component under the root (for the pypx layout: patient,
        /// study, series); the last is the file's directory.
        public var directories: [String]
        /// Set when the final name already existed: what was done.
        public var duplicate: DuplicatePolicy?
    }

    public init(root: String, layout: StorageLayout, duplicates: DuplicatePolicy, fsync: Bool) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.layout = layout
        self.duplicates = duplicates
        self.fsync = fsync
    }

    /// Places `temporaryFile` (a complete Part 10 file of `dataSet`).
    ///
    /// - Throws: ``PXError/io(_:path:)`` when a directory cannot be made or the file cannot be placed
    ///   (disk full, read-only, permissions); the temporary file is removed in every case.
    public func place(temporaryFile: String, dataSet: DataSet) throws(PXError) -> Placement {
        var removeTemporary = true
        defer { if removeTemporary { unlink(temporaryFile) } }
        let parts = layout.components(for: dataSet)
        var directories: [String] = []
        directories.reserveCapacity(parts.count)
        var current = root
        for part in parts.dropLast() {
            current += "/" + part
            directories.append(current)
        }
        let destination = current + "/" + (parts.last ?? "unknown.dcm")
        guard StorageLayout.isInside(destination, root: root) else {
            throw .io("refusing a path outside the root", path: destination)
        }
        let directory = directories.last ?? root
        try ensure(directories)
        if fsync { try Self.flush(temporaryFile) }

        var placement = Placement(path: destination, directories: directories, duplicate: nil)
        var retried = false
        while true {
            if duplicates == .overwrite {
                // rename(2) does not say whether it replaced a file: ask first (for the event only).
                let existed = access(destination, F_OK) == 0
                if rename(temporaryFile, destination) == 0 {
                    removeTemporary = false
                    if existed { placement.duplicate = .overwrite }
                    break
                }
            } else if link(temporaryFile, destination) == 0 {
                break
            } else if errno == EEXIST {
                placement.duplicate = duplicates
                if duplicates == .rename {
                    placement.path = try linkUnderNewName(temporaryFile, destination)
                }
                break
            } else if errno == EPERM || errno == EOPNOTSUPP || errno == EXDEV {
                // A file system without hard links: an exists-check and rename (not race-free).
                if access(destination, F_OK) == 0 {
                    placement.duplicate = duplicates
                    if duplicates == .rename { placement.path = try linkUnderNewName(temporaryFile, destination) }
                    break
                }
                guard rename(temporaryFile, destination) == 0 else {
                    throw .io("cannot move the received file into place (\(POSIX.errorText()))", path: destination)
                }
                removeTemporary = false
                break
            }
            let code = errno
            if code == ENOENT && !retried {
                // A directory vanished since we made it: forget and recreate.
                retried = true
                madeDirectories.withLock { _ = $0.subtract(directories) }
                try ensure(directories)
                continue
            }
            throw .io("cannot move the received file into place (\(POSIX.errorText(code)))", path: destination)
        }
        if fsync { try Self.flush(directory) }
        return placement
    }

    /// `name-1.dcm`, `name-2.dcm`, ...: the first free one, taken with link(2).
    private func linkUnderNewName(_ temporaryFile: String, _ destination: String) throws(PXError) -> String {
        let (stem, ext) = destination.hasSuffix(".dcm") ? (String(destination.dropLast(4)), ".dcm") : (destination, "")
        for n in 1...100_000 {
            let candidate = "\(stem)-\(n)\(ext)"
            if link(temporaryFile, candidate) == 0 { return candidate }
            if errno != EEXIST { throw .io("cannot store a duplicate (\(POSIX.errorText()))", path: candidate) }
        }
        throw .io("too many duplicates", path: destination)
    }

    /// `mkdir` each directory not made yet (a missing parent is made first: they come in order).
    private func ensure(_ directories: [String]) throws(PXError) {
        for directory in directories {
            if madeDirectories.withLock({ $0.contains(directory) }) { continue }
            if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory (\(POSIX.errorText()))", path: directory)
            }
            madeDirectories.withLock { _ = $0.insert(directory) }
        }
    }

    /// fsync(2) of a file or directory.
    static func flush(_ path: String) throws(PXError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open for fsync (\(POSIX.errorText()))", path: path) }
        defer { close(fd) }
        guard Glibc.fsync(fd) == 0 else { throw .io("fsync failed (\(POSIX.errorText()))", path: path) }
    }

    /// `mkdir -p`.
    public static func makeDirectories(_ path: String) throws(PXError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory (\(POSIX.errorText()))", path: current)
            }
        }
    }
}
