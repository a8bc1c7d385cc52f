import NIOCore

/// The SOP Class Common Extended Negotiation sub-item, type 0x57 (PS3.7 §D.3.3.6).
///
/// Its second header byte is the sub-item version (0) rather than a reserved byte.
public struct SOPClassCommonExtendedNegotiation: Sendable, Hashable {
    /// The sub-item version (byte 2 of the header).
    public var version: UInt8
    /// The SOP class UID.
    public var sopClassUID: String
    /// The service class UID.
    public var serviceClassUID: String
    /// The related general SOP class UIDs.
    public var relatedGeneralSOPClassUIDs: [String]

    /// Creates a common extended negotiation sub-item.
    public init(
        version: UInt8 = 0, sopClassUID: String, serviceClassUID: String, relatedGeneralSOPClassUIDs: [String] = []
    ) {
        self.version = version
        self.sopClassUID = sopClassUID
        self.serviceClassUID = serviceClassUID
        self.relatedGeneralSOPClassUIDs = relatedGeneralSOPClassUIDs
    }

    init(version: UInt8, itemBody buffer: inout ByteBuffer) throws {
        self.version = version
        self.sopClassUID = try buffer.readU16PrefixedString("common extended negotiation SOP class UID")
        self.serviceClassUID = try buffer.readU16PrefixedString("common extended negotiation service class UID")
        var related = try buffer.readU16PrefixedSlice("related general SOP class identification")
        self.relatedGeneralSOPClassUIDs = []
        while related.readableBytes > 0 {
            self.relatedGeneralSOPClassUIDs.append(try related.readU16PrefixedString("related general SOP class UID"))
        }
        guard buffer.readableBytes == 0 else {
            throw PDUError.invalidLength(
                "common extended negotiation sub-item",
                length: buffer.readableBytes,
                expected: "no trailing bytes"
            )
        }
    }

    /// Appends the complete 0x57 sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(
            type: ItemType.sopClassCommonExtendedNegotiation.rawValue,
            reserved: self.version,
            "common extended negotiation sub-item"
        ) { out in
            try out.writeU16PrefixedString(self.sopClassUID, "common extended negotiation SOP class UID")
            try out.writeU16PrefixedString(self.serviceClassUID, "common extended negotiation service class UID")
            let lengthIndex = out.writerIndex
            out.writeInteger(UInt16(0), endianness: .big)
            let start = out.writerIndex
            for uid in self.relatedGeneralSOPClassUIDs {
                try out.writeU16PrefixedString(uid, "related general SOP class UID")
            }
            let length = out.writerIndex - start
            guard length <= Int(UInt16.max) else {
                throw PDUError.valueTooLong(
                    "related general SOP class identification", length: length, maximum: Int(UInt16.max))
            }
            out.setInteger(UInt16(length), at: lengthIndex, endianness: .big)
        }
    }
}
