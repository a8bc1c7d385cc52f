#if canImport(Glibc)
    import Glibc
#endif

/// The commands' one reader of stdin (px-move and px-get read a px-find result from it).
public enum StandardInput {
    /// Whether stdin is a terminal (then nothing is piped in).
    public static var isTerminal: Bool { isatty(0) == 1 }

    /// Everything on stdin, up to its end, as UTF-8 text (invalid bytes replaced).
    public static func readText() -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(0, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
