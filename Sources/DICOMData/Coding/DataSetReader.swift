/// Reads a data set from bytes in a transfer syntax (PS3.5 §7.1, §7.5, §A.4).
///
/// Plain values are slices of the input array: no bulk value is copied, except that values read in
/// big-endian order are byte-swapped into new storage so that every data set in memory is little endian.
/// Every length is checked against its container before anything is sliced, so a hostile length ends
/// in a ``DICOMDataError`` that names the offset, never in a large allocation.
public enum DataSetReader {
    /// How far and how deep to read.
    public struct Options: Sendable {
        /// Sequences nested deeper than this are an error rather than a deep recursion.
        public var maximumNestingDepth: Int
        /// Stop at the first top-level element whose tag is this tag or higher (a header-only read).
        public var stopBefore: Tag?

        public init(maximumNestingDepth: Int = 64, stopBefore: Tag? = nil) {
            self.maximumNestingDepth = maximumNestingDepth
            self.stopBefore = stopBefore
        }
    }

    /// What a read produced.
    public struct Result: Sendable {
        public var dataSet: DataSet
        /// The offset just past the last element read (where a header-only read stopped).
        public var endOffset: Int
        /// The read stopped at ``Options/stopBefore`` rather than at the end of the input.
        public var stoppedEarly: Bool
    }

    /// Reads the data set in `bytes[range]`.
    /// - Throws: ``DICOMDataError`` for truncated or malformed data, naming the offset.
    public static func read(
        _ bytes: [UInt8],
        range: Range<Int>? = nil,
        transferSyntax: TransferSyntax,
        characterSet: SpecificCharacterSet = .defaultRepertoire,
        options: Options = Options()
    ) throws(DICOMDataError) -> Result {
        let range = range ?? 0..<bytes.count
        let result: Result
        do {
            result = try bytes.withUnsafeBytes { raw in
                var parser = DataSetParser(
                    raw: raw, storage: bytes, explicitVR: transferSyntax.isExplicitVR,
                    bigEndian: transferSyntax.isBigEndian, options: options)
                let (set, end, stopped) = try parser.parseDataSet(
                    from: range.lowerBound, to: range.upperBound, depth: 0, characterSet: characterSet,
                    untilItemDelimiter: false, topLevel: true)
                return Result(dataSet: set, endOffset: end, stoppedEarly: stopped)
            }
        } catch let error as DICOMDataError {
            throw error
        } catch {
            throw .invalidValue("unexpected error \(error)")
        }
        return result
    }
}

/// The recursive-descent parser behind ``DataSetReader``.
struct DataSetParser {
    let raw: UnsafeRawBufferPointer
    let storage: [UInt8]
    var explicitVR: Bool
    let bigEndian: Bool
    let options: DataSetReader.Options

    @inline(__always)
    func u16(_ offset: Int) -> UInt16 {
        let v = raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self)
        return bigEndian ? UInt16(bigEndian: v) : UInt16(littleEndian: v)
    }

    @inline(__always)
    func u32(_ offset: Int) -> UInt32 {
        let v = raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)
        return bigEndian ? UInt32(bigEndian: v) : UInt32(littleEndian: v)
    }

    @inline(__always)
    func tag(at offset: Int) -> Tag { Tag(u16(offset), u16(offset + 2)) }

    static let undefinedLength: UInt32 = 0xFFFF_FFFF

    /// Parses elements from `start` up to `end`, or up to an Item Delimitation Item.
    mutating func parseDataSet(
        from start: Int, to end: Int, depth: Int, characterSet inherited: SpecificCharacterSet,
        untilItemDelimiter: Bool, topLevel: Bool
    ) throws(DICOMDataError) -> (DataSet, Int, Bool) {
        var elements: [DataElement] = []
        var sorted = true
        var offset = start
        var characterSet = inherited
        var pixelRepresentation: UInt16 = 0

        while offset < end {
            guard end - offset >= 8 else {
                throw .truncated(at: offset, needed: 8 - (end - offset), context: "an element header")
            }
            let tag = self.tag(at: offset)

            if tag.group == 0xFFFE {
                if tag == .itemDelimitationItem, untilItemDelimiter {
                    return (makeDataSet(elements, sorted: sorted, inherited: inherited), offset + 8, false)
                }
                if tag == .sequenceDelimitationItem, topLevel {
                    // A stray Sequence Delimitation Item after the last element; some writers leave one.
                    offset += 8
                    continue
                }
                throw .unexpectedTag(tag, at: offset, context: "where a data element should start")
            }
            if topLevel, let stop = options.stopBefore, tag >= stop {
                return (makeDataSet(elements, sorted: sorted, inherited: inherited), offset, true)
            }

            var vr: VR
            var length: UInt32
            var headerLength: Int
            if explicitVR {
                let b0 = raw[offset + 4]
                let b1 = raw[offset + 5]
                guard let parsed = VR(byte0: b0, byte1: b1) else {
                    throw .invalidVR(b0, b1, tag: tag, at: offset + 4)
                }
                vr = parsed
                if vr.hasLongExplicitLength {
                    guard end - offset >= 12 else {
                        throw .truncated(at: offset, needed: 12 - (end - offset), context: "an element header")
                    }
                    length = u32(offset + 8)
                    headerLength = 12
                } else {
                    length = UInt32(u16(offset + 6))
                    headerLength = 8
                }
            } else {
                length = u32(offset + 4)
                headerLength = 8
                vr = Self.implicitVR(for: tag, pixelRepresentation: pixelRepresentation)
            }

            let valueStart = offset + headerLength
            let element: DataElement
            if length == Self.undefinedLength {
                if vr == .SQ || vr == .UN {
                    // UN with undefined length holds a sequence encoded Implicit VR Little Endian (PS3.5 §6.2.2).
                    var inner = self
                    if vr == .UN { inner.explicitVR = false }
                    let (items, next) = try inner.parseItems(
                        from: valueStart, to: end, undefinedLength: true, depth: depth + 1,
                        characterSet: characterSet)
                    element = DataElement(tag: tag, vr: .SQ, value: .sequence(items), hasUndefinedLength: true)
                    offset = next
                } else if vr == .OB || vr == .OW {
                    let (fragments, next) = try parseFragments(from: valueStart, to: end)
                    // Encapsulated pixel data is OB (PS3.5 §A.4); keep what an explicit VR encoding says.
                    element = DataElement(
                        tag: tag, vr: explicitVR ? vr : .OB, value: .fragments(fragments), hasUndefinedLength: true)
                    offset = next
                } else {
                    throw .undefinedLength(tag: tag, vr: vr, at: offset)
                }
            } else {
                let available = end - valueStart
                guard Int(length) <= available else {
                    throw .lengthPastEnd(tag: tag, length: length, at: offset, available: max(0, available))
                }
                let valueEnd = valueStart + Int(length)
                if vr == .SQ {
                    let (items, _) = try parseItems(
                        from: valueStart, to: valueEnd, undefinedLength: false, depth: depth + 1,
                        characterSet: characterSet)
                    element = DataElement(tag: tag, vr: .SQ, value: .sequence(items), hasUndefinedLength: false)
                } else {
                    element = DataElement(tag: tag, vr: vr, value: .bytes(valueBytes(valueStart..<valueEnd, vr: vr)))
                    if tag == .specificCharacterSet {
                        characterSet = SpecificCharacterSet(
                            terms: DataSet.splitCharacterSetTerms(storage[valueStart..<valueEnd]))
                    } else if tag == .pixelRepresentation, length >= 2 {
                        pixelRepresentation = u16(valueStart)
                    }
                }
                offset = valueEnd
            }

            if sorted, let last = elements.last, !(last.tag < element.tag) { sorted = false }
            elements.append(element)
        }
        if untilItemDelimiter, !topLevel {
            throw .truncated(
                at: offset, needed: 8, context: "an item with undefined length (no Item Delimitation Item)")
        }
        return (makeDataSet(elements, sorted: sorted, inherited: inherited), offset, false)
    }

    private func makeDataSet(_ elements: [DataElement], sorted: Bool, inherited: SpecificCharacterSet) -> DataSet {
        sorted
            ? DataSet(sortedElements: elements, inheriting: inherited)
            : DataSet(elements, inheriting: inherited)
    }

    /// Parses the items of a sequence (PS3.5 §7.5.1).
    mutating func parseItems(
        from start: Int, to end: Int, undefinedLength: Bool, depth: Int, characterSet: SpecificCharacterSet
    ) throws(DICOMDataError) -> ([Item], Int) {
        guard depth <= options.maximumNestingDepth else {
            throw .nestingTooDeep(limit: options.maximumNestingDepth, at: start)
        }
        var items: [Item] = []
        var offset = start
        while true {
            if !undefinedLength, offset >= end { return (items, offset) }
            guard end - offset >= 8 else {
                throw .truncated(at: offset, needed: 8 - (end - offset), context: "a sequence item header")
            }
            let tag = self.tag(at: offset)
            let length = u32(offset + 4)
            if tag == .sequenceDelimitationItem, undefinedLength {
                return (items, offset + 8)
            }
            guard tag == .item else {
                throw .unexpectedTag(tag, at: offset, context: "inside a sequence, where an item should start")
            }
            let itemStart = offset + 8
            if length == Self.undefinedLength {
                let (set, next, _) = try parseDataSet(
                    from: itemStart, to: end, depth: depth, characterSet: characterSet,
                    untilItemDelimiter: true, topLevel: false)
                items.append(Item(dataSet: set, hasUndefinedLength: true))
                offset = next
            } else {
                let available = end - itemStart
                guard Int(length) <= available else {
                    throw .lengthPastEnd(tag: tag, length: length, at: offset, available: max(0, available))
                }
                let (set, _, _) = try parseDataSet(
                    from: itemStart, to: itemStart + Int(length), depth: depth, characterSet: characterSet,
                    untilItemDelimiter: false, topLevel: false)
                items.append(Item(dataSet: set, hasUndefinedLength: false))
                offset = itemStart + Int(length)
            }
        }
    }

    /// Parses encapsulated pixel data: Basic Offset Table item, fragment items, delimiter (PS3.5 §A.4).
    func parseFragments(from start: Int, to end: Int) throws(DICOMDataError) -> (EncapsulatedPixelData, Int) {
        var offset = start
        var table: ArraySlice<UInt8>?
        var fragments: [ArraySlice<UInt8>] = []
        while true {
            guard end - offset >= 8 else {
                throw .truncated(at: offset, needed: 8 - (end - offset), context: "an encapsulated pixel data item")
            }
            let tag = self.tag(at: offset)
            let length = u32(offset + 4)
            if tag == .sequenceDelimitationItem {
                return (EncapsulatedPixelData(basicOffsetTable: table ?? [], fragments: fragments), offset + 8)
            }
            guard tag == .item else {
                throw .unexpectedTag(tag, at: offset, context: "inside encapsulated pixel data")
            }
            let available = end - offset - 8
            guard length != Self.undefinedLength, Int(length) <= available else {
                throw .lengthPastEnd(tag: tag, length: length, at: offset, available: max(0, available))
            }
            let slice = storage[(offset + 8)..<(offset + 8 + Int(length))]
            if table == nil { table = slice } else { fragments.append(slice) }
            offset += 8 + Int(length)
        }
    }

    /// The value bytes, byte-swapped to little endian when the input is big endian.
    @inline(__always)
    func valueBytes(_ range: Range<Int>, vr: VR) -> ArraySlice<UInt8> {
        guard bigEndian, let unit = vr.swapUnit, unit > 1 else { return storage[range] }
        var swapped = [UInt8](storage[range])
        var i = 0
        while i + unit <= swapped.count {
            swapped[i..<(i + unit)].reverse()
            i += unit
        }
        return swapped[...]
    }

    /// The VR of an element in an implicit VR encoding, from the data dictionary (PS3.5 §7.1.3).
    static func implicitVR(for tag: Tag, pixelRepresentation: UInt16) -> VR {
        if tag.element == 0 { return .UL }
        if tag.isPrivate {
            return tag.isPrivateCreator ? .LO : .UN
        }
        guard let known = DataDictionary.implicitVR(for: tag) else { return .UN }
        if known.usOrSS { return pixelRepresentation == 1 ? .SS : .US }
        return known.vr
    }
}

extension VR {
    /// The size of the units to byte-swap when converting between byte orders (PS3.5 §7.3).
    var swapUnit: Int? {
        switch self {
        case .AT: return 2
        default: return binaryValueSize
        }
    }
}
