import FuzzSupport
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

// Input: a whole zip archive (PKWARE APPNOTE 6.3.x), written to a scratch file and read by ZipReader.
//
// Invariants, for every archive the reader accepts (its central directory, then every entry read in full):
// - every name is safe to extract (relative, no `..`, no backslash, no control character);
// - no entry yields more bytes than its declared uncompressed size, and one read in full yields exactly it;
// - entries do not exceed the limits (so no archive, however small, makes the reader hold or produce more);
// - what the reader accepts, the writer writes again, and the reader reads back the same names and bytes.

private let limits = ZipLimits(
    maximumEntrySize: 1 << 20, maximumTotalSize: 4 << 20, maximumRatio: 200, ratioFloor: 64 << 10,
    maximumCentralDirectorySize: 1 << 20, maximumEntries: 4096)

/// A scratch folder in memory where there is one (/dev/shm), else in /tmp: the input is written there for
/// the reader, and the rewritten archive too.
private let scratch: String = {
    for base in ["/dev/shm", "/tmp"] {
        var template = Array("\(base)/fuzz-zip-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!).map { String(cString: $0) } }
        if let made { return made }
    }
    fatalError("fuzz-zip: no scratch folder")
}()
private let inputPath = scratch + "/input.zip"
private let input: Int32 = open(inputPath, O_RDWR | O_CREAT | O_TRUNC, 0o600)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzZip(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzCheck(input >= 0, "cannot create \(inputPath)")
    fuzzCheck(ftruncate(input, 0) == 0, "ftruncate failed")
    if let data, size > 0 { fuzzCheck(pwrite(input, data, size, 0) == size, "pwrite of the input failed") }

    let reader: ZipReader
    do { reader = try ZipReader(path: inputPath, limits: limits) } catch { return 0 }
    var total: UInt64 = 0
    var contents: [(ZipEntry, [UInt8])] = []
    for entry in reader.entries {
        fuzzCheck(ZipReader.isSafeName(entry.name), "unsafe name accepted: \(entry.name.debugDescription)")
        fuzzCheck(entry.uncompressedSize <= limits.maximumEntrySize, "entry past the size limit accepted")
        total += entry.uncompressedSize
        var bytes: [UInt8] = []
        do {
            try reader.read(entry) { chunk in
                bytes.append(contentsOf: chunk)
                fuzzCheck(UInt64(bytes.count) <= entry.uncompressedSize, "an entry yields more than it declares")
            }
        } catch {
            continue
        }
        fuzzCheck(UInt64(bytes.count) == entry.uncompressedSize, "an entry read in full differs from its size")
        contents.append((entry, bytes))
    }
    fuzzCheck(total <= limits.maximumTotalSize, "archive past the total limit accepted")

    // Written again by ZipWriter, read back the same.
    let path = scratch + "/again.zip"
    do {
        let writer = try ZipWriter(path: path)
        for (entry, bytes) in contents where !entry.isDirectory {
            try writer.addData(bytes, as: entry.name, method: entry.method)
        }
        try writer.finish(fsync: false)
        let again = try ZipReader(path: path, limits: ZipLimits())
        let files = contents.filter { !$0.0.isDirectory }
        fuzzCheck(again.entries.count == files.count, "rewritten archive has another entry count")
        for ((entry, bytes), copy) in zip(files, again.entries) {
            fuzzCheck(copy.name == entry.name, "rewritten entry has another name")
            let read = try again.contents(of: copy, maximumSize: 1 << 20)
            fuzzCheck(read == bytes, "rewritten entry has other bytes")
        }
    } catch {
        fuzzCheck(false, "the writer or reader refused what the reader accepted: \(error)")
    }
    unlink(path)
    return 0
}
