import PXCore

#if canImport(Glibc)
    import Glibc
#endif

/// The TCP ports a process listens on, read from Linux's `/proc` without touching the sockets: the
/// socket inodes of `/proc/PID/fd` matched against the LISTEN entries of `/proc/net/tcp` and `tcp6`.
///
/// storescp logs nothing once it has bound its port, and a test connection would be an association
/// attempt in its log (and a TLS error with `+tls`); this tells when it accepts without either.
enum ListeningSockets {
    /// The ports `pid` has a listening TCP socket on (empty when it has none yet, or is gone).
    static func ports(ofProcess pid: Int32) -> Set<Int> {
        let inodes = socketInodes(ofProcess: pid)
        guard !inodes.isEmpty else { return [] }
        var ports = Set<Int>()
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for (inode, port) in listeningEntries(table: readText(table) ?? "") where inodes.contains(inode) {
                ports.insert(port)
            }
        }
        return ports
    }

    /// The `(inode, local port)` of each LISTEN (state `0A`) line of a `/proc/net/tcp` table:
    /// `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...`.
    static func listeningEntries(table: String) -> [(inode: UInt64, port: Int)] {
        var out: [(UInt64, Int)] = []
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9, fields[3] == "0A", let colon = fields[1].lastIndex(of: ":"),
                let port = Int(fields[1][fields[1].index(after: colon)...], radix: 16),
                let inode = UInt64(fields[9])
            else { continue }
            out.append((inode, port))
        }
        return out
    }

    /// The inodes of the sockets among `pid`'s open files (`socket:[INODE]` links).
    static func socketInodes(ofProcess pid: Int32) -> Set<UInt64> {
        let directory = "/proc/\(pid)/fd"
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var inodes = Set<UInt64>()
        var target = [CChar](repeating: 0, count: 64)
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard name != ".", name != ".." else { continue }
            let count = readlink("\(directory)/\(name)", &target, target.count - 1)
            guard count > 0 else { continue }
            let link = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard link.hasPrefix("socket:["), link.hasSuffix("]"),
                let inode = UInt64(link.dropFirst("socket:[".count).dropLast())
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// A small text file of `/proc` (its size is not known in advance: read to the end, at most 4 MiB).
    static func readText(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while bytes.count < 4 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
