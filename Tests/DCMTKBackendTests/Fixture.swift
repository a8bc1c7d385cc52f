import DCMTKBackend

/// A captured DCMTK run from Fixtures/ (copied from shared/reference/dcmtk-outputs): its exit code
/// and stderr lines.
struct Fixture {
    let exitCode: Int32
    let lines: [DCMTKLogLine]

    init(_ name: String, filePath: String = #filePath) throws {
        let dir = filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let text = try readText(dir + "/Fixtures/" + name)
        var exit: Int32 = -1
        var inStderr = !text.hasPrefix("$ ")  // a raw server log has no header
        var lines: [DCMTKLogLine] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("exit code: ") { exit = Int32(line.dropFirst("exit code: ".count)) ?? -1 }
            if line.hasPrefix("----- stderr") {
                inStderr = true
                continue
            }
            if line.hasPrefix("----- ") && !line.hasPrefix("----- stderr") {
                inStderr = false
                continue
            }
            if inStderr && !line.isEmpty { lines.append(DCMTKLogLine(line)) }
        }
        self.exitCode = exit
        self.lines = lines
    }
}

#if canImport(Glibc)
    import Glibc
#endif

struct FixtureMissing: Error { let path: String }

func readText(_ path: String) throws -> String {
    guard let f = fopen(path, "rb") else { throw FixtureMissing(path: path) }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
}
