#if canImport(Glibc)
    import Glibc
#endif

/// The POSIX helpers every px target shares: errno texts, a whole-range `pread(2)`, the working directory,
/// fresh temporary files and directories.
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

    /// A fresh file from `mkstemps(3)` (created exclusively, mode 0600) named `prefix`, six random
    /// characters, then `suffix`: `makeTemporaryFile(prefix: "/tmp/px-web-")` makes `/tmp/px-web-a1B2c3`.
    ///
    /// - Returns: The open descriptor (the caller closes it) and the file's path.
    public static func makeTemporaryFile(prefix: String, suffix: String = "") throws(Failure)
        -> (descriptor: Int32, path: String)
    {
        var template = Array((prefix + "XXXXXX" + suffix).utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer {
            mkstemps($0.baseAddress!, Int32(suffix.utf8.count))
        }
        guard descriptor >= 0 else { throw .current() }
        return (descriptor, Self.path(template))
    }

    /// A fresh directory from `mkdtemp(3)` (mode 0700) named `prefix` and six random characters.
    ///
    /// - Returns: The directory's path.
    public static func makeTemporaryDirectory(prefix: String) throws(Failure) -> String {
        var template = Array((prefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw .current() }
        return Self.path(template)
    }

    /// The path a filled-in template names, without its terminating NUL.
    private static func path(_ template: [CChar]) -> String {
        String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The working directory (getcwd(3)), or `nil` when it cannot be named.
    public static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
