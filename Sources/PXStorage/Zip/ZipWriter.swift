import CLinuxIO
import DICOMData
import Dispatch
import Synchronization

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
/// the archive needs no data descriptors. ``addFiles(_:workers:)`` deflates several entries at once on other
/// threads, and takes entries deflated beforehand (``ZipPrecompressor``): those headers are complete at once.
/// Zip64 records (§4.5.3, §4.3.14) are written where a size or offset passes 4 GiB or there are more than
/// 65535 entries, and only then.
///
/// Every ``writebackBytes`` appended, the writer asks the kernel to start writing them to disk (Linux's
/// `sync_file_range(2)`, without waiting), so that the disk works while the rest is written and the final
/// `fsync` waits only for the last of it.
public final class ZipWriter {
    /// Where the archive goes when it is complete.
    public let path: String
    /// Where it is written meanwhile: `.<name>.partial-<pid>-<n>` in the same folder.
    public let temporaryPath: String
    private let descriptor: Int32
    private var offset: UInt64 = 0
    /// Bytes appended to the file so far (``offset`` less what is still buffered).
    private var appended: UInt64 = 0
    /// Where the range not yet handed to early writeback starts.
    private var writebackFrom: UInt64 = 0
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
    ///
    /// - Parameter bulkAfter: Deflate with `Z_RLE` past this many bytes (``ZipDeflater``): for an image, whose
    ///   bulk is pixel data; `nil` for the default strategy throughout.
    public func addFile(at source: String, as name: String, method: ZipMethod, bulkAfter: Int? = nil)
        throws(ZipError)
    {
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: source, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat", path: source, errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .io("not a regular file", path: source) }
        try self.addFile(
            OpenedFile(descriptor: fd, size: Int(info.st_size), path: source), as: name, method: method,
            bulkAfter: bulkAfter)
    }

    /// Adds a file already open (one checked to be the file a place's index recorded, ``IndexedFile/open()``),
    /// read from its descriptor from its start, as `name`.
    public func addFile(_ file: OpenedFile, as name: String, method: ZipMethod, bulkAfter: Int? = nil)
        throws(ZipError)
    {
        var chunk = [UInt8](repeating: 0, count: Self.bufferSize)
        try addEntry(name: name, method: method, expectedSize: UInt64(file.size), bulkAfter: bulkAfter) {
            (emit) throws(ZipError) in
            try Self.read(file, through: &chunk, emit: emit)
        }
    }

    /// Reads `file` from its start in `chunk`-sized pieces, handing each to `emit(piece, isLast)` (the last an
    /// empty one), and checks it ends at the size it had when opened.
    static func read(
        _ file: OpenedFile, through chunk: inout [UInt8],
        emit: (UnsafeRawBufferPointer, Bool) throws(ZipError) -> Void
    ) throws(ZipError) {
        let size = UInt64(file.size)
        var total: UInt64 = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(file.descriptor, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot read", path: file.path, errno: errno)
            }
            total += UInt64(n)
            guard total <= size else { throw .io("file grew while it was archived", path: file.path) }
            try chunk.withBytes { buffer throws(ZipError) in
                try emit(UnsafeRawBufferPointer(rebasing: buffer[..<n]), n == 0)
            }
            if n == 0 { break }
        }
        guard total == size else { throw .io("file shrank while it was archived", path: file.path) }
    }

    // MARK: Deflating on several cores

    /// A file for ``addFiles(_:workers:)``: its entry name and method, and how to open it.
    public struct PendingFile {
        public var name: String
        public var method: ZipMethod
        public var open: () throws(ZipError) -> OpenedFile
        /// The file deflated already (``ZipPrecompressor``): its entry is copied from there when the file
        /// opens at the size that was deflated.
        public var spooled: ZipPrecompressor.Spooled?
        /// As ``ZipWriter/addFile(at:as:method:bulkAfter:)``'s.
        public var bulkAfter: Int?

        public init(
            name: String, method: ZipMethod, bulkAfter: Int? = nil, spooled: ZipPrecompressor.Spooled? = nil,
            open: @escaping () throws(ZipError) -> OpenedFile
        ) {
            self.name = name
            self.method = method
            self.bulkAfter = bulkAfter
            self.spooled = spooled
            self.open = open
        }

        /// Whether its spool file is what its entry takes.
        func usesSpool(_ opened: OpenedFile) -> Bool {
            guard let spooled, method == .deflate else { return false }
            return spooled.uncompressedSize == UInt64(opened.size)
        }
    }

    /// An entry deflated in memory by a worker: what its headers need, and its compressed bytes.
    struct Deflated {
        var crc: UInt32
        var uncompressed: UInt64
        var bytes: [UInt8]
    }

    /// Where the workers of a batch leave their entries, one slot each.
    final class DeflatedSlots: Sendable {
        private let slots: Mutex<[Result<Deflated, ZipError>?]>

        init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

        func set(_ index: Int, _ result: Result<Deflated, ZipError>) { slots.withLock { $0[index] = result } }

        /// The slot's result, emptied (its bytes are not held twice while they are written).
        func take(_ index: Int) -> Result<Deflated, ZipError>? {
            slots.withLock { slots in
                defer { slots[index] = nil }
                return slots[index]
            }
        }
    }

    /// At most this many bytes of files are deflated in memory at once (a batch); a larger file is deflated
    /// alone, streamed to the archive as ``addFile(_:as:method:)`` does.
    static let batchBytes = 64 << 20

    /// Adds `files` in order, as ``addFile(_:as:method:)`` would one by one, with up to `workers` of the
    /// entries to deflate compressed at once on other threads (one worker per entry; the entries of a batch,
    /// at most `2 × workers` files and ``batchBytes`` bytes, are held compressed in memory until they are
    /// written). Every entry whose size is known then (stored, deflated by a worker, spooled) is written at
    /// its own offset by up to one thread per core at once (``writeRun(_:)``); an entry left to deflate (the
    /// one of its batch, or a file larger than a batch) is streamed on this thread. The archive is the same
    /// as one written entry by entry, byte for byte.
    public func addFiles(_ files: [PendingFile], workers: Int) throws(ZipError) {
        let perBatch = Swift.max(1, workers) * 2
        var next = 0
        while next < files.count {
            // Open a batch here (a place's open checks its index; one thread does that).
            var batch: [(file: PendingFile, opened: OpenedFile)] = []
            defer { for item in batch { item.opened.close() } }
            var bytes = 0
            while next < files.count && batch.count < perBatch {
                let opened = try files[next].open()
                batch.append((files[next], opened))
                next += 1
                bytes += opened.size
                if bytes >= Self.batchBytes { break }
            }
            let parallel = batch.map {
                $0.file.method == .deflate && $0.opened.size < Self.batchBytes && !$0.file.usesSpool($0.opened)
            }
            let results = DeflatedSlots(count: batch.count)
            if parallel.filter({ $0 }).count > 1 {
                let level = self.level
                let path = self.path
                let opened = batch.map(\.opened)
                let bulk = batch.map(\.file.bulkAfter)
                DispatchQueue.concurrentPerform(iterations: opened.count) { index in
                    guard parallel[index] else { return }
                    do throws(ZipError) {
                        let entry = try Self.deflated(opened[index], level: level, bulkAfter: bulk[index], path: path)
                        results.set(index, .success(entry))
                    } catch {
                        results.set(index, .failure(error))
                    }
                }
            }
            // Entries whose size is known now are laid out and written at once, a run at a time; an entry to
            // deflate while it is written (a file larger than a batch) ends a run and is streamed alone.
            var run: [PlacedEntry] = []
            for (index, item) in batch.enumerated() {
                let source: PlacedEntry.Source
                if item.file.usesSpool(item.opened), let spooled = item.file.spooled {
                    source = .spooled(spooled)
                } else if let result = results.take(index) {
                    source = .deflated(try result.get())
                } else if item.file.method == .stored {
                    source = .stored(item.opened)
                } else {
                    try writeRun(run)
                    run = []
                    try addFile(
                        item.opened, as: item.file.name, method: item.file.method, bulkAfter: item.file.bulkAfter)
                    continue
                }
                run.append(try place(source, as: item.file.name))
            }
            try writeRun(run)
        }
    }

    /// An entry of ``addFiles(_:workers:)`` whose size is known before its bytes are written: its place in
    /// the archive, and where its bytes come from.
    struct PlacedEntry: Sendable {
        enum Source {
            /// A file stored as it is (its CRC-32 computed as it is copied).
            case stored(OpenedFile)
            /// A spool file of ``ZipPrecompressor``.
            case spooled(ZipPrecompressor.Spooled)
            /// Deflated into memory by a worker.
            case deflated(Deflated)
        }
        var source: Source
        var nameBytes: [UInt8]
        var flags: UInt16
        var method: ZipMethod
        var version: UInt16
        var zip64Local: Bool
        var compressed: UInt64
        var uncompressed: UInt64
        /// Where its local header starts; its data follows the header.
        var headerOffset: UInt64
        var dataOffset: UInt64
        /// Known before the copy for every source but a stored file.
        var crc: UInt32
    }

    /// `source` given the next place in the archive (after the entries placed before it): its name checked
    /// and recorded, its header's fields as ``addEntry(name:method:expectedSize:bulkAfter:produce:)`` writes
    /// them for a stored file; a deflated entry's local header is complete from the start (Zip64 sizes in it
    /// when the entry is near 4 GiB).
    private func place(_ source: PlacedEntry.Source, as name: String) throws(ZipError) -> PlacedEntry {
        let (nameBytes, flags) = try checkedName(name)
        var entry = PlacedEntry(
            source: source, nameBytes: nameBytes, flags: flags, method: .deflate, version: ZipFormat.versionDeflate,
            zip64Local: false, compressed: 0, uncompressed: 0, headerOffset: offset, dataOffset: 0, crc: 0)
        switch source {
        case .stored(let file):
            entry.method = .stored
            entry.version = ZipFormat.versionStored
            entry.compressed = UInt64(file.size)
            entry.uncompressed = UInt64(file.size)
        case .spooled(let spooled):
            (entry.crc, entry.compressed, entry.uncompressed) =
                (spooled.crc32, spooled.compressedSize, spooled.uncompressedSize)
        case .deflated(let deflated):
            (entry.crc, entry.compressed, entry.uncompressed) =
                (deflated.crc, UInt64(deflated.bytes.count), deflated.uncompressed)
        }
        // A stored file's two sizes are one, its expected size as addEntry takes it.
        entry.zip64Local =
            alwaysZip64 || entry.compressed >= Self.zip64LocalThreshold
            || entry.uncompressed >= Self.zip64LocalThreshold
        if entry.zip64Local { entry.version = ZipFormat.versionZip64 }
        entry.dataOffset =
            entry.headerOffset + UInt64(ZipFormat.localHeaderSize + nameBytes.count + (entry.zip64Local ? 20 : 0))
        offset = entry.dataOffset + entry.compressed
        return entry
    }

    /// Writes the entries of a run, placed one after the other from the end of what was written before
    /// (``place(_:as:)``): each entry's header and bytes at its own offset (`pwrite`), the entries on up to
    /// one thread per core at once, so copying a study's stored instances is not one core's memory copy
    /// and CRC-32 after another; then their central records, in order. The archive is byte for byte the one
    /// ``addFile(_:as:method:bulkAfter:)`` and its like would write one entry after another.
    private func writeRun(_ run: [PlacedEntry]) throws(ZipError) {
        guard !run.isEmpty else { return }
        // What is buffered goes first: the run's offsets follow it.
        try flush()
        let descriptor = self.descriptor
        let path = self.temporaryPath
        let modified = self.modified
        let crcs = Mutex<[Result<UInt32, ZipError>?]>(Array(repeating: nil, count: run.count))
        DispatchQueue.concurrentPerform(iterations: run.count) { index in
            let result: Result<UInt32, ZipError>
            do throws(ZipError) {
                result = .success(try Self.write(run[index], to: descriptor, path: path, modified: modified))
            } catch {
                result = .failure(error)
            }
            crcs.withLock { $0[index] = result }
        }
        let results = crcs.withLock { $0 }
        for (entry, result) in zip(run, results) {
            let name = String(decoding: entry.nameBytes, as: UTF8.self)
            let crc = try (result ?? .failure(.io("entry \(name) was not written", path: path))).get()
            appendCentral(
                nameBytes: entry.nameBytes, flags: entry.flags, method: entry.method, version: entry.version,
                zip64Local: entry.zip64Local, crc: crc, compressed: entry.compressed,
                uncompressed: entry.uncompressed, headerOffset: entry.headerOffset)
        }
        let end = run[run.count - 1].dataOffset + run[run.count - 1].compressed
        // The descriptor's position is where the run began (pwrite moves none): the next write goes after it.
        guard lseek(descriptor, off_t(end), SEEK_SET) == off_t(end) else {
            throw .io("cannot seek in the archive", path: path, errno: errno)
        }
        offset = end
        appended = end
        writeBackIfDue()
    }

    /// One placed entry written at its offsets (a worker's job: touches nothing of the writer but the file):
    /// its bytes, then its local header with the CRC-32 they have. Returns the CRC-32.
    private static func write(_ entry: PlacedEntry, to descriptor: Int32, path: String, modified: DOSTimestamp)
        throws(ZipError) -> UInt32
    {
        var at = entry.dataOffset
        func put(_ bytes: UnsafeRawBufferPointer) throws(ZipError) {
            try pwriteAll(descriptor, bytes, at: at, path: path)
            at += UInt64(bytes.count)
        }
        var crc = entry.crc
        switch entry.source {
        case .stored(let file):
            var chunk = [UInt8](repeating: 0, count: bufferSize)
            var checksum = ZipCRC32()
            try read(file, through: &chunk) { (piece, _) throws(ZipError) in
                checksum.update(piece)
                try put(piece)
            }
            crc = checksum.value
        case .spooled(let spooled):
            let spool: OpenedFile
            do { spool = try OpenedFile(path: spooled.spoolPath) } catch {
                throw .io("cannot open the deflated entry (\(error))", path: spooled.spoolPath)
            }
            defer { spool.close() }
            guard UInt64(spool.size) == spooled.compressedSize else {
                throw .io("the deflated entry changed size", path: spooled.spoolPath)
            }
            var chunk = [UInt8](repeating: 0, count: bufferSize)
            try read(spool, through: &chunk) { (piece, _) throws(ZipError) in try put(piece) }
        case .deflated(let deflated):
            try deflated.bytes.withBytes { (bytes) throws(ZipError) in try put(bytes) }
        }
        guard at - entry.dataOffset == entry.compressed else {
            throw .io("entry was not the size it was placed at", path: path)
        }
        let header = localHeader(
            nameBytes: entry.nameBytes, flags: entry.flags, method: entry.method, version: entry.version,
            zip64Local: entry.zip64Local, crc: crc, compressed: entry.compressed, uncompressed: entry.uncompressed,
            modified: modified)
        try header.withBytes { (bytes) throws(ZipError) in
            try pwriteAll(descriptor, bytes, at: entry.headerOffset, path: path)
        }
        return crc
    }

    /// `file` read from its start and deflated into memory (a worker's job: touches nothing of the writer).
    static func deflated(_ file: OpenedFile, level: Int32, bulkAfter: Int?, path: String) throws(ZipError)
        -> Deflated
    {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(file.size / 2 + 1024)
        var entry = try deflate(file, level: level, bulkAfter: bulkAfter, path: path) { (out) throws(ZipError) in
            bytes.append(contentsOf: out)
        }
        entry.bytes = bytes
        return entry
    }

    /// `file` read from its start and deflated as a file entry is (`Z_RLE` past `bulkAfter` bytes), the stream
    /// handed to `sink`: its CRC-32 and size (with no bytes: they went to `sink`).
    ///
    /// - Parameters:
    ///   - chunkSize: How much is read and deflated at a time (the stream is the same whatever it is).
    ///   - checkpoint: Called before each chunk is deflated: what it throws ends the deflate.
    static func deflate(
        _ file: OpenedFile, level: Int32, bulkAfter: Int?, path: String, chunkSize: Int = bufferSize,
        checkpoint: () throws(ZipError) -> Void = {}, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void
    ) throws(ZipError) -> Deflated {
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var crc = ZipCRC32()
        var uncompressed: UInt64 = 0
        let deflater = try ZipDeflater(level: level, path: path, bulkAfter: bulkAfter)
        try read(file, through: &chunk) { (piece, isLast) throws(ZipError) in
            try checkpoint()
            crc.update(piece)
            uncompressed += UInt64(piece.count)
            try deflater.deflate(piece, finish: isLast, sink: sink)
        }
        return Deflated(crc: crc.value, uncompressed: uncompressed, bytes: [])
    }

    /// A new entry's name checked (one the reader accepts, not yet in the archive) and recorded: its bytes
    /// and general purpose flags (UTF-8, APPNOTE §4.4.4 bit 11, when it is not ASCII).
    private func checkedName(_ name: String) throws(ZipError) -> (bytes: [UInt8], flags: UInt16) {
        guard !finished else { throw .io("archive already finished", path: path) }
        guard ZipReader.isSafeName(name), !name.hasSuffix("/") else { throw .unsafeName(name, path: path) }
        guard names.insert(name).inserted else { throw .duplicateName(name, path: path) }
        let nameBytes = Array(name.utf8)
        guard nameBytes.count <= Int(ZipFormat.max16) else { throw .unsafeName(name, path: path) }
        return (nameBytes, nameBytes.allSatisfy({ $0 < 0x80 }) ? 0 : ZipFormat.flagUTF8)
    }

    /// Adds `bytes` as `name` (a small entry, such as a manifest).
    public func addData(_ bytes: [UInt8], as name: String, method: ZipMethod) throws(ZipError) {
        try addEntry(name: name, method: method, expectedSize: UInt64(bytes.count), bulkAfter: nil) {
            (emit) throws(ZipError) in
            try bytes.withBytes { buffer throws(ZipError) in try emit(buffer, true) }
        }
    }

    /// Writes one entry: its local header with room for Zip64 sizes when `expectedSize` is near 4 GiB, the
    /// data `produce` emits (it calls `emit(chunk, isLast)`), then the CRC and sizes into the header.
    private func addEntry(
        name: String, method: ZipMethod, expectedSize: UInt64, bulkAfter: Int?,
        produce: ((UnsafeRawBufferPointer, Bool) throws(ZipError) -> Void) throws(ZipError) -> Void
    ) throws(ZipError) {
        let (nameBytes, flags) = try checkedName(name)
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
            let deflater = try ZipDeflater(level: level, path: path, bulkAfter: bulkAfter)
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
        Self.localHeader(
            nameBytes: nameBytes, flags: flags, method: method, version: version, zip64Local: zip64Local, crc: crc,
            compressed: compressed, uncompressed: uncompressed, modified: modified)
    }

    private static func localHeader(
        nameBytes: [UInt8], flags: UInt16, method: ZipMethod, version: UInt16, zip64Local: Bool, crc: UInt32,
        compressed: UInt64, uncompressed: UInt64, modified: DOSTimestamp
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
        try Self.writeAll(descriptor, bytes, path: temporaryPath)
        appended += UInt64(bytes.count)
        writeBackIfDue()
    }

    /// Hands what was appended since the last writeback to the disk once it is ``writebackBytes`` or more.
    private func writeBackIfDue() {
        guard appended - writebackFrom >= Self.writebackBytes else { return }
        startWriteback(from: writebackFrom, count: appended - writebackFrom)
        writebackFrom = appended
    }

    /// How many appended bytes are handed to the disk at once: a 30 MB study's archive starts its writeback
    /// seven times while it is written, and its `fsync` then waits about 2 ms instead of 12 (docs/benchmarks.rst,
    /// "Zip writing").
    public static let writebackBytes: UInt64 = 4 << 20

    /// Starts writing a range of the file to disk without waiting for it (`SYNC_FILE_RANGE_WRITE`): only
    /// sooner, never instead of ``finish(fsync:)``'s `fsync`, which alone makes the archive durable. A
    /// failure here changes nothing (the pages stay dirty, and the `fsync` reports what fails).
    private func startWriteback(from start: UInt64, count: UInt64) {
        #if os(Linux)
            _ = sync_file_range(descriptor, Int64(start), Int64(count), PX_SYNC_FILE_RANGE_WRITE)
        #endif
    }

    /// Writes all of `bytes` to `descriptor` (`path` names it in errors).
    static func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws(ZipError) {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot write the archive", path: path, errno: errno)
            }
            done += n
        }
    }

    private func pwriteAll(_ bytes: [UInt8], at position: UInt64) throws(ZipError) {
        try bytes.withBytes { (raw) throws(ZipError) in
            try Self.pwriteAll(descriptor, raw, at: position, path: temporaryPath)
        }
    }

    /// Writes all of `bytes` at `position` of `descriptor` (`path` names it in errors).
    static func pwriteAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer, at position: UInt64, path: String)
        throws(ZipError)
    {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(position) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw .io("cannot write the archive", path: path, errno: errno)
            }
            guard n > 0 else { throw .io("cannot write the archive", path: path) }
            done += n
        }
    }
}
