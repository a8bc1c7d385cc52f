import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Gives a completely written temporary file its final name in the ``StorageLayout`` tree, atomically:
/// the final name either does not exist or names a complete file, never a partial one. Every file px
/// receives, whatever the backend, is placed here.
///
/// - The folders are opened from the root's descriptor without following links (``StorageRoot``):
///   a symbolic link anywhere inside the root (where a patient, study or series folder goes, or at the
///   final name) is an error, never a way out of the root.
/// - The temporary file must be on the same file system as the root (both backends write it under
///   ``StorageRoot/stagingFolder(_:)``): placing it is a `linkat(2)` (no-clobber) or, to replace the
///   same instance with ``DuplicatePolicy/overwrite``, a `renameat(2)`, both atomic and relative to
///   the folder's descriptor.
/// - A final name that already exists is compared by identity, the SOP Instance UID in the file's
///   header, never by name alone: only the same
///   instance is a duplicate for ``DuplicatePolicy/keep`` and ``DuplicatePolicy/overwrite``; a different
///   instance that the layout gives the same name (a template without `{SOPInstanceUID}`) is stored as
///   `<name>-1.dcm`, `<name>-2.dcm`, ... instead of being dropped. A link, folder or other non-regular
///   file at the final name is an error.
/// - With ``fsync`` the file is flushed before it is given its final name and its folder after, so a
///   placed file survives a power loss (the folders created on the way are not flushed).
public final class InstancePlacer: Sendable {
    /// The tree's root.
    public let storage: StorageRoot
    public let layout: StorageLayout
    public let duplicates: DuplicatePolicy
    public let fsync: Bool
    /// Told of each placement as it is made (``PlacementObserver``).
    public let observer: PlacementObserving?

    /// Names tried after the first for one instance (`-1` ... `-100000`).
    static let maximumAlternativeNames = 100_000

    /// The root's path.
    public var root: String { storage.path }

    /// Where an instance went.
    public struct Placement: Sendable, Hashable {
        /// The final path holding the instance (for a kept duplicate: the file already there).
        public var path: String
        /// The folders of each path component under the root (for the pypx layout: patient, study,
        /// series); the last is the file's folder.
        public var directories: [String]
        /// The same folders as names under the root (``StorageRoot/folder(_:create:)``).
        public var folders: [String]
        /// Set when the same instance was already stored: what was done.
        public var duplicate: DuplicatePolicy?
    }

    /// - Throws: ``StorageError`` when the root cannot be created or opened.
    public convenience init(
        root: String, layout: StorageLayout, duplicates: DuplicatePolicy, fsync: Bool,
        observer: PlacementObserving? = nil
    ) throws(StorageError) {
        self.init(
            storage: try StorageRoot(path: root), layout: layout, duplicates: duplicates, fsync: fsync,
            observer: observer)
    }

    public init(
        storage: StorageRoot, layout: StorageLayout, duplicates: DuplicatePolicy, fsync: Bool,
        observer: PlacementObserving? = nil
    ) {
        self.storage = storage
        self.layout = layout
        self.duplicates = duplicates
        self.fsync = fsync
        self.observer = observer
    }

    /// Places `temporaryFile` (a complete Part 10 file of `dataSet`); the temporary file is gone
    /// afterwards in every case.
    ///
    /// - Throws: ``StorageError/Code/unsafePath`` for a link or a non-folder where a folder goes or a
    ///   non-regular file at the final name; ``StorageError/Code/io`` when a folder cannot be made or
    ///   the file cannot be placed (disk full, read-only, permissions).
    public func place(temporaryFile: String, dataSet: DataSet) throws(StorageError) -> Placement {
        var source = TemporaryFile(path: temporaryFile)
        defer { source.removeIfStill() }
        let names = layout.components(for: dataSet)
        let folders = Array(names.dropLast())
        let fileName = names.last ?? "unknown.dcm"
        // One mode for every placed file, however it was made (mkstemp's 0600 included).
        guard chmod(temporaryFile, FileMode.placed) == 0 else {
            throw .io("cannot set the mode of the received file", path: temporaryFile, errno: errno)
        }
        if fsync { try Self.flush(path: temporaryFile) }
        let identity = dataSet.uid(.sopInstanceUID)
        var retried = false
        while true {
            let folder = try storage.folder(folders, create: true)
            let placed: (name: String, duplicate: DuplicatePolicy?)
            do {
                placed = try put(&source, into: folder, as: fileName, identity: identity)
            } catch {
                switch error {
                case .folderGone where !retried:
                    // A folder was removed since it was opened: forget it and open (make) it again.
                    retried = true
                    storage.forget(folders)
                    continue
                case .folderGone:
                    throw .io(
                        "cannot move the received file into place", path: folder.path + "/" + fileName, errno: ENOENT)
                case .failed(let failure):
                    throw failure
                }
            }
            if fsync { try Self.flush(descriptor: folder.descriptor, path: folder.path) }
            var directories: [String] = []
            directories.reserveCapacity(folders.count)
            var current = storage.path
            for part in folders {
                current += "/" + part
                directories.append(current)
            }
            let placement = Placement(
                path: folder.path + "/" + placed.name, directories: directories, folders: folders,
                duplicate: placed.duplicate)
            observer?.observer.placed(placement)
            return placement
        }
    }

    /// Why ``put(_:into:as:identity:)`` failed.
    private enum PutError: Error {
        /// `ENOENT` on the folder: it was removed after it was opened.
        case folderGone
        case failed(StorageError)
    }

    /// Links (or renames) the temporary file into `folder` under `name` or, if that is taken by another
    /// instance, the first alternative name free or holding the same instance.
    private func put(
        _ source: inout TemporaryFile, into folder: StorageRoot.Folder, as name: String, identity: [UInt8]?
    )
        throws(PutError) -> (name: String, duplicate: DuplicatePolicy?)
    {
        let (stem, ext) = name.hasSuffix(".dcm") ? (String(name.dropLast(4)), ".dcm") : (name, "")
        for n in 0...Self.maximumAlternativeNames {
            let candidate = n == 0 ? name : "\(stem)-\(n)\(ext)"
            let code = source.claim(candidate, in: folder)
            if code == 0 { return (candidate, n > 0 && duplicates == .rename ? .rename : nil) }
            if code == ENOENT { throw .folderGone }
            guard code == EEXIST else {
                throw .failed(
                    .io("cannot move the received file into place", path: folder.path + "/" + candidate, errno: code))
            }
            // Taken. rename: a new copy under the next free name, whatever is there.
            if duplicates == .rename { continue }
            switch try occupant(candidate, in: folder, identity: identity) {
            case .sameInstance:
                if duplicates == .keep { return (candidate, .keep) }
                let replaced = source.replace(candidate, in: folder)
                if replaced == 0 { return (candidate, .overwrite) }
                if replaced == ENOENT { throw .folderGone }
                throw .failed(
                    .io(
                        "cannot move the received file into place", path: folder.path + "/" + candidate, errno: replaced
                    ))
            case .otherInstance:
                continue
            case .removed:
                // Gone between the two calls: try the same name again once more.
                let code = source.claim(candidate, in: folder)
                if code == 0 { return (candidate, nil) }
                throw .failed(
                    .io("cannot move the received file into place", path: folder.path + "/" + candidate, errno: code))
            }
        }
        throw .failed(.io("too many files of that name", path: folder.path + "/" + name))
    }

    private enum Occupant {
        case sameInstance, otherInstance, removed
    }

    /// What is at `name`: the same instance (by SOP Instance UID), another one, or nothing any more.
    /// A file that cannot be read as DICOM counts as another instance: it is kept and not replaced.
    private func occupant(_ name: String, in folder: StorageRoot.Folder, identity: [UInt8]?) throws(PutError)
        -> Occupant
    {
        let path = folder.path + "/" + name
        // O_NONBLOCK: opening a FIFO planted there must not wait for a writer.
        let fd = openat(folder.descriptor, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        if fd < 0 {
            switch errno {
            case ENOENT: return .removed
            case ELOOP, ENXIO:
                throw .failed(.unsafePath("refusing a symbolic link or special file at the final name", path: path))
            case let code:
                throw .failed(.io("cannot read the file already at the final name", path: path, errno: code))
            }
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw .failed(.io("cannot read the file already at the final name", path: path, errno: errno))
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw .failed(.unsafePath("refusing a folder or special file at the final name", path: path))
        }
        guard let identity, !identity.isEmpty,
            let existing = StoredInstance.sopInstanceUID(descriptor: fd, size: Int(info.st_size)),
            existing == identity
        else { return .otherInstance }
        return .sameInstance
    }

    /// fsync(2) of a file by path.
    static func flush(path: String) throws(StorageError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open for fsync", path: path, errno: errno) }
        defer { close(fd) }
        try flush(descriptor: fd, path: path)
    }

    static func flush(descriptor: Int32, path: String) throws(StorageError) {
        guard Glibc.fsync(descriptor) == 0 else { throw .io("fsync failed", path: path, errno: errno) }
    }
}

/// The temporary file being placed: linked (it then still has to be removed) or renamed (consumed).
private struct TemporaryFile {
    let path: String
    private var consumed = false

    init(path: String) { self.path = path }

    /// Gives the file the name `name` in `folder` without replacing anything: `linkat(2)`, or on a file
    /// system without hard links an exists-check and `renameat(2)` (not race-free). 0 or an errno.
    mutating func claim(_ name: String, in folder: StorageRoot.Folder) -> Int32 {
        guard !consumed else { return EEXIST }
        if linkat(AT_FDCWD, path, folder.descriptor, name, 0) == 0 { return 0 }
        let code = errno
        guard code == EPERM || code == EOPNOTSUPP || code == EXDEV else { return code }
        var info = stat()
        if fstatat(folder.descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 { return EEXIST }
        if errno != ENOENT { return errno }
        return replace(name, in: folder)
    }

    /// Gives the file the name `name` in `folder`, replacing the file there: `renameat(2)`. 0 or an errno.
    mutating func replace(_ name: String, in folder: StorageRoot.Folder) -> Int32 {
        guard !consumed else { return EEXIST }
        guard renameat(AT_FDCWD, path, folder.descriptor, name) == 0 else { return errno }
        consumed = true
        return 0
    }

    func removeIfStill() {
        if !consumed { unlink(path) }
    }
}

/// Told of each instance an ``InstancePlacer`` places, once the file is complete at its final name: a zip
/// destination deflates it while the retrieval goes on (``ZipPrecompressor``).
public protocol PlacementObserver: AnyObject, Sendable {
    func placed(_ placement: InstancePlacer.Placement)
    /// Returns once the work the placements so far started is done (before their tree is removed).
    func waitUntilIdle()
}

/// An observer carried by value in a request (which is `Hashable`): equal when it is the same observer.
public struct PlacementObserving: Sendable, Hashable {
    public let observer: any PlacementObserver

    public init(_ observer: any PlacementObserver) { self.observer = observer }

    public static func == (a: Self, b: Self) -> Bool { a.observer === b.observer }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(observer)) }
}
