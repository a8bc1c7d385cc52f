#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Small POSIX file helpers for the data layer: whole-file and prefix reads, and writes.
public enum FileIO {
    /// Reads a whole file into an array, sized by `fstat` and filled by `pread`.
    public static func readAll(_ path: String) throws(DICOMDataError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat", path: path, errno: errno) }
        if (info.st_mode & S_IFMT) == S_IFDIR { throw .io("cannot read", path: path, errno: EISDIR) }
        return try readPrefix(fd, path: path, count: Int(info.st_size))
    }

    /// Reads up to `count` bytes from the start of an open file.
    static func readPrefix(_ fd: Int32, path: String, count: Int, from offset: Int = 0) throws(DICOMDataError)
        -> [UInt8]
    {
        var failure: POSIX.Failure?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else {
                initialized = 0
                return
            }
            do throws(POSIX.Failure) {
                initialized = try POSIX.readFully(fd, into: base, count: count, at: offset)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw .io("cannot read", path: path, errno: failure.code) }
        return bytes
    }

    /// Writes bytes to a new or truncated file.
    static func write(_ bytes: [UInt8], to path: String) throws(DICOMDataError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot create", path: path, errno: errno) }
        defer { close(fd) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                written += n
            }
        }
        if failure != 0 { throw .io("cannot write", path: path, errno: failure) }
    }
}
