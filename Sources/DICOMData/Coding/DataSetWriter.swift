/// Writes data sets in Implicit or Explicit VR Little Endian (PS3.5 §7.1, §7.5, §A.4).
///
/// Values are padded to even length with their VR's padding byte; sequences and items keep the
/// length form (defined or undefined) they were read with; group lengths that are present are
/// recalculated.
public enum DataSetWriter {
    /// Appends the encoding of `dataSet` to `out`.
    /// - Throws: ``DICOMDataError`` when the transfer syntax cannot be written (big endian, deflated).
    public static func write(
        _ dataSet: DataSet, transferSyntax: TransferSyntax, into out: inout [UInt8]
    ) throws(DICOMDataError) {
        guard transferSyntax.isWritable else {
            throw .invalidValue("writing transfer syntax \(transferSyntax.uid) is not supported")
        }
        var encoder = DataSetEncoder(explicitVR: transferSyntax.isExplicitVR, out: out)
        out = []
        encoder.write(dataSet)
        out = encoder.out
    }

    /// The encoding of `dataSet` as a new array.
    public static func encode(_ dataSet: DataSet, transferSyntax: TransferSyntax) throws(DICOMDataError) -> [UInt8] {
        var out: [UInt8] = []
        try write(dataSet, transferSyntax: transferSyntax, into: &out)
        return out
    }
}

/// The little-endian encoder behind ``DataSetWriter``.
struct DataSetEncoder {
    let explicitVR: Bool
    var out: [UInt8]

    @inline(__always)
    mutating func u16(_ v: UInt16) {
        out.append(UInt8(truncatingIfNeeded: v))
        out.append(UInt8(truncatingIfNeeded: v >> 8))
    }

    @inline(__always)
    mutating func u32(_ v: UInt32) {
        u16(UInt16(truncatingIfNeeded: v))
        u16(UInt16(truncatingIfNeeded: v >> 16))
    }

    mutating func patch32(at position: Int, _ v: UInt32) {
        out[position] = UInt8(truncatingIfNeeded: v)
        out[position + 1] = UInt8(truncatingIfNeeded: v >> 8)
        out[position + 2] = UInt8(truncatingIfNeeded: v >> 16)
        out[position + 3] = UInt8(truncatingIfNeeded: v >> 24)
    }

    mutating func write(_ dataSet: DataSet) {
        var groupLengthValueAt: Int?
        var groupStart = 0
        var currentGroup: UInt16?
        for element in dataSet.elements {
            if element.tag.group != currentGroup {
                closeGroup(&groupLengthValueAt, groupStart: groupStart)
                currentGroup = element.tag.group
            }
            if element.tag.isGroupLength, element.tag.group != 0xFFFE {
                header(element.tag, vr: .UL, length: 4)
                groupLengthValueAt = out.count
                u32(0)
                groupStart = out.count
                continue
            }
            write(element)
        }
        closeGroup(&groupLengthValueAt, groupStart: groupStart)
    }

    private mutating func closeGroup(_ valueAt: inout Int?, groupStart: Int) {
        if let position = valueAt {
            patch32(at: position, UInt32(truncatingIfNeeded: out.count - groupStart))
            valueAt = nil
        }
    }

    /// Writes a tag, VR (explicit only) and length; returns the position of a 4-byte length, if any.
    @discardableResult
    mutating func header(_ tag: Tag, vr: VR, length: UInt32) -> Int {
        u16(tag.group)
        u16(tag.element)
        if explicitVR {
            let code = vr.code
            out.append(UInt8(truncatingIfNeeded: code >> 8))
            out.append(UInt8(truncatingIfNeeded: code))
            if vr.hasLongExplicitLength {
                u16(0)
            } else {
                u16(UInt16(truncatingIfNeeded: length))
                return out.count - 2
            }
        }
        let position = out.count
        u32(length)
        return position
    }

    mutating func write(_ element: DataElement) {
        switch element.value {
        case .bytes(let bytes):
            var vr = element.vr
            let padded = bytes.count + (bytes.count & 1)
            if explicitVR, !vr.hasLongExplicitLength, padded > 0xFFFF {
                vr = .UN  // too long for a 2-byte length field (PS3.5 §6.2.2 note)
            }
            header(element.tag, vr: vr, length: UInt32(truncatingIfNeeded: padded))
            out.append(contentsOf: bytes)
            if bytes.count & 1 == 1 { out.append(element.vr.paddingByte) }
        case .sequence(let items):
            let lengthAt = header(
                element.tag, vr: .SQ, length: element.hasUndefinedLength ? 0xFFFF_FFFF : 0)
            let start = out.count
            for item in items {
                u16(0xFFFE)
                u16(0xE000)
                let itemLengthAt = out.count
                u32(item.hasUndefinedLength ? 0xFFFF_FFFF : 0)
                let itemStart = out.count
                write(item.dataSet)
                if item.hasUndefinedLength {
                    u16(0xFFFE)
                    u16(0xE00D)
                    u32(0)
                } else {
                    patch32(at: itemLengthAt, UInt32(truncatingIfNeeded: out.count - itemStart))
                }
            }
            if element.hasUndefinedLength {
                u16(0xFFFE)
                u16(0xE0DD)
                u32(0)
            } else {
                patch32(at: lengthAt, UInt32(truncatingIfNeeded: out.count - start))
            }
        case .fragments(let pixelData):
            header(element.tag, vr: explicitVR ? .OB : element.vr, length: 0xFFFF_FFFF)
            for fragment in [pixelData.basicOffsetTable] + pixelData.fragments {
                u16(0xFFFE)
                u16(0xE000)
                u32(UInt32(truncatingIfNeeded: fragment.count + (fragment.count & 1)))
                out.append(contentsOf: fragment)
                if fragment.count & 1 == 1 { out.append(0) }
            }
            u16(0xFFFE)
            u16(0xE0DD)
            u32(0)
        }
    }
}
