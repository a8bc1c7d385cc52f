#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one reader of the small text files a user names (the config file, `--JSONargs FILE`, px-sync's
/// `--from-file`, a DICOMweb `credentials_file`): only a regular file, and at most a size cap, so that
/// `/dev/zero`, `/dev/urandom`, a FIFO with no writer or a directory is a usage error at once instead of a
/// process that grows without bound or hangs (issue 36).
public enum BoundedFile {
    /// The config file's cap: 1 MiB, far above any real config (a node is a few lines).
    public static let configLimit = 1 << 20
    /// `--JSONargs FILE`'s cap: 1 MiB (one JSON object of options).
    public static let argumentsLimit = 1 << 20
    /// px-sync `--from-file`'s cap: 64 MiB, a batch of about a million UIDs.
    public static let batchLimit = 64 << 20
    /// A DICOMweb credentials file's cap: 64 KiB (one line holding a token or `user:password`).
    public static let credentialsLimit = 64 << 10

    /// The text of the regular file at `path` (UTF-8, invalid bytes replaced), `nil` when there is no file there.
    ///
    /// The file is opened with `O_NONBLOCK` (opening a FIFO with no writer then returns at once) and checked with
    /// `fstat` before anything is read; the read stops one byte past `limit`, whatever the file's size said.
    /// - Parameters:
    ///   - path: the file.
    ///   - limit: the largest size accepted, in bytes.
    ///   - role: what the file is, for messages (`config file`, `--from-file`).
    /// - Throws: ``PXError/usage(_:)`` naming `role`, the path and the reason: not a regular file (a FIFO, a
    ///   device, a directory, a socket), larger than `limit`, or unreadable (permissions, I/O).
    public static func readText(_ path: String, limit: Int, role: String) throws(PXError) -> String? {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw .usage("\(role) \(path): cannot open: \(reason(code))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw .usage("\(role) \(path): cannot read: \(reason(errno))")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            throw .usage("\(role) \(path): not a regular file (\(describe(kind)))")
        }
        guard Int(info.st_size) <= limit else {
            throw .usage("\(role) \(path): larger than \(describe(bytes: limit)) (\(info.st_size) bytes)")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw .usage("\(role) \(path): cannot read: \(reason(code))")
            }
            if n == 0 { break }
            bytes += buffer[0..<n]
            // A file that grows while it is read (or lied about its size) is refused as well.
            if bytes.count > limit {
                throw .usage("\(role) \(path): larger than \(describe(bytes: limit))")
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `strerror`'s text for an errno value.
    static func reason(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// A file type (`st_mode & S_IFMT`) in words.
    static func describe(_ kind: mode_t) -> String {
        switch kind {
        case S_IFIFO: return "a FIFO"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFDIR: return "a directory"
        case S_IFSOCK: return "a socket"
        default: return "not a file"
        }
    }

    /// A cap in words: `1 MiB`, `64 KiB`, or bytes.
    static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20 && bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10 && bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }
}
