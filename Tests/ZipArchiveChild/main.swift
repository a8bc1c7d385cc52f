import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

// The child ZipPlaceTests kills with SIGKILL while it archives: `zip-archive-child ROOT STUDY FILE...`
// archives FILEs of STUDY into the zip place at ROOT. Exit 0 when done, 1 with the error on stderr.
let arguments = CommandLine.arguments
/// Writes a line to standard error.
func complain(_ text: String) {
    let line = Array((text + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

guard arguments.count >= 4 else {
    complain("usage: zip-archive-child ROOT STUDY FILE...")
    exit(2)
}
do {
    let result = try ZipPlace(root: arguments[1]).archive(study: arguments[2], files: Array(arguments[3...]))
    print(result.path)
} catch {
    complain("\(error)")
    exit(1)
}
