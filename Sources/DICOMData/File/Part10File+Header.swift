#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a header read (``Part10File/readHeader(contentsOf:stopBefore:knownPrefix:fileLength:limits:reserve:)``)
/// may cost, whatever the file claims.
public struct HeaderLimits: Sendable, Hashable {
    /// The most bytes of header elements held in memory; a longer header is refused
    /// (``DICOMDataError/Code/tooLarge``).
    public var maximumSize: Int
    /// Top-level values longer than this are skipped (read past, never held) and left out of the header:
    /// a sorter needs identifiers and dates, not a 512 MiB private blob before the pixel data.
    public var maximumValueLength: Int
    /// How far a deflated data set may inflate on the way to `stopBefore` (skipped values included).
    public var inflate: InflateLimits

    public init(
        maximumSize: Int = 16 << 20, maximumValueLength: Int = 1 << 20,
        inflate: InflateLimits = InflateLimits(maximumSize: 256 << 20)
    ) {
        self.maximumSize = maximumSize
        self.maximumValueLength = maximumValueLength
        self.inflate = inflate
    }
}

extension Part10File {
    /// Reads only the start of a file, up to `stopBefore` (Pixel Data by default): what a receiver needs to
    /// sort a file, with bounded memory and time whatever the file holds.
    ///
    /// The data set is walked element by element from the file (never read whole): top-level values longer
    /// than ``HeaderLimits/maximumValueLength`` are skipped, not read; a deflated data set (PS3.5 §A.5) is
    /// inflated as a stream only as far as `stopBefore`, within ``HeaderLimits/inflate``.
    ///
    /// - Parameters:
    ///   - knownPrefix: The file's first bytes when the caller has them already (a receiver that just
    ///     wrote the file), with `fileLength`: when the header ends inside them the file is not opened.
    ///   - reserve: Called with the bytes this read holds each time that grows (a caller's memory budget);
    ///     throwing ends the read with that error.
    /// - Throws: ``DICOMDataError``: the reader's errors, ``DICOMDataError/Code/tooLarge`` past `limits`.
    public static func readHeader(
        contentsOf path: String, stopBefore: Tag = .pixelData, knownPrefix: [UInt8] = [], fileLength: Int? = nil,
        limits: HeaderLimits = HeaderLimits(), reserve: ((Int) throws(DICOMDataError) -> Void)? = nil
    ) throws(DICOMDataError) -> Part10File {
        let file = HeaderFile(path: path, knownPrefix: knownPrefix, knownLength: fileLength)
        defer { file.close() }
        // The preamble and meta information: 16 KiB, more only for a longer meta group.
        var head = try file.read(at: 0, count: 16 * 1024)
        var located: LocatedDataSet
        while true {
            do {
                located = try Self.locateDataSet(head)
                break
            } catch  where (error.code == .truncated || error.code == .lengthPastEnd) && head.count < limits.maximumSize
            {
                let more = try file.read(at: head.count, count: head.count)
                if more.isEmpty { throw error }
                head += more
            }
        }
        try reserve?(head.count)
        // The common case: an uncompressed header that ends inside the first read, parsed where it lies
        // (no value there can be longer than the read, so nothing would be skipped).
        let headIsWholeFile = head.count < 16 * 1024
        if !located.transferSyntax.isDeflated && limits.maximumValueLength >= head.count {
            do {
                let file = try Part10File(bytes: head, options: ReadOptions(dataSet: .init(stopBefore: stopBefore)))
                if file.stoppedEarly || headIsWholeFile { return file }
            } catch  where !headIsWholeFile && (error.code == .truncated || error.code == .lengthPastEnd) {
                // The header goes on past the first read: walk it.
            }
        }
        let source: HeaderByteSource
        if located.transferSyntax.isDeflated {
            source = try HeaderByteSource(
                deflated: file, at: located.dataSetOffset, cached: head, limits: limits.inflate)
        } else {
            source = HeaderByteSource(plain: file, at: located.dataSetOffset, cached: head)
        }
        head = []
        let syntax = located.transferSyntax.isDeflated ? TransferSyntax.explicitVRLittleEndian : located.transferSyntax
        var walker = HeaderWalker(
            source: source, explicitVR: syntax.isExplicitVR, bigEndian: syntax.isBigEndian, stopBefore: stopBefore,
            limits: limits, reserve: reserve)
        let stopped = try walker.walk()
        let read = try DataSetReader.read(
            walker.kept, transferSyntax: walker.explicitVR ? syntax : .implicitVRLittleEndian)
        var file10 = Part10File(meta: located.meta, dataSet: read.dataSet, transferSyntax: located.transferSyntax)
        file10.hadNoPreamble = located.hadNoPreamble
        file10.stoppedEarly = stopped
        return file10
    }
}

/// The file behind a header read: a known prefix first, the file itself (opened when first needed) after.
final class HeaderFile {
    let path: String
    private let knownPrefix: [UInt8]
    private let knownLength: Int?
    private var descriptor: Int32 = -1

    init(path: String, knownPrefix: [UInt8], knownLength: Int?) {
        self.path = path
        self.knownPrefix = knownLength == nil ? [] : knownPrefix
        self.knownLength = knownLength
    }

    /// Up to `count` bytes at `offset`; fewer only at the end of the file.
    func read(at offset: Int, count: Int) throws(DICOMDataError) -> [UInt8] {
        var bytes: [UInt8] = []
        if offset < self.knownPrefix.count {
            bytes = Array(self.knownPrefix[offset..<min(self.knownPrefix.count, offset + count)])
        }
        if bytes.count == count { return bytes }
        if let knownLength = self.knownLength, offset + bytes.count >= knownLength,
            knownLength <= self.knownPrefix.count
        {
            return bytes
        }
        if self.descriptor < 0 {
            self.descriptor = open(self.path, O_RDONLY | O_CLOEXEC)
            guard self.descriptor >= 0 else { throw .io("cannot open", path: self.path, errno: errno) }
            var info = stat()
            if fstat(self.descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                throw .io("cannot read", path: self.path, errno: EISDIR)
            }
        }
        bytes += try FileIO.readPrefix(
            self.descriptor, path: self.path, count: count - bytes.count, from: offset + bytes.count)
        return bytes
    }

    func close() {
        if self.descriptor >= 0 {
            _ = Glibc.close(self.descriptor)
            self.descriptor = -1
        }
    }
}

/// The data set's bytes in order, from the file or inflated from it, with a push-back buffer; skipping
/// never holds the skipped bytes.
final class HeaderByteSource {
    private let file: HeaderFile
    /// The next file offset to read (of the data set, or of the compressed stream).
    private var offset: Int
    /// The start of the file, already read.
    private var cached: [UInt8]
    private let inflater: Inflater?
    /// Compressed bytes read and not yet inflated.
    private var compressed: [UInt8] = []
    private var compressedIndex = 0
    private var fileEnded = false
    /// Bytes to hand out before any new ones (inflated, or pushed back).
    private var pending: [UInt8] = []
    private var pendingIndex = 0
    private static let chunk = 64 * 1024

    init(plain file: HeaderFile, at offset: Int, cached: [UInt8]) {
        self.file = file
        self.offset = offset
        self.cached = cached
        self.inflater = nil
    }

    init(deflated file: HeaderFile, at offset: Int, cached: [UInt8], limits: InflateLimits) throws(DICOMDataError) {
        self.file = file
        self.offset = offset
        self.cached = cached
        self.inflater = try Inflater(limits: limits, startOffset: offset)
    }

    /// Bytes held by the source (for the caller's budget).
    var heldBytes: Int { self.pending.count + self.compressed.count + self.cached.count }

    /// Appends up to `count` bytes to `out`; fewer only at the end of the data.
    func read(_ count: Int, into out: inout [UInt8]) throws(DICOMDataError) -> Int {
        var remaining = count
        while remaining > 0 {
            if self.pendingIndex < self.pending.count {
                let n = min(remaining, self.pending.count - self.pendingIndex)
                out.append(contentsOf: self.pending[self.pendingIndex..<(self.pendingIndex + n)])
                self.pendingIndex += n
                remaining -= n
                continue
            }
            if self.inflater == nil {
                // Read ahead a chunk: one pread (or one copy from the cached start) for many elements.
                self.pending = try self.readFile(Self.chunk)
                self.pendingIndex = 0
                if self.pending.isEmpty { break }
            } else if try !self.inflateMore() {
                break
            }
        }
        return count - remaining
    }

    /// Skips up to `count` bytes; returns how many (fewer only at the end of the data).
    func skip(_ count: Int) throws(DICOMDataError) -> Int {
        var remaining = count
        while remaining > 0 {
            if self.pendingIndex < self.pending.count {
                let n = min(remaining, self.pending.count - self.pendingIndex)
                self.pendingIndex += n
                remaining -= n
                continue
            }
            if self.inflater == nil {
                // Plain file: move the offset, if the file goes on that far.
                if try self.file.read(at: self.offset + remaining - 1, count: 1).isEmpty { break }
                self.offset += remaining
                remaining = 0
            } else if try !self.inflateMore() {
                break
            }
        }
        return count - remaining
    }

    /// Makes `bytes` the next ones read again.
    func unread(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return }
        self.pending = Array(bytes) + self.pending[self.pendingIndex...]
        self.pendingIndex = 0
    }

    private func readFile(_ count: Int) throws(DICOMDataError) -> [UInt8] {
        var bytes: [UInt8]
        if self.offset < self.cached.count {
            bytes = Array(self.cached[self.offset..<min(self.cached.count, self.offset + count)])
        } else {
            bytes = try self.file.read(at: self.offset, count: count)
        }
        self.offset += bytes.count
        return bytes
    }

    /// Inflates the next chunk into `pending`; false at the end of the deflate stream or of the file.
    private func inflateMore() throws(DICOMDataError) -> Bool {
        guard let inflater = self.inflater, !inflater.finished else { return false }
        self.pending.removeAll(keepingCapacity: true)
        self.pendingIndex = 0
        while self.pending.isEmpty {
            if self.compressedIndex == self.compressed.count && !self.fileEnded {
                self.compressed = try self.readFile(Self.chunk)
                self.compressedIndex = 0
                if self.compressed.isEmpty { self.fileEnded = true }
            }
            let start = self.compressedIndex
            let consumed = try self.compressed.withBytes { raw throws(DICOMDataError) in
                try inflater.inflate(
                    UnsafeRawBufferPointer(rebasing: raw[start...]), isLastInput: self.fileEnded,
                    maximumOutput: Self.chunk
                ) { self.pending.append(contentsOf: $0) }
            }
            self.compressedIndex += consumed
            if self.pending.isEmpty && (inflater.finished || (self.fileEnded && consumed == 0)) { return false }
        }
        return true
    }
}

/// Walks the top-level elements of a data set from a ``HeaderByteSource`` up to `stopBefore`, keeping the
/// elements a header read returns (re-encoded as they were) and skipping long values.
struct HeaderWalker {
    let source: HeaderByteSource
    private(set) var explicitVR: Bool
    let bigEndian: Bool
    let stopBefore: Tag
    let limits: HeaderLimits
    let reserve: ((Int) throws(DICOMDataError) -> Void)?
    /// The kept elements, in the data set's encoding.
    private(set) var kept: [UInt8] = []
    private var reserved = 0

    init(
        source: HeaderByteSource, explicitVR: Bool, bigEndian: Bool, stopBefore: Tag, limits: HeaderLimits,
        reserve: ((Int) throws(DICOMDataError) -> Void)?
    ) {
        self.source = source
        self.explicitVR = explicitVR
        self.bigEndian = bigEndian
        self.stopBefore = stopBefore
        self.limits = limits
        self.reserve = reserve
    }

    private func u16(_ b: [UInt8], _ i: Int) -> UInt16 {
        bigEndian ? UInt16(b[i]) << 8 | UInt16(b[i + 1]) : UInt16(b[i]) | UInt16(b[i + 1]) << 8
    }

    private func u32(_ b: [UInt8], _ i: Int) -> UInt32 {
        bigEndian
            ? UInt32(u16(b, i)) << 16 | UInt32(u16(b, i + 2))
            : UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16
    }

    /// Walks to `stopBefore` or the end; returns whether it stopped at `stopBefore`. Malformed data is kept
    /// as it is, for the reader to report.
    mutating func walk() throws(DICOMDataError) -> Bool {
        var first = true
        var header: [UInt8] = []
        header.reserveCapacity(12)
        while true {
            header.removeAll(keepingCapacity: true)
            let got = try source.read(8, into: &header)
            if got == 0 { return false }
            if got < 8 {
                try self.keep(header[...])
                return false
            }
            let tag = Tag(u16(header, 0), u16(header, 2))
            if tag >= self.stopBefore {
                source.unread(header[...])
                return true
            }
            if tag.group == 0xFFFE {
                // A stray delimiter: the reader skips or reports it.
                try self.keep(header[...])
                continue
            }
            var length: UInt32
            if self.explicitVR {
                if VR(byte0: header[4], byte1: header[5]) == nil, first, !self.bigEndian {
                    // The meta information says explicit VR but the data set is implicit (a known writer
                    // mistake, read as implicit as Part10File(bytes:) does).
                    self.explicitVR = false
                }
            }
            first = false
            if self.explicitVR {
                guard let vr = VR(byte0: header[4], byte1: header[5]) else {
                    try self.keep(header[...])
                    return false
                }
                if vr.hasLongExplicitLength {
                    if try source.read(4, into: &header) < 4 {
                        try self.keep(header[...])
                        return false
                    }
                    length = u32(header, 8)
                } else {
                    length = UInt32(u16(header, 6))
                }
            } else {
                length = u32(header, 4)
            }
            if length == 0xFFFF_FFFF {
                try self.keepUndefinedLength(tag: tag, header: header)
                continue
            }
            if Int(length) > self.limits.maximumValueLength {
                if try source.skip(Int(length)) < Int(length) {
                    // Truncated inside the skipped value: keep the header alone so the reader reports it.
                    try self.keep(header[...])
                    return false
                }
                continue
            }
            try self.keep(header[...])
            if try source.read(Int(length), into: &self.kept) < Int(length) {
                return false
            }
            try self.account()
        }
    }

    /// Keeps an element of undefined length (a sequence): reads on until the reader can parse it whole.
    private mutating func keepUndefinedLength(tag: Tag, header: [UInt8]) throws(DICOMDataError) {
        let start = self.kept.count
        try self.keep(header[...])
        let next = Tag(rawValue: tag.rawValue &+ 1)
        var chunk = 16 * 1024
        let syntax: TransferSyntax =
            self.explicitVR
            ? (self.bigEndian ? .explicitVRBigEndian : .explicitVRLittleEndian) : .implicitVRLittleEndian
        while true {
            let got = try source.read(chunk, into: &self.kept)
            try self.account()
            do {
                let read = try DataSetReader.read(
                    self.kept, range: start..<self.kept.count, transferSyntax: syntax, options: .init(stopBefore: next))
                // Complete: give back what was read past its end.
                source.unread(self.kept[read.endOffset...])
                self.kept.removeSubrange(read.endOffset...)
                return
            } catch  where (error.code == .truncated || error.code == .lengthPastEnd) && got > 0 {
                chunk = min(chunk * 2, 4 << 20)
            }
        }
    }

    private mutating func keep(_ bytes: ArraySlice<UInt8>) throws(DICOMDataError) {
        self.kept.append(contentsOf: bytes)
        try self.account()
    }

    /// Enforces the size limit and tells the budget when the read holds more.
    private mutating func account() throws(DICOMDataError) {
        if self.kept.count > self.limits.maximumSize {
            throw .tooLarge("header before \(self.stopBefore)", limit: self.limits.maximumSize)
        }
        let held = self.kept.count + self.source.heldBytes
        if held > self.reserved {
            // Reserve ahead in steps, so that the budget is not asked for every element.
            let step = max(held, self.reserved + 256 * 1024)
            try self.reserve?(step)
            self.reserved = step
        }
    }
}
