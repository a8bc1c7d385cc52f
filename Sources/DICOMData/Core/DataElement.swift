/// One data element: tag, VR and value (PS3.5 §7.1).
///
/// Values are kept as the bytes they were read with (always in little-endian order in memory),
/// sliced out of the buffer the dataset was read from: reading a file copies no bulk value.
public struct DataElement: Sendable {
    /// The value of an element.
    public enum Value: Sendable {
        /// The value bytes, without interpretation, padding included.
        case bytes(ArraySlice<UInt8>)
        /// The items of a sequence (VR SQ, or UN with undefined length read as a sequence).
        case sequence([Item])
        /// Encapsulated pixel data: the Basic Offset Table and the fragments (PS3.5 §A.4).
        case fragments(EncapsulatedPixelData)
    }

    public var tag: Tag
    public var vr: VR
    public var value: Value
    /// The element was encoded with undefined length (sequences, encapsulated pixel data);
    /// kept so that a written copy encodes the same way.
    public var hasUndefinedLength: Bool

    public init(tag: Tag, vr: VR, value: Value, hasUndefinedLength: Bool = false) {
        self.tag = tag
        self.vr = vr
        self.value = value
        self.hasUndefinedLength = hasUndefinedLength
    }

    /// An element holding raw value bytes.
    public init(tag: Tag, vr: VR, bytes: some Sequence<UInt8>) {
        self.init(tag: tag, vr: vr, value: .bytes(ArraySlice(bytes)))
    }

    /// The raw bytes for a plain value; empty for sequences and fragments.
    @inlinable
    public var bytes: ArraySlice<UInt8> {
        if case .bytes(let b) = value { return b }
        return []
    }

    /// The items, when the value is a sequence.
    @inlinable
    public var items: [Item]? {
        if case .sequence(let items) = value { return items }
        return nil
    }

    /// The value length in bytes (0 for sequences and fragments, whose length depends on the encoding).
    public var valueLength: Int {
        if case .bytes(let b) = value { return b.count }
        return 0
    }

    /// Whether the element has no value at all (zero length, or a sequence with no items).
    public var isEmpty: Bool {
        switch value {
        case .bytes(let b): return b.isEmpty
        case .sequence(let items): return items.isEmpty
        case .fragments: return false
        }
    }
}

/// An item of a sequence: a nested dataset (PS3.5 §7.5).
public struct Item: Sendable {
    public var dataSet: DataSet
    /// The item was encoded with undefined length and an Item Delimitation Item.
    public var hasUndefinedLength: Bool

    public init(dataSet: DataSet, hasUndefinedLength: Bool = true) {
        self.dataSet = dataSet
        self.hasUndefinedLength = hasUndefinedLength
    }
}

/// Encapsulated pixel data: Basic Offset Table and fragments, kept as read (PS3.5 §A.4).
public struct EncapsulatedPixelData: Sendable {
    public var basicOffsetTable: ArraySlice<UInt8>
    public var fragments: [ArraySlice<UInt8>]

    public init(basicOffsetTable: ArraySlice<UInt8> = [], fragments: [ArraySlice<UInt8>]) {
        self.basicOffsetTable = basicOffsetTable
        self.fragments = fragments
    }

    /// The items as encoded (little endian): the Basic Offset Table item, then one item per fragment,
    /// each padded to even length; the Sequence Delimitation Item is not included.
    public func itemStream() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fragments.reduce(basicOffsetTable.count + 8) { $0 + $1.count + 9 })
        for fragment in [basicOffsetTable] + fragments {
            let length = UInt32(fragment.count + (fragment.count & 1))
            out.append(contentsOf: [0xFE, 0xFF, 0x00, 0xE0])
            out.append(contentsOf: [
                UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24),
            ])
            out.append(contentsOf: fragment)
            if fragment.count & 1 == 1 { out.append(0) }
        }
        return out
    }
}
