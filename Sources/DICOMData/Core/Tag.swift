/// A data element tag: a group number and an element number (PS3.5 §7.1).
///
/// Tags order the elements of a dataset: ascending by group, then element (PS3.5 §7.1).
public struct Tag: Hashable, Comparable, Sendable {
    /// The tag as one 32-bit number, group in the high half.
    public let rawValue: UInt32

    @inlinable
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    @inlinable
    public init(_ group: UInt16, _ element: UInt16) {
        self.rawValue = UInt32(group) << 16 | UInt32(element)
    }

    @inlinable public var group: UInt16 { UInt16(truncatingIfNeeded: rawValue >> 16) }
    @inlinable public var element: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    /// Private tags live in odd groups (PS3.5 §7.8.1); groups 0001, 0003, 0005 and 0007 are not usable.
    @inlinable public var isPrivate: Bool { group & 1 == 1 }

    /// A private creator element, (gggg,0010-00FF) in an odd group (PS3.5 §7.8.1).
    @inlinable public var isPrivateCreator: Bool { isPrivate && element >= 0x0010 && element <= 0x00FF }

    /// A group length element, (gggg,0000).
    @inlinable public var isGroupLength: Bool { element == 0 }

    @inlinable
    public static func < (lhs: Tag, rhs: Tag) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Eight upper-case hexadecimal digits, the form the DICOM JSON Model uses as a key (PS3.18 §F.2.1.1).
    public var hexString: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8](repeating: 0, count: 8)
        var value = rawValue
        for i in stride(from: 7, through: 0, by: -1) {
            out[i] = digits[Int(value & 0xF)]
            value >>= 4
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses eight hexadecimal digits (`00100010`), `gggg,eeee` or `(gggg,eeee)`.
    public init?(parsing text: some StringProtocol) {
        var hex = Substring(text)
        if hex.hasPrefix("("), hex.hasSuffix(")") { hex = hex.dropFirst().dropLast() }
        let digits = hex.filter { $0 != "," }
        guard digits.count == 8, hex.count == 8 || (hex.count == 9 && hex.dropFirst(4).first == ","),
            let value = UInt32(digits, radix: 16)
        else { return nil }
        self.init(rawValue: value)
    }
}

extension Tag: CustomStringConvertible {
    /// `(gggg,eeee)` in lower-case hexadecimal, as DCMTK prints tags.
    public var description: String {
        let h = hexString.lowercased()
        return "(\(h.prefix(4)),\(h.suffix(4)))"
    }
}

extension Tag {
    // Delimitation items (PS3.5 §7.5).
    public static let item = Tag(0xFFFE, 0xE000)
    public static let itemDelimitationItem = Tag(0xFFFE, 0xE00D)
    public static let sequenceDelimitationItem = Tag(0xFFFE, 0xE0DD)

    // Tags the data layer itself needs; the full dictionary is in ``DataDictionary``.
    public static let fileMetaInformationGroupLength = Tag(0x0002, 0x0000)
    public static let fileMetaInformationVersion = Tag(0x0002, 0x0001)
    public static let mediaStorageSOPClassUID = Tag(0x0002, 0x0002)
    public static let mediaStorageSOPInstanceUID = Tag(0x0002, 0x0003)
    public static let transferSyntaxUID = Tag(0x0002, 0x0010)
    public static let implementationClassUID = Tag(0x0002, 0x0012)
    public static let implementationVersionName = Tag(0x0002, 0x0013)
    public static let sourceApplicationEntityTitle = Tag(0x0002, 0x0016)
    public static let specificCharacterSet = Tag(0x0008, 0x0005)
    public static let sopClassUID = Tag(0x0008, 0x0016)
    public static let sopInstanceUID = Tag(0x0008, 0x0018)
    public static let studyDate = Tag(0x0008, 0x0020)
    public static let seriesDate = Tag(0x0008, 0x0021)
    public static let queryRetrieveLevel = Tag(0x0008, 0x0052)
    public static let modality = Tag(0x0008, 0x0060)
    public static let studyDescription = Tag(0x0008, 0x1030)
    public static let seriesDescription = Tag(0x0008, 0x103E)
    public static let patientName = Tag(0x0010, 0x0010)
    public static let patientID = Tag(0x0010, 0x0020)
    public static let studyInstanceUID = Tag(0x0020, 0x000D)
    public static let seriesInstanceUID = Tag(0x0020, 0x000E)
    public static let instanceNumber = Tag(0x0020, 0x0013)
    public static let pixelRepresentation = Tag(0x0028, 0x0103)
    public static let pixelData = Tag(0x7FE0, 0x0010)
}
