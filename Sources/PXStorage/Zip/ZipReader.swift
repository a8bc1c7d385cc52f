import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What reading an archive may cost, whatever it claims.
public struct ZipLimits: Sendable, Hashable {
    /// The largest entry, uncompressed.
    public var maximumEntrySize: UInt64
    /// The most all entries may hold together, uncompressed.
    public var maximumTotalSize: UInt64
    /// The most an entry may expand (uncompressed over compressed size) ...
    public var maximumRatio: UInt64
    /// ... once it is larger than this (small, repetitive entries compress well and are harmless).
    public var ratioFloor: UInt64
    /// The largest central directory read into memory, and so the most entries (46 bytes and a name each).
    public var maximumCentralDirectorySize: Int
    /// The most entries.
    public var maximumEntries: Int

    public init(
        maximumEntrySize: UInt64 = 8 << 30, maximumTotalSize: UInt64 = 256 << 30, maximumRatio: UInt64 = 200,
        ratioFloor: UInt64 = 16 << 20, maximumCentralDirectorySize: Int = 64 << 20, maximumEntries: Int = 1 << 20
    ) {
        self.maximumEntrySize = maximumEntrySize
        self.maximumTotalSize = maximumTotalSize
        self.maximumRatio = maximumRatio
        self.ratioFloor = ratioFloor
        self.maximumCentralDirectorySize = maximumCentralDirectorySize
        self.maximumEntries = maximumEntries
    }
}

/// One entry as the central directory describes it.
public struct ZipEntry: Sendable, Hashable {
    /// The entry's name, checked safe (``ZipReader/isSafeName(_:)``); a folder's ends in `/`.
    public let name: String
    public let method: ZipMethod
    public let crc32: UInt32
    public let compressedSize: UInt64
    public let uncompressedSize: UInt64
    /// Where its local header starts.
    let localHeaderOffset: UInt64
    /// Where the next entry (or the central directory) starts: its data must end before.
    let limit: UInt64
    let flags: UInt16

    public var isDirectory: Bool { name.hasSuffix("/") }
}

/// Reads a zip archive (PKWARE APPNOTE 6.3.x): the entries are listed from the central directory alone,
/// and an entry is streamed out in chunks with bounded memory, checked against what its headers declare.
///
/// An archive is refused with a named ``ZipError`` when it is truncated or malformed; holds an entry name
/// that could leave an extraction folder (`..`, absolute, backslash, drive letter, controls, invalid
/// UTF-8), two entries of one name, entries that share bytes or reach into the central directory (the
/// overlapping-entries bomb), an encrypted entry, a method other than stored or deflate, or sizes past
/// ``ZipLimits`` (a decompression bomb); when it is read, an entry whose local header disagrees with the
/// central directory, whose data is shorter or longer than declared, or whose CRC-32 differs.
public final class ZipReader: Sendable {
    public let path: String
    /// The entries in central directory order.
    public let entries: [ZipEntry]
    public let limits: ZipLimits
    private let descriptor: Int32
    private let byName: [String: Int]

    /// Opens `path` and reads its central directory.
    public convenience init(path: String, limits: ZipLimits = ZipLimits()) throws(ZipError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .io("cannot open the archive", path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw .io("not a regular file", path: path)
        }
        do {
            try self.init(descriptor: fd, size: UInt64(info.st_size), path: path, limits: limits)
        } catch {
            close(fd)
            throw error
        }
    }

    /// Reads the central directory of the open file `descriptor` of `size` bytes; the reader owns the
    /// descriptor from then on (it is closed when the reader goes, or here on failure by the caller).
    init(descriptor: Int32, size: UInt64, path: String, limits: ZipLimits) throws(ZipError) {
        self.path = path
        self.limits = limits
        self.descriptor = descriptor
        let directory = try Self.locateCentralDirectory(descriptor, size: size, path: path, limits: limits)
        let entries = try Self.parseCentralDirectory(directory, path: path, limits: limits)
        var byName: [String: Int] = [:]
        byName.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            guard byName.updateValue(index, forKey: entry.name) == nil else {
                throw .duplicateName(entry.name, path: path)
            }
        }
        self.entries = entries
        self.byName = byName
    }

    deinit { close(descriptor) }

    /// The entry named `name`.
    public func entry(named name: String) -> ZipEntry? {
        byName[name].map { entries[$0] }
    }

    // MARK: Names

    /// Whether an entry name stays inside the folder it is extracted into: relative, `/`-separated, no
    /// empty, `.` or `..` component (a trailing `/` marks a folder), no backslash, no drive letter, no NUL
    /// or control character.
    public static func isSafeName(_ name: String) -> Bool {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.contains("\\") else { return false }
        guard name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else { return false }
        let bytes = Array(name.utf8)
        if bytes.count >= 2, bytes[1] == UInt8(ascii: ":") { return false }  // C:...
        var components = name.split(separator: "/", omittingEmptySubsequences: false)
        if name.hasSuffix("/") { components.removeLast() }
        return !components.isEmpty && components.allSatisfy { !$0.isEmpty && $0 != "." && $0 != ".." }
    }

    // MARK: Central directory

    struct Directory {
        var bytes: [UInt8]
        var offset: UInt64
        var entryCount: UInt64
    }

    /// Finds the end of central directory record (and the Zip64 one it points to), checks that the
    /// directory lies inside the file just before them, and reads it.
    static func locateCentralDirectory(_ fd: Int32, size: UInt64, path: String, limits: ZipLimits) throws(ZipError)
        -> Directory
    {
        guard size >= UInt64(ZipFormat.endSize) else {
            throw .truncated("too short for an end of central directory record", path: path)
        }
        // The record is the last thing in the file but for its comment (at most 65535 bytes).
        let tailLength = Int(min(size, UInt64(ZipFormat.endSize) + ZipFormat.max16))
        let tailStart = size - UInt64(tailLength)
        let tail = try readExactly(fd, count: tailLength, at: tailStart, path: path)
        var endAt: Int?
        var candidate = tail.count - ZipFormat.endSize
        while candidate >= 0 {
            let fields = LittleEndianBytes(tail[candidate...])
            // The comment must run exactly to the end of the file.
            if fields.u32(0) == ZipFormat.endSignature
                && candidate + ZipFormat.endSize + Int(fields.u16(20)) == tail.count
            {
                endAt = candidate
                break
            }
            candidate -= 1
        }
        guard let endAt else {
            // A file that does not even start as a zip (a local header) is named as such.
            let start = try readExactly(fd, count: 4, at: 0, path: path)
            let isZip = LittleEndianBytes(start[...]).u32(0) == ZipFormat.localHeaderSignature
            throw .truncated(
                isZip ? "no end of central directory record" : "not a zip archive (no end of central directory record)",
                path: path)
        }
        let end = LittleEndianBytes(tail[endAt...])
        let endOffset = tailStart + UInt64(endAt)
        var disk = UInt32(end.u16(4))
        var centralDisk = UInt32(end.u16(6))
        var diskEntries = UInt64(end.u16(8))
        var entryCount = UInt64(end.u16(10))
        var centralSize = UInt64(end.u32(12))
        var centralOffset = UInt64(end.u32(16))
        var centralEnd = endOffset

        let wantsZip64 =
            entryCount == ZipFormat.max16 || diskEntries == ZipFormat.max16 || centralSize == ZipFormat.max32
            || centralOffset == ZipFormat.max32
        if endOffset >= UInt64(ZipFormat.zip64LocatorSize) {
            let locatorOffset = endOffset - UInt64(ZipFormat.zip64LocatorSize)
            let locatorBytes = try readExactly(fd, count: ZipFormat.zip64LocatorSize, at: locatorOffset, path: path)
            let locator = LittleEndianBytes(locatorBytes[...])
            if locator.u32(0) == ZipFormat.zip64LocatorSignature {
                let recordOffset = locator.u64(8)
                guard locator.u32(4) == 0, locator.u32(16) <= 1 else {
                    throw .unsupported("multi-disk archives are not supported", path: path)
                }
                guard recordOffset <= locatorOffset, locatorOffset - recordOffset >= UInt64(ZipFormat.zip64EndSize)
                else { throw .malformed("the Zip64 end record lies outside the file", path: path) }
                let recordBytes = try readExactly(fd, count: ZipFormat.zip64EndSize, at: recordOffset, path: path)
                let record = LittleEndianBytes(recordBytes[...])
                guard record.u32(0) == ZipFormat.zip64EndSignature,
                    record.u64(4) >= UInt64(ZipFormat.zip64EndSize - 12),
                    // Its size field counts what follows the first 12 bytes, up to the locator (no overflow:
                    // the difference is at least 56).
                    record.u64(4) == locatorOffset - recordOffset - 12
                else { throw .malformed("bad Zip64 end of central directory record", path: path) }
                disk = record.u32(16)
                centralDisk = record.u32(20)
                diskEntries = record.u64(24)
                entryCount = record.u64(32)
                centralSize = record.u64(40)
                centralOffset = record.u64(48)
                centralEnd = recordOffset
            } else if wantsZip64 {
                throw .malformed("Zip64 values without a Zip64 end of central directory locator", path: path)
            }
        } else if wantsZip64 {
            throw .malformed("Zip64 values without a Zip64 end of central directory locator", path: path)
        }
        guard disk == 0, centralDisk == 0, diskEntries == entryCount else {
            throw .unsupported("multi-disk archives are not supported", path: path)
        }
        guard centralOffset <= centralEnd, centralEnd - centralOffset >= centralSize else {
            throw .truncated(
                "the central directory (\(centralSize) bytes at \(centralOffset)) is bigger than the file before its end record",
                path: path)
        }
        guard centralOffset + centralSize == centralEnd else {
            throw .malformed("bytes between the central directory and its end record", path: path)
        }
        guard centralSize <= UInt64(limits.maximumCentralDirectorySize) else {
            throw .tooLarge(
                "central directory of \(centralSize) bytes (limit \(limits.maximumCentralDirectorySize))", path: path)
        }
        guard entryCount <= UInt64(limits.maximumEntries) else {
            throw .tooLarge("\(entryCount) entries (limit \(limits.maximumEntries))", path: path)
        }
        guard entryCount * UInt64(ZipFormat.centralHeaderSize) <= centralSize else {
            throw .malformed("\(entryCount) entries cannot fit a central directory of \(centralSize) bytes", path: path)
        }
        let bytes = try readExactly(fd, count: Int(centralSize), at: centralOffset, path: path)
        return Directory(bytes: bytes, offset: centralOffset, entryCount: entryCount)
    }

    /// Parses every central directory header, checks names, methods, encryption and limits, and bounds
    /// each entry by the next one's local header (entries sorted by offset must not share bytes).
    static func parseCentralDirectory(_ directory: Directory, path: String, limits: ZipLimits) throws(ZipError)
        -> [ZipEntry]
    {
        struct Parsed {
            var name: String
            var method: ZipMethod
            var crc: UInt32
            var compressed: UInt64
            var uncompressed: UInt64
            var offset: UInt64
            var flags: UInt16
            var nameLength: Int
        }
        var parsed: [Parsed] = []
        parsed.reserveCapacity(Int(directory.entryCount))
        let bytes = directory.bytes
        var at = 0
        var total: UInt64 = 0
        for _ in 0..<directory.entryCount {
            guard bytes.count - at >= ZipFormat.centralHeaderSize else {
                throw .truncated("the central directory ends inside an entry", path: path)
            }
            let h = LittleEndianBytes(bytes[at...])
            guard h.u32(0) == ZipFormat.centralHeaderSignature else {
                throw .malformed("bad central directory header signature at entry \(parsed.count)", path: path)
            }
            let flags = h.u16(8)
            let methodValue = h.u16(10)
            let crc = h.u32(16)
            var compressed = UInt64(h.u32(20))
            var uncompressed = UInt64(h.u32(24))
            let nameLength = Int(h.u16(28))
            let extraLength = Int(h.u16(30))
            let commentLength = Int(h.u16(32))
            var diskStart = UInt32(h.u16(34))
            var offset = UInt64(h.u32(42))
            let variable = nameLength + extraLength + commentLength
            guard bytes.count - at - ZipFormat.centralHeaderSize >= variable else {
                throw .truncated("the central directory ends inside an entry", path: path)
            }
            let nameStart = at + ZipFormat.centralHeaderSize
            let nameBytes = bytes[nameStart..<(nameStart + nameLength)]
            guard let name = String(validating: nameBytes, as: UTF8.self), isSafeName(name) else {
                throw .unsafeName(String(decoding: nameBytes, as: UTF8.self), path: path)
            }
            // Zip64 extended information (§4.5.3): the fields whose header value is all ones, in order.
            let extra = bytes[(nameStart + nameLength)..<(nameStart + nameLength + extraLength)]
            if uncompressed == ZipFormat.max32 || compressed == ZipFormat.max32 || offset == ZipFormat.max32
                || diskStart == UInt32(ZipFormat.max16)
            {
                guard let field = zip64Field(in: extra) else {
                    throw .malformed("entry \(name.debugDescription) lacks its Zip64 extra field", path: path)
                }
                var cursor = 0
                func next8() throws(ZipError) -> UInt64 {
                    guard field.count - cursor >= 8 else {
                        throw .malformed("entry \(name.debugDescription): short Zip64 extra field", path: path)
                    }
                    defer { cursor += 8 }
                    return LittleEndianBytes(field).u64(cursor)
                }
                if uncompressed == ZipFormat.max32 { uncompressed = try next8() }
                if compressed == ZipFormat.max32 { compressed = try next8() }
                if offset == ZipFormat.max32 { offset = try next8() }
                if diskStart == UInt32(ZipFormat.max16) {
                    guard field.count - cursor >= 4 else {
                        throw .malformed("entry \(name.debugDescription): short Zip64 extra field", path: path)
                    }
                    diskStart = LittleEndianBytes(field).u32(cursor)
                }
            }
            guard diskStart == 0 else { throw .unsupported("multi-disk archives are not supported", path: path) }
            if flags & (ZipFormat.flagEncrypted | ZipFormat.flagStrongEncryption | ZipFormat.flagMaskedHeaders) != 0 {
                throw .encrypted(name, path: path)
            }
            guard let method = ZipMethod(rawValue: methodValue) else {
                throw .unsupported("entry \(name.debugDescription) uses compression method \(methodValue)", path: path)
            }
            if method == .stored && compressed != uncompressed {
                throw .sizeMismatch("stored entry \(name.debugDescription) has two different sizes", path: path)
            }
            guard uncompressed <= limits.maximumEntrySize else {
                throw .tooLarge(
                    "entry \(name.debugDescription) of \(uncompressed) bytes (limit \(limits.maximumEntrySize))",
                    path: path)
            }
            if uncompressed > limits.ratioFloor && uncompressed / max(compressed, 1) > limits.maximumRatio {
                throw .tooLarge(
                    "entry \(name.debugDescription) expands more than \(limits.maximumRatio) times (a decompression bomb?)",
                    path: path)
            }
            total += uncompressed
            guard total <= limits.maximumTotalSize else {
                throw .tooLarge("the entries hold more than \(limits.maximumTotalSize) bytes", path: path)
            }
            if name.hasSuffix("/") && uncompressed != 0 {
                throw .malformed("folder entry \(name.debugDescription) has data", path: path)
            }
            parsed.append(
                Parsed(
                    name: name, method: method, crc: crc, compressed: compressed, uncompressed: uncompressed,
                    offset: offset, flags: flags, nameLength: nameLength))
            at = nameStart + variable
        }
        guard at == bytes.count else { throw .malformed("bytes left over in the central directory", path: path) }

        // Each entry's local header, name and data must end before the next entry starts.
        let order = parsed.indices.sorted { parsed[$0].offset < parsed[$1].offset }
        var limitsByIndex = [UInt64](repeating: 0, count: parsed.count)
        for (rank, index) in order.enumerated() {
            let entry = parsed[index]
            let limit = rank + 1 < order.count ? parsed[order[rank + 1]].offset : directory.offset
            let (afterHeader, o1) = entry.offset.addingReportingOverflow(
                UInt64(ZipFormat.localHeaderSize + entry.nameLength))
            let (afterData, o2) = afterHeader.addingReportingOverflow(entry.compressed)
            guard !o1, !o2, afterData <= limit else { throw .overlapping(entry.name, path: path) }
            limitsByIndex[index] = limit
        }
        return parsed.indices.map { i in
            let p = parsed[i]
            return ZipEntry(
                name: p.name, method: p.method, crc32: p.crc, compressedSize: p.compressed,
                uncompressedSize: p.uncompressed, localHeaderOffset: p.offset, limit: limitsByIndex[i], flags: p.flags)
        }
    }

    /// The data of the Zip64 extended information field in an extra field, if it has one.
    static func zip64Field(in extra: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        var at = extra.startIndex
        while extra.endIndex - at >= 4 {
            let header = LittleEndianBytes(extra[at...])
            let id = header.u16(0)
            let length = Int(header.u16(2))
            guard extra.endIndex - at - 4 >= length else { return nil }
            if id == ZipFormat.zip64ExtraID { return extra[(at + 4)..<(at + 4 + length)] }
            at += 4 + length
        }
        return nil
    }

    // MARK: Entries

    /// Streams `entry`'s uncompressed bytes to `sink` in chunks of at most 256 KiB (valid during the call
    /// only), checking the local header, the sizes and the CRC-32. Memory stays bounded whatever the entry
    /// holds or claims; a failure may come after some chunks were handed out, so a caller writing them
    /// somewhere keeps the result only when this returns.
    public func read(_ entry: ZipEntry, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void) throws(ZipError) {
        let dataStart = try checkLocalHeader(entry)
        var crc = ZipCRC32()
        var produced: UInt64 = 0
        func counted(_ chunk: UnsafeRawBufferPointer) throws(ZipError) {
            crc.update(chunk)
            produced += UInt64(chunk.count)
            try sink(chunk)
        }
        let inflater: ZipInflater? =
            entry.method == .deflate
            ? try ZipInflater(name: entry.name, expectedOutput: entry.uncompressedSize, path: path) : nil
        try readRange(dataStart, count: entry.compressedSize, name: entry.name) { (piece, isLast) throws(ZipError) in
            if let inflater {
                try inflater.inflate(piece, isLast: isLast, sink: counted)
            } else {
                try counted(piece)
            }
            return true
        }
        guard produced == entry.uncompressedSize else {
            throw .sizeMismatch(
                "entry \(entry.name.debugDescription) holds \(produced) bytes, not the \(entry.uncompressedSize) declared",
                path: path)
        }
        guard crc.value == entry.crc32 else {
            throw .checksum("entry \(entry.name.debugDescription) fails its CRC-32 check", path: path)
        }
    }

    /// Streams `entry`'s data as it is stored (compressed, unchecked but for its local header and bounds),
    /// for copying it into another archive.
    func readStored(_ entry: ZipEntry, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void) throws(ZipError) {
        let dataStart = try checkLocalHeader(entry)
        try readRange(dataStart, count: entry.compressedSize, name: entry.name) { (piece, _) throws(ZipError) in
            try sink(piece)
            return true
        }
    }

    /// The first `count` uncompressed bytes of `entry` (all of them, CRC-checked, when it holds no more): what a
    /// header read needs, without inflating the rest. Memory stays bounded by `count` and one chunk; the bytes
    /// of a prefix cannot be checked against the CRC-32, which covers the whole entry.
    public func prefix(of entry: ZipEntry, count: Int) throws(ZipError) -> [UInt8] {
        if UInt64(count) >= entry.uncompressedSize { return try contents(of: entry, maximumSize: count) }
        let dataStart = try checkLocalHeader(entry)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        func take(_ chunk: UnsafeRawBufferPointer) {
            bytes.append(contentsOf: chunk.prefix(count - bytes.count))
        }
        let inflater: ZipInflater? =
            entry.method == .deflate
            ? try ZipInflater(name: entry.name, expectedOutput: entry.uncompressedSize, path: path) : nil
        try readRange(dataStart, count: entry.compressedSize, name: entry.name) { (piece, isLast) throws(ZipError) in
            if let inflater {
                try inflater.inflate(piece, isLast: isLast) { (chunk) throws(ZipError) in take(chunk) }
            } else {
                take(piece)
            }
            return bytes.count < count
        }
        guard bytes.count == count else {
            throw .sizeMismatch(
                "entry \(entry.name.debugDescription) holds fewer bytes than the \(entry.uncompressedSize) declared",
                path: path)
        }
        return bytes
    }

    /// Reads `count` bytes from `start` in chunks of 256 KiB; `body(chunk, isLast)` returns whether to go on.
    private func readRange(
        _ start: UInt64, count total: UInt64, name: String,
        body: (UnsafeRawBufferPointer, Bool) throws(ZipError) -> Bool
    ) throws(ZipError) {
        var chunk = [UInt8](repeating: 0, count: 256 * 1024)
        var position = start
        let end = start + total
        repeat {
            let count = Int(min(UInt64(chunk.count), end - position))
            let n = try Self.read(descriptor, into: &chunk, count: count, at: position, path: path)
            guard n == count else { throw .truncated("entry \(name.debugDescription) is cut short", path: path) }
            position += UInt64(n)
            let goOn = try chunk.withBytes { buffer throws(ZipError) in
                try body(UnsafeRawBufferPointer(rebasing: buffer[..<n]), position == end)
            }
            if !goOn { return }
        } while position < end
    }

    /// The whole of a small entry, refused when it declares more than `maximumSize` bytes.
    public func contents(of entry: ZipEntry, maximumSize: Int = 16 << 20) throws(ZipError) -> [UInt8] {
        guard entry.uncompressedSize <= UInt64(maximumSize) else {
            throw .tooLarge("entry \(entry.name.debugDescription) is larger than \(maximumSize) bytes", path: path)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(entry.uncompressedSize))
        try read(entry) { (chunk) throws(ZipError) in bytes.append(contentsOf: chunk) }
        return bytes
    }

    /// Writes `entry` to a new file at `destination` (`O_EXCL`: never over an existing file or through a
    /// link), flushed with `fsync` when asked; on any failure the file is removed.
    public func extract(_ entry: ZipEntry, to destination: String, fsync flush: Bool = false) throws(ZipError) {
        let fd = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io("cannot create", path: destination, errno: errno) }
        var done = false
        defer {
            close(fd)
            if !done { unlink(destination) }
        }
        try read(entry) { (chunk) throws(ZipError) in
            var written = 0
            while written < chunk.count {
                let n = write(fd, chunk.baseAddress! + written, chunk.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .io("cannot write", path: destination, errno: errno)
                }
                written += n
            }
        }
        if flush && fsync(fd) != 0 { throw .io("fsync failed", path: destination, errno: errno) }
        done = true
    }

    /// Checks the local header against the central directory and returns where the data starts.
    private func checkLocalHeader(_ entry: ZipEntry) throws(ZipError) -> UInt64 {
        let header = try Self.readExactly(
            descriptor, count: ZipFormat.localHeaderSize, at: entry.localHeaderOffset, path: path)
        let h = LittleEndianBytes(header[...])
        guard h.u32(0) == ZipFormat.localHeaderSignature else {
            throw .malformed("entry \(entry.name.debugDescription): bad local header signature", path: path)
        }
        let flags = h.u16(6)
        guard flags & ZipFormat.flagEncrypted == 0 else { throw .encrypted(entry.name, path: path) }
        guard h.u16(8) == entry.method.rawValue else {
            throw .malformed("entry \(entry.name.debugDescription): local header has another method", path: path)
        }
        let nameLength = Int(h.u16(26))
        let extraLength = Int(h.u16(28))
        let dataStart = entry.localHeaderOffset + UInt64(ZipFormat.localHeaderSize + nameLength + extraLength)
        guard dataStart + entry.compressedSize <= entry.limit else { throw .overlapping(entry.name, path: path) }
        let variable = try Self.readExactly(
            descriptor, count: nameLength + extraLength,
            at: entry.localHeaderOffset + UInt64(ZipFormat.localHeaderSize), path: path)
        guard variable[..<nameLength].elementsEqual(entry.name.utf8) else {
            throw .malformed("entry \(entry.name.debugDescription): local header names another file", path: path)
        }
        // Sizes and CRC in the local header must agree, unless a data descriptor carries them (§4.4.4 bit 3).
        if flags & ZipFormat.flagDataDescriptor == 0 {
            var compressed = UInt64(h.u32(18))
            var uncompressed = UInt64(h.u32(22))
            if compressed == ZipFormat.max32 || uncompressed == ZipFormat.max32 {
                guard let field = Self.zip64Field(in: variable[nameLength...]), field.count >= 16 else {
                    throw .malformed("entry \(entry.name.debugDescription): local Zip64 field missing", path: path)
                }
                uncompressed = LittleEndianBytes(field).u64(0)
                compressed = LittleEndianBytes(field).u64(8)
            }
            guard h.u32(14) == entry.crc32, compressed == entry.compressedSize,
                uncompressed == entry.uncompressedSize
            else {
                throw .sizeMismatch(
                    "entry \(entry.name.debugDescription): local header disagrees with the central directory",
                    path: path)
            }
        }
        return dataStart
    }

    static func readExactly(_ fd: Int32, count: Int, at offset: UInt64, path: String) throws(ZipError) -> [UInt8] {
        guard count > 0 else { return [] }
        guard offset <= UInt64(Int.max - count) else { throw .truncated("offset past the end of the file", path: path) }
        var bytes = [UInt8](repeating: 0, count: count)
        guard try read(fd, into: &bytes, count: count, at: offset, path: path) == count else {
            throw .truncated("the archive ends early", path: path)
        }
        return bytes
    }

    /// `pread` of up to `count` bytes at `offset` into the start of `buffer`: how many there were.
    private static func read(_ fd: Int32, into buffer: inout [UInt8], count: Int, at offset: UInt64, path: String)
        throws(ZipError) -> Int
    {
        let got = buffer.withUnsafeMutableBytes { raw in
            Result { () throws(POSIX.Failure) in
                try POSIX.readFully(fd, into: raw.baseAddress!, count: count, at: Int(offset))
            }
        }
        switch got {
        case .success(let n): return n
        case .failure(let failure): throw .io("cannot read the archive", path: path, errno: failure.code)
        }
    }
}
