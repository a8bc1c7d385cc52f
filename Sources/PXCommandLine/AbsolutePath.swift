#if canImport(Glibc)
import Glibc
#endif

/// A path from the command line made absolute against the current directory (px-get's and
/// px-listen's storage root, reported in their output and given to the hook).
public func absolutePath(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "./" + path }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/" + path
}
