#if canImport(Glibc)
    import Glibc
#endif

/// The POSIX helpers every px target shares: errno texts, a whole-range `pread(2)`, the working directory.
///
/// px builds on Linux (Glibc); see Package.swift.
public enum POSIX {
    /// A failed system call's errno.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// The errno value.
        public let code: Int32

        /// The errno a call just set.
        public static func current() -> Failure { Failure(code: Glibc.errno) }

        /// `No such file or directory (errno 2)`.
        public var description: String { POSIX.errorText(self.code) }
    }

    /// The C library's text for an errno value, with the number: `No such file or directory (errno 2)`.
    public static func errorText(_ code: Int32 = errno) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return String(cString: text) + " (errno \(code))"
    }

    /// `pread(2)` until `count` bytes from `offset` are in `base` or the file ends, retrying on EINTR.
    ///
    /// - Returns: The bytes read: `count`, or fewer when the file ends first.
    public static func readFully(_ descriptor: Int32, into base: UnsafeMutableRawPointer, count: Int, at offset: Int)
        throws(Failure)
        -> Int
    {
        var done = 0
        while done < count {
            let n = pread(descriptor, base + done, count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .current()
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// The working directory (getcwd(3)), or `nil` when it cannot be named.
    public static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
