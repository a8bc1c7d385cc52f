import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a zip archive (PKWARE APPNOTE 6.3.x) under a temporary name beside its final one and gives it the
/// final name only when it is complete: ``finish()`` flushes it (`fsync`), renames it over the final name
/// (`rename(2)`, atomic: the final name holds the old archive or the new one, never a part) and flushes the
/// folder. A run killed before that leaves a hidden `.<name>.partial-*` file, never a partial `.zip`.
///
/// Entries are streamed from files in chunks (CRC-32 and deflate as the bytes pass, never a whole file in
/// memory); each local header is written first and its CRC and sizes filled in afterwards (`pwrite`), so
/// the archive needs no data descriptors. Zip64 records (§4.5.3, §4.3.14) are written where a size or
/// offset passes 4 GiB or there are more than 65535 entries, and only then.
public final class ZipWriter {
    /// Where the archive goes when it is complete.
    public let path: String
    /// Where it is written meanwhile: `.<name>.partial-<pid>-<n>` in the same folder.
    public let temporaryPath: String
    private let descriptor: Int32
    private var offset: UInt64 = 0
    private var central: [UInt8] = []
    private var entryCount: UInt64 = 0
    private var names: Set<String> = []
    private var finished = false
    private let modified: DOSTimestamp
    private var buffer: [UInt8]
    /// The deflate level (zlib's 1 to 9).
    public let level: Int32
    /// Write Zip64 fields for every entry and the Zip64 end records, whatever the sizes (as `zip -fz`
    /// does): for readers that want them, and for testing the Zip64 paths without 4 GiB of data.
    public let alwaysZip64: Bool

    /// Entries larger than this get Zip64 sizes in their local header up front: a deflate stream can be a
    /// little larger than its input (5 bytes per 16 KiB block at worst), so the margin below 4 GiB is ample.
    static let zip64LocalThreshold: UInt64 = 0xFF00_0000

    /// Temporary names made by this process so far.
    private static let counter = ZipCounter()

    /// Opens `.<name>.partial-*` beside `path` for writing.
    ///
    /// - Parameter level: zlib's deflate level for ``ZipMethod/deflate`` entries (1 fastest, 9 smallest).
    /// - Throws: ``ZipError/Code/io`` when the folder is missing or not writable.
    ///   - alwaysZip64: Zip64 fields and records even where sizes and offsets fit 32 bits.
    public init(path: String, level: Int32 = 1, alwaysZip64: Bool = false) throws(ZipError) {
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard !name.isEmpty else { throw .io("no file name", path: path) }
        let n = Self.counter.next()
        self.path = path
        self.temporaryPath = folder + "/." + name + ".partial-\(getpid())-\(n)"
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { throw .io("cannot create the archive", path: temporaryPath, errno: errno) }
        self.descriptor = fd
        self.level = level
        self.alwaysZip64 = alwaysZip64
        self.modified = DOSTimestamp(seconds: time(nil))
        self.buffer = []
        self.buffer.reserveCapacity(Self.bufferSize)
    }

    deinit {
        if !finished {
            close(descriptor)
            unlink(temporaryPath)
        }
    }

    static let bufferSize = 1 << 20

    /// Adds the regular file at `source` as `name`, streamed in chunks.
    ///
    /// - Throws: ``ZipError/Code/io`` when it cannot be read or changes size meanwhile,
    ///   ``ZipError/Code/unsafeName`` / ``ZipError/Code/duplicateName`` for a name the reader would refuse.
    public func addFile(at source: String, as name: String, method: ZipMethod) throws(ZipError) {
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: source, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat", path: source, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .io("not a regular file", path: source) }
        try self.addFile(OpenedFile(descriptor: fd, size: Int(info.st_size), path: source), as: name, method: method)
    }

    /// Adds a file already open (one checked to be the file a place's index recorded, ``IndexedFile/open()``),
    /// read from its descriptor from its start, as `name`.
    public func addFile(_ file: OpenedFile, as name: String, method: ZipMethod) throws(ZipError) {
        let fd = file.descriptor
        let source = file.path
        let size = UInt64(file.size)
        var chunk = [UInt8](repeating: 0, count: Self.bufferSize)
        try addEntry(name: name, method: method, expectedSize: size) { (emit) throws(ZipError) in
            var total: UInt64 = 0
            while true {
                let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .io("cannot read", path: source, errno: errno)
                }
                total += UInt64(n)
                guard total <= size else { throw .io("file grew while it was archived", path: source) }
                try chunk.withBytes { buffer throws(ZipError) in
                    try emit(UnsafeRawBufferPointer(rebasing: buffer[..<n]), n == 0)
                }
                if n == 0 { break }
            }
            guard total == size else { throw .io("file shrank while it was archived", path: source) }
        }
    }

    /// Adds `bytes` as `name` (a small entry, such as a manifest).
    public func addData(_ bytes: [UInt8], as name: String, method: ZipMethod) throws(ZipError) {
        try addEntry(name: name, method: method, expectedSize: UInt64(bytes.count)) { (emit) throws(ZipError) in
            try bytes.withBytes { buffer throws(ZipError) in try emit(buffer, true) }
        }
    }

    /// Writes one entry: its local header with room for Zip64 sizes when `expectedSize` is near 4 GiB, the
    /// data `produce` emits (it calls `emit(chunk, isLast)`), then the CRC and sizes into the header.
    private func addEntry(
        name: String, method: ZipMethod, expectedSize: UInt64,
        produce: ((UnsafeRawBufferPointer, Bool) throws(ZipError) -> Void) throws(ZipError) -> Void
    ) throws(ZipError) {
        guard !finished else { throw .io("archive already finished", path: path) }
        guard ZipReader.isSafeName(name), !name.hasSuffix("/") else { throw .unsafeName(name, path: path) }
        guard names.insert(name).inserted else { throw .duplicateName(name, path: path) }
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= Int(ZipFormat.max16) else { throw .unsafeName(name, path: path) }
        let flags: UInt16 = nameBytes.allSatisfy({ $0 < 0x80 }) ? 0 : ZipFormat.flagUTF8
        let zip64Local = alwaysZip64 || expectedSize >= Self.zip64LocalThreshold
        let headerOffset = offset
        var version = method == .deflate ? ZipFormat.versionDeflate : ZipFormat.versionStored
        if zip64Local { version = ZipFormat.versionZip64 }

        try write(
            localHeader(
                nameBytes: nameBytes, flags: flags, method: method, version: version, zip64Local: zip64Local,
                crc: 0, compressed: 0, uncompressed: 0))
        let dataStart = offset

        var crc = ZipCRC32()
        var uncompressed: UInt64 = 0
        switch method {
        case .stored:
            try produce { (chunk, _) throws(ZipError) in
                crc.update(chunk)
                uncompressed += UInt64(chunk.count)
                try write(chunk)
            }
        case .deflate:
            let deflater = try ZipDeflater(level: level, path: path)
            try produce { (chunk, isLast) throws(ZipError) in
                crc.update(chunk)
                uncompressed += UInt64(chunk.count)
                try deflater.deflate(chunk, finish: isLast) { (out) throws(ZipError) in try write(out) }
            }
        }
        let compressed = offset - dataStart
        if !zip64Local && (compressed >= ZipFormat.max32 || uncompressed >= ZipFormat.max32) {
            throw .io("entry \(name) grew past 4 GiB while it was archived", path: path)
        }
        // Fill in the local header: CRC, and the sizes (in the Zip64 extra field when it has one).
        try flush()
        var fill: [UInt8] = []
        fill.appendLE(crc.value)
        if zip64Local {
            try pwriteAll(fill, at: headerOffset + 14)
            var sizes: [UInt8] = []
            sizes.appendLE(uncompressed)
            sizes.appendLE(compressed)
            try pwriteAll(sizes, at: headerOffset + UInt64(ZipFormat.localHeaderSize + nameBytes.count + 4))
        } else {
            fill.appendLE(UInt32(compressed))
            fill.appendLE(UInt32(uncompressed))
            try pwriteAll(fill, at: headerOffset + 14)
        }

        appendCentral(
            nameBytes: nameBytes, flags: flags, method: method, version: version, zip64Local: zip64Local,
            crc: crc.value, compressed: compressed, uncompressed: uncompressed, headerOffset: headerOffset)
    }

    /// Adds `entry` of another archive as it is stored (compressed bytes copied, not inflated again): the
    /// reader checks its local header; its CRC-32 is carried over.
    public func addCopy(of entry: ZipEntry, from reader: ZipReader) throws(ZipError) {
        guard !finished else { throw .io("archive already finished", path: path) }
        guard !entry.isDirectory else { return }
        guard names.insert(entry.name).inserted else { throw .duplicateName(entry.name, path: path) }
        let nameBytes = Array(entry.name.utf8)
        let flags: UInt16 = nameBytes.allSatisfy({ $0 < 0x80 }) ? 0 : ZipFormat.flagUTF8
        let zip64Local =
            entry.compressedSize >= ZipFormat.max32 || entry.uncompressedSize >= ZipFormat.max32
        let headerOffset = offset
        let version =
            zip64Local
            ? ZipFormat.versionZip64 : entry.method == .deflate ? ZipFormat.versionDeflate : ZipFormat.versionStored
        try write(
            localHeader(
                nameBytes: nameBytes, flags: flags, method: entry.method, version: version, zip64Local: zip64Local,
                crc: entry.crc32, compressed: entry.compressedSize, uncompressed: entry.uncompressedSize))
        let dataStart = offset
        try reader.readStored(entry) { (chunk) throws(ZipError) in try write(chunk) }
        guard offset - dataStart == entry.compressedSize else {
            throw .sizeMismatch("entry \(entry.name.debugDescription) copied short", path: reader.path)
        }
        appendCentral(
            nameBytes: nameBytes, flags: flags, method: entry.method, version: version, zip64Local: zip64Local,
            crc: entry.crc32, compressed: entry.compressedSize, uncompressed: entry.uncompressedSize,
            headerOffset: headerOffset)
    }

    /// A local file header (§4.3.7); with `zip64Local` the sizes go into a Zip64 extra field (§4.5.3).
    private func localHeader(
        nameBytes: [UInt8], flags: UInt16, method: ZipMethod, version: UInt16, zip64Local: Bool, crc: UInt32,
        compressed: UInt64, uncompressed: UInt64
    ) -> [UInt8] {
        var header: [UInt8] = []
        header.reserveCapacity(ZipFormat.localHeaderSize + nameBytes.count + 20)
        header.appendLE(ZipFormat.localHeaderSignature)
        header.appendLE(version)
        header.appendLE(flags)
        header.appendLE(method.rawValue)
        header.appendLE(modified.time)
        header.appendLE(modified.date)
        header.appendLE(crc)
        header.appendLE(zip64Local ? UInt32.max : UInt32(compressed))
        header.appendLE(zip64Local ? UInt32.max : UInt32(uncompressed))
        header.appendLE(UInt16(nameBytes.count))
        header.appendLE(UInt16(zip64Local ? 20 : 0))
        header += nameBytes
        if zip64Local {
            header.appendLE(ZipFormat.zip64ExtraID)
            header.appendLE(UInt16(16))
            header.appendLE(uncompressed)
            header.appendLE(compressed)
        }
        return header
    }

    /// Appends the central directory entry (§4.3.12), with a Zip64 extra field for what does not fit.
    private func appendCentral(
        nameBytes: [UInt8], flags: UInt16, method: ZipMethod, version: UInt16, zip64Local: Bool, crc: UInt32,
        compressed: UInt64, uncompressed: UInt64, headerOffset: UInt64
    ) {
        var extra: [UInt8] = []
        let bigUncompressed = alwaysZip64 || uncompressed >= ZipFormat.max32
        let bigCompressed = alwaysZip64 || compressed >= ZipFormat.max32
        let bigOffset = alwaysZip64 || headerOffset >= ZipFormat.max32
        if bigUncompressed { extra.appendLE(uncompressed) }
        if bigCompressed { extra.appendLE(compressed) }
        if bigOffset { extra.appendLE(headerOffset) }
        if !extra.isEmpty {
            extra = {
                var field: [UInt8] = []
                field.appendLE(ZipFormat.zip64ExtraID)
                field.appendLE(UInt16(extra.count))
                return field + extra
            }()
        }
        let needed = extra.isEmpty && !zip64Local ? version : ZipFormat.versionZip64
        central.appendLE(ZipFormat.centralHeaderSignature)
        central.appendLE(ZipFormat.versionMadeBy)
        central.appendLE(needed)
        central.appendLE(flags)
        central.appendLE(method.rawValue)
        central.appendLE(modified.time)
        central.appendLE(modified.date)
        central.appendLE(crc)
        central.appendLE(bigCompressed ? UInt32.max : UInt32(compressed))
        central.appendLE(bigUncompressed ? UInt32.max : UInt32(uncompressed))
        central.appendLE(UInt16(nameBytes.count))
        central.appendLE(UInt16(extra.count))
        central.appendLE(UInt16(0))  // comment length
        central.appendLE(UInt16(0))  // disk number start
        central.appendLE(UInt16(0))  // internal attributes
        central.appendLE(UInt32(0o100644) << 16)  // external attributes: a regular file, rw-r--r--
        central.appendLE(bigOffset ? UInt32.max : UInt32(headerOffset))
        central += nameBytes
        central += extra
        entryCount += 1
    }

    /// Writes the central directory and the end records, flushes the file, gives it its final name
    /// (replacing an older archive there atomically) and flushes the folder.
    ///
    /// - Parameter durable: `fsync` the archive before its rename and its folder after (off only where
    ///   durability does not matter, such as tests and scratch copies).
    public func finish(fsync durable: Bool = true) throws(ZipError) {
        guard !finished else { return }
        let centralOffset = offset
        try write(central)
        let centralSize = UInt64(central.count)
        central = []
        let zip64 =
            alwaysZip64 || entryCount >= ZipFormat.max16 || centralOffset >= ZipFormat.max32
            || centralSize >= ZipFormat.max32
        var end: [UInt8] = []
        if zip64 {
            let recordOffset = offset
            end.appendLE(ZipFormat.zip64EndSignature)
            end.appendLE(UInt64(ZipFormat.zip64EndSize - 12))
            end.appendLE(ZipFormat.versionMadeBy)
            end.appendLE(ZipFormat.versionZip64)
            end.appendLE(UInt32(0))  // this disk
            end.appendLE(UInt32(0))  // disk with the central directory
            end.appendLE(entryCount)
            end.appendLE(entryCount)
            end.appendLE(centralSize)
            end.appendLE(centralOffset)
            end.appendLE(ZipFormat.zip64LocatorSignature)
            end.appendLE(UInt32(0))
            end.appendLE(recordOffset)
            end.appendLE(UInt32(1))  // total disks
        }
        end.appendLE(ZipFormat.endSignature)
        end.appendLE(UInt16(0))
        end.appendLE(UInt16(0))
        end.appendLE(UInt16(min(entryCount, ZipFormat.max16)))
        end.appendLE(UInt16(min(entryCount, ZipFormat.max16)))
        end.appendLE(UInt32(min(centralSize, ZipFormat.max32)))
        end.appendLE(UInt32(min(centralOffset, ZipFormat.max32)))
        end.appendLE(UInt16(0))  // comment length
        try write(end)
        try flush()
        if durable && fsync(descriptor) != 0 { throw .io("fsync failed", path: temporaryPath, errno: errno) }
        guard close(descriptor) == 0 else {
            finished = true
            unlink(temporaryPath)
            throw .io("cannot close the archive", path: temporaryPath, errno: errno)
        }
        finished = true
        guard rename(temporaryPath, path) == 0 else {
            let code = errno
            unlink(temporaryPath)
            throw .io("cannot give the archive its name", path: path, errno: code)
        }
        guard durable else { return }
        let folder = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let fd = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open the folder for fsync", path: folder, errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io("fsync failed", path: folder, errno: errno) }
    }

    /// Stops without an archive: the temporary file is removed.
    public func abandon() {
        guard !finished else { return }
        finished = true
        close(descriptor)
        unlink(temporaryPath)
    }

    // MARK: Output

    private func write(_ bytes: [UInt8]) throws(ZipError) {
        try bytes.withBytes { raw throws(ZipError) in try write(raw) }
    }

    /// Appends through a 1 MiB buffer; a larger chunk goes straight to the file.
    private func write(_ bytes: UnsafeRawBufferPointer) throws(ZipError) {
        if buffer.count + bytes.count > Self.bufferSize { try flush() }
        if bytes.count >= Self.bufferSize {
            try writeAll(bytes)
        } else {
            buffer.append(contentsOf: bytes)
        }
        offset += UInt64(bytes.count)
    }

    private func flush() throws(ZipError) {
        guard !buffer.isEmpty else { return }
        try buffer.withBytes { raw throws(ZipError) in try writeAll(raw) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws(ZipError) {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot write the archive", path: temporaryPath, errno: errno)
            }
            done += n
        }
    }

    private func pwriteAll(_ bytes: [UInt8], at position: UInt64) throws(ZipError) {
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress!, $0.count, off_t(position)) }
        guard written == bytes.count else {
            throw .io("cannot write the archive", path: temporaryPath, errno: written < 0 ? errno : nil)
        }
    }
}
