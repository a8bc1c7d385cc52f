#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a walk over a Part 10 file's element structure found: where the data set starts and the data
/// set's own SOP Class and Instance UIDs (0008,0016), (0008,0018), which may differ from the meta's.
public struct Part10Structure: Sendable {
    /// The file meta information (group 0002).
    public var meta: DataSet
    /// The transfer syntax of the data set (0002,0010).
    public var transferSyntax: TransferSyntax
    /// The byte offset of the data set in the file (after the meta information, PS3.10 §7.1).
    public var dataSetOffset: Int
    /// SOP Class UID (0008,0016) of the data set itself, `nil` when absent.
    public var sopClassUID: String?
    /// SOP Instance UID (0008,0018) of the data set itself, `nil` when absent.
    public var sopInstanceUID: String?
}

extension Part10File {
    /// How deep sequences may nest before a file is refused.
    public static let maximumStructureDepth = 64

    /// Checks that a Part 10 file's data set is well formed without reading its values: every element's
    /// length fits in its container (the file, a defined-length sequence or item), every length is even
    /// (PS3.5 §7.1.1), undefined lengths only where PS3.5 §7.5 allows them, sequences and items closed by
    /// their delimiters, and encapsulated Pixel Data a sequence of defined, even-length fragment items
    /// ended by a Sequence Delimitation Item (PS3.5 §A.4). The file is read header by header through a
    /// small window (values are skipped), so the memory used does not depend on the file's size; a
    /// deflated data set (PS3.5 §A.5) is inflated first, refused above `maximumInflatedSize` bytes.
    ///
    /// - Throws: ``DICOMDataError`` naming the first problem and its byte offset (in the inflated
    ///   data set for a deflated file).
    public static func checkStructure(contentsOf path: String, maximumInflatedSize: Int) throws(DICOMDataError)
        -> Part10Structure
    {
        let (fd, size) = try Self.openForStructure(path)
        defer { close(fd) }
        // The meta information: read a prefix, larger until the group 0002 elements end inside it.
        var prefixCount = min(size, 16 * 1024)
        var prefix = try FileIO.readPrefix(fd, path: path, count: prefixCount)
        guard let dicm = Self.dicmPrefixOffset(prefix) else {
            throw .notDICOM("no DICM prefix at byte 128")
        }
        var meta: DataSet
        var metaEnd: Int
        while true {
            (meta, metaEnd) = try Self.readMeta(prefix, from: dicm + 4)
            if metaEnd + 12 <= prefixCount || prefixCount >= size { break }
            let more = min(size - prefixCount, max(prefixCount, 64 * 1024))
            prefix += try FileIO.readPrefix(fd, path: path, count: more, from: prefixCount)
            prefixCount += more
        }
        guard let uid = meta.string(.transferSyntaxUID), !uid.isEmpty else { throw .missingTransferSyntax() }
        let syntax = TransferSyntax(uid: uid)
        var found = FoundUIDs()
        if syntax.isDeflated {
            let inflated = try Self.inflatedDataSet(
                contentsOf: path, dataSetOffset: metaEnd, maximumInflatedSize: maximumInflatedSize)
            var source = StructureSource(bytes: inflated)
            try Self.walkDataSet(&source, end: inflated.count, syntax: .explicitVRLittleEndian, found: &found)
        } else {
            // No implicit-VR fallback (Part10File has one for reading): a peer decodes the data set in the
            // transfer syntax it is sent under, so a data set not encoded in its own syntax is broken on the wire.
            var source = StructureSource(fd: fd, path: path, size: size)
            try Self.walkDataSet(&source, start: metaEnd, end: size, syntax: syntax, found: &found)
        }
        return Part10Structure(
            meta: meta, transferSyntax: syntax, dataSetOffset: metaEnd, sopClassUID: found.sopClass,
            sopInstanceUID: found.sopInstance)
    }

    /// The data set of a Deflated Explicit VR Little Endian file (PS3.5 §A.5) inflated: the Explicit VR
    /// Little Endian encoding of the same data set, as a peer that did not accept Deflated is sent it.
    /// `dataSetOffset` is where the deflated stream starts (``Part10Structure/dataSetOffset``).
    ///
    /// - Throws: ``DICOMDataError`` (``DICOMDataError/Code/tooLarge`` above `maximumInflatedSize` bytes).
    public static func inflatedDataSet(contentsOf path: String, dataSetOffset: Int, maximumInflatedSize: Int)
        throws(DICOMDataError)
        -> [UInt8]
    {
        let (fd, size) = try Self.openForStructure(path)
        defer { close(fd) }
        return try Self.inflatedDataSet(
            of: OpenedFile(descriptor: fd, size: size, path: path), dataSetOffset: dataSetOffset,
            maximumInflatedSize: maximumInflatedSize)
    }

    /// ``inflatedDataSet(contentsOf:dataSetOffset:maximumInflatedSize:)`` of a file already open (one checked
    /// before it is sent, ``IndexedFile/open()``), read from its descriptor.
    public static func inflatedDataSet(of file: OpenedFile, dataSetOffset: Int, maximumInflatedSize: Int)
        throws(DICOMDataError) -> [UInt8]
    {
        let compressed = try file.readAll(from: dataSetOffset)
        return try Inflate.inflate(
            compressed, range: 0..<compressed.count, limits: InflateLimits(maximumSize: maximumInflatedSize))
    }

    /// The file open for reading, and its size.
    private static func openForStructure(_ path: String) throws(DICOMDataError) -> (Int32, Int) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: path, errno: errno) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let code = errno
            close(fd)
            throw .io("cannot stat", path: path, errno: code)
        }
        return (fd, Int(info.st_size))
    }

    /// The top-level UIDs seen on the walk.
    struct FoundUIDs {
        var sopClass: String?
        var sopInstance: String?
    }

    /// The elements of the top-level data set, `start..<end`.
    private static func walkDataSet(
        _ source: inout StructureSource, start: Int = 0, end: Int, syntax: TransferSyntax, found: inout FoundUIDs
    ) throws(DICOMDataError) {
        var offset = start
        while offset < end {
            offset = try Self.walkElement(&source, at: offset, end: end, syntax: syntax, depth: 0, found: &found)
        }
    }

    /// One element header at `offset` (and, for a sequence or encapsulated Pixel Data, what it holds);
    /// returns the offset after it. `end` is the end of the container.
    private static func walkElement(
        _ source: inout StructureSource, at offset: Int, end: Int, syntax: TransferSyntax, depth: Int,
        found: inout FoundUIDs
    ) throws(DICOMDataError) -> Int {
        guard end - offset >= 8 else {
            throw .truncated(at: offset, needed: 8 - (end - offset), context: "an element header")
        }
        let head = try source.bytes(at: offset, count: min(12, end - offset))
        let tag = Self.tag(head, bigEndian: syntax.isBigEndian)
        if tag.group == 0xFFFE {
            throw .unexpectedTag(tag, at: offset, context: "outside a sequence")
        }
        var vr: VR?
        var length: UInt32
        var headerLength: Int
        if syntax.isExplicitVR {
            guard let explicit = VR(byte0: head[4], byte1: head[5]) else {
                throw .invalidVR(head[4], head[5], tag: tag, at: offset + 4)
            }
            vr = explicit
            if explicit.hasLongExplicitLength {
                guard head.count >= 12 else {
                    throw .truncated(at: offset, needed: 12 - head.count, context: "an element header")
                }
                length = Self.uint32(head, 8, bigEndian: syntax.isBigEndian)
                headerLength = 12
            } else {
                length = UInt32(Self.uint16(head, 6, bigEndian: syntax.isBigEndian))
                headerLength = 8
            }
        } else {
            length = Self.uint32(head, 4, bigEndian: syntax.isBigEndian)
            headerLength = 8
            vr = DataDictionary.entry(for: tag)?.vr
        }
        let valueStart = offset + headerLength
        if length == 0xFFFF_FFFF {
            if tag == .pixelData && syntax.isEncapsulated && vr != .SQ {
                return try Self.walkFragments(&source, at: valueStart, end: end, syntax: syntax)
            }
            if vr == .SQ || vr == .UN || vr == nil || !syntax.isExplicitVR {
                // A sequence of undefined length; UN of undefined length holds Implicit VR Little
                // Endian items (PS3.5 §6.2.2).
                let inner = vr == .UN && syntax.isExplicitVR ? TransferSyntax.implicitVRLittleEndian : syntax
                return try Self.walkItems(
                    &source, at: valueStart, end: end, defined: nil, syntax: inner, depth: depth + 1)
            }
            throw .undefinedLength(tag: tag, vr: vr ?? .UN, at: offset)
        }
        guard Int(length) <= end - valueStart else {
            throw .lengthPastEnd(tag: tag, length: length, at: offset, available: max(0, end - valueStart))
        }
        guard length % 2 == 0 else {
            throw .oddLength(tag: tag, length: length, at: offset)
        }
        let valueEnd = valueStart + Int(length)
        if vr == .SQ {
            return try Self.walkItems(
                &source, at: valueStart, end: end, defined: valueEnd, syntax: syntax, depth: depth + 1)
        }
        if depth == 0, tag == .sopClassUID || tag == .sopInstanceUID, length <= 64 {
            let value = try source.bytes(at: valueStart, count: Int(length))
            // A UI value is padded with a NUL, some writers pad with spaces (PS3.5 §6.2).
            let padding: Set<UInt8> = [0x00, 0x20]
            let text = String(
                decoding: value.drop { padding.contains($0) }.reversed().drop { padding.contains($0) }.reversed(),
                as: UTF8.self)
            if tag == .sopClassUID { found.sopClass = text } else { found.sopInstance = text }
        }
        return valueEnd
    }

    /// The items of a sequence starting at `offset`: up to `defined` (its end) or, for an undefined
    /// length, up to its Sequence Delimitation Item; returns the offset after the sequence.
    private static func walkItems(
        _ source: inout StructureSource, at offset: Int, end: Int, defined: Int?, syntax: TransferSyntax, depth: Int
    ) throws(DICOMDataError) -> Int {
        guard depth <= Self.maximumStructureDepth else {
            throw .nestingTooDeep(limit: Self.maximumStructureDepth, at: offset)
        }
        let limit = defined ?? end
        var position = offset
        var none = FoundUIDs()  // only the top level's UIDs are kept
        while true {
            if let defined, position == defined { return defined }
            guard limit - position >= 8 else {
                throw .truncated(
                    at: position, needed: 8 - (limit - position), context: "a sequence (no Sequence Delimitation Item)")
            }
            let head = try source.bytes(at: position, count: 8)
            let tag = Self.tag(head, bigEndian: syntax.isBigEndian)
            let length = Self.uint32(head, 4, bigEndian: syntax.isBigEndian)
            if tag == .sequenceDelimitationItem && defined == nil { return position + 8 }
            guard tag == .item else {
                throw .unexpectedTag(tag, at: position, context: "where a sequence item should be")
            }
            position += 8
            if length == 0xFFFF_FFFF {
                // Elements up to the Item Delimitation Item.
                while true {
                    guard limit - position >= 8 else {
                        throw .truncated(
                            at: position, needed: 8 - (limit - position), context: "an item (no Item Delimitation Item)"
                        )
                    }
                    let next = try source.bytes(at: position, count: 8)
                    if Self.tag(next, bigEndian: syntax.isBigEndian) == .itemDelimitationItem {
                        position += 8
                        break
                    }
                    position = try Self.walkElement(
                        &source, at: position, end: limit, syntax: syntax, depth: depth, found: &none)
                }
            } else {
                guard Int(length) <= limit - position else {
                    throw .lengthPastEnd(tag: tag, length: length, at: position - 8, available: limit - position)
                }
                let itemEnd = position + Int(length)
                while position < itemEnd {
                    position = try Self.walkElement(
                        &source, at: position, end: itemEnd, syntax: syntax, depth: depth, found: &none)
                }
            }
        }
    }

    /// Encapsulated Pixel Data (PS3.5 §A.4): the Basic Offset Table item and the fragment items, each of
    /// defined, even length within the file, then the Sequence Delimitation Item.
    private static func walkFragments(
        _ source: inout StructureSource, at offset: Int, end: Int, syntax: TransferSyntax
    ) throws(DICOMDataError) -> Int {
        var position = offset
        while true {
            guard end - position >= 8 else {
                throw .truncated(
                    at: position, needed: 8 - (end - position),
                    context: "encapsulated Pixel Data (no Sequence Delimitation Item)")
            }
            let head = try source.bytes(at: position, count: 8)
            let tag = Self.tag(head, bigEndian: syntax.isBigEndian)
            let length = Self.uint32(head, 4, bigEndian: syntax.isBigEndian)
            if tag == .sequenceDelimitationItem { return position + 8 }
            guard tag == .item else {
                throw .unexpectedTag(tag, at: position, context: "where a Pixel Data fragment should be")
            }
            guard length != 0xFFFF_FFFF, Int(length) <= end - position - 8 else {
                throw .lengthPastEnd(tag: tag, length: length, at: position, available: end - position - 8)
            }
            guard length % 2 == 0 else { throw .oddLength(tag: .pixelData, length: length, at: position) }
            position += 8 + Int(length)
        }
    }

    private static func tag(_ b: [UInt8], bigEndian: Bool) -> Tag {
        Tag(Self.uint16(b, 0, bigEndian: bigEndian), Self.uint16(b, 2, bigEndian: bigEndian))
    }

    private static func uint16(_ b: [UInt8], _ at: Int, bigEndian: Bool) -> UInt16 {
        bigEndian ? UInt16(b[at]) << 8 | UInt16(b[at + 1]) : UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    private static func uint32(_ b: [UInt8], _ at: Int, bigEndian: Bool) -> UInt32 {
        bigEndian
            ? UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
            : UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}

/// The bytes a structure walk reads: an open file through a 64 KiB window, or bytes in memory.
struct StructureSource {
    private let fd: Int32
    private let path: String
    private let size: Int
    private var window: [UInt8]
    private var windowStart = 0
    private let inMemory: Bool

    static let windowSize = 64 * 1024

    init(fd: Int32, path: String, size: Int) {
        self.fd = fd
        self.path = path
        self.size = size
        self.window = []
        self.inMemory = false
    }

    init(bytes: [UInt8]) {
        self.fd = -1
        self.path = ""
        self.size = bytes.count
        self.window = bytes
        self.inMemory = true
    }

    /// `count` bytes (at most the window) at `offset`, fewer at the end of the data.
    mutating func bytes(at offset: Int, count: Int) throws(DICOMDataError) -> [UInt8] {
        let wanted = min(count, max(0, size - offset))
        if inMemory || (offset >= windowStart && offset + wanted <= windowStart + window.count) {
            let from = offset - windowStart
            return Array(window[from..<from + wanted])
        }
        window = try FileIO.readPrefix(fd, path: path, count: min(Self.windowSize, size - offset), from: offset)
        windowStart = offset
        return Array(window[0..<min(wanted, window.count)])
    }
}
