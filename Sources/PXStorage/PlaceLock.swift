import DICOMData
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The writer's lock of a place (a folder or a zip folder) for the length of a run: an advisory `flock(2)`
/// on `ROOT/.px/lock`, so two px-sync runs into one place take turns instead of rebuilding the same study
/// archive from what each read before the other wrote (a zip place), or planning against an index the
/// other is changing. The kernel drops the lock when its descriptor closes, so a writer killed with
/// `kill -9` never leaves the place locked.
///
/// Only runs that plan against what the place holds take it (px-sync into the place). px-listen and
/// px-serve, which place one received instance at a time (each placement atomic and checked by identity,
/// ``InstancePlacer``), do not, so they keep receiving beside a sync.
///
/// The lock file's folder is made when missing; a link at `.px` or at `lock` is refused, never followed.
public final class PlaceLock: Sendable {
    /// The lock file.
    public let path: String
    private let descriptor: Mutex<Int32?>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    /// The lock of the place at `root`, waiting up to `timeout` while another process holds it.
    ///
    /// - Parameters:
    ///   - onWait: Called once, when the lock is held by another process and the wait begins.
    ///   - pollInterval: How often the lock is tried again while another holds it (`flock` has no timed
    ///     form, and a blocked `flock` cannot be cancelled).
    /// - Throws: ``StorageError/Code/busy`` when the lock is still held after `timeout`;
    ///   ``StorageError/Code/unsafePath`` or ``StorageError/Code/io`` when the lock file cannot be opened.
    public static func acquire(
        root: String, timeout: Duration, pollInterval: Duration = .milliseconds(100), onWait: () -> Void = {}
    ) async throws(StorageError) -> PlaceLock {
        let lock = try open(root: root)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        var waiting = false
        while true {
            if lock.tryLock() { return lock }
            if clock.now >= deadline {
                lock.release()
                throw .busy("another px holds the place's lock (waited \(timeout))", path: lock.path)
            }
            if !waiting {
                waiting = true
                onWait()
            }
            do {
                try await Task.sleep(for: min(pollInterval, deadline - clock.now))
            } catch {
                lock.release()
                throw .busy("cancelled while waiting for the place's lock", path: lock.path)
            }
        }
    }

    /// Opens (making it when missing) `ROOT/.px/lock`, following no link.
    static func open(root: String) throws(StorageError) -> PlaceLock {
        let folder = root + "/.px"
        if mkdir(folder, 0o700) != 0 && errno != EEXIST {
            throw .io("cannot make the place's .px folder", path: folder, errno: errno)
        }
        let directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else {
            let code = errno
            if code == ELOOP || code == ENOTDIR { throw .unsafePath("not a folder (a link?)", path: folder) }
            throw .io("cannot open the place's .px folder", path: folder, errno: code)
        }
        defer { close(directory) }
        let path = folder + "/lock"
        let descriptor = openat(directory, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == ELOOP { throw .unsafePath("the lock file is a link", path: path) }
            throw .io("cannot open the place's lock file", path: path, errno: code)
        }
        return PlaceLock(path: path, descriptor: descriptor)
    }

    /// Takes the lock if no other open file description holds it.
    func tryLock() -> Bool {
        descriptor.withLock { descriptor in
            guard let descriptor else { return false }
            while true {
                if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return true }
                if errno != EINTR { return false }
            }
        }
    }

    /// Releases the lock (closing its descriptor); a second call does nothing.
    public func release() {
        descriptor.withLock { descriptor in
            if let open = descriptor { close(open) }
            descriptor = nil
        }
    }

    deinit { release() }
}
