import NIOCore

/// A Presentation Data Value item inside a P-DATA-TF PDU (PS3.8 §9.3.5.1, Annex E.2).
///
/// Layout: item length (u32, covering the next two bytes and the fragment), presentation context ID (u8),
/// message control header (u8), then the fragment. The fragment is a zero-copy slice of the received PDU.
public struct PDV: Sendable, Hashable {
    /// The message control header byte (PS3.8 Annex E.2).
    public struct MessageControlHeader: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Creates a header from its two defined bits.
        public init(isCommand: Bool, isLastFragment: Bool) {
            self.rawValue = (isCommand ? 0x01 : 0x00) | (isLastFragment ? 0x02 : 0x00)
        }

        /// Bit 0: the fragment belongs to a command (1) or a data set (0).
        public var isCommand: Bool { self.rawValue & 0x01 != 0 }
        /// Bit 1: the fragment is the last of its command or data set.
        public var isLastFragment: Bool { self.rawValue & 0x02 != 0 }

        /// 0x00: data set, more fragments follow.
        public static let dataMore = MessageControlHeader(rawValue: 0x00)
        /// 0x01: command, more fragments follow.
        public static let commandMore = MessageControlHeader(rawValue: 0x01)
        /// 0x02: data set, last fragment.
        public static let dataLast = MessageControlHeader(rawValue: 0x02)
        /// 0x03: command, last fragment.
        public static let commandLast = MessageControlHeader(rawValue: 0x03)
    }

    /// The presentation context the fragment belongs to.
    public var presentationContextID: UInt8
    /// Command/data and last-fragment flags.
    public var messageControlHeader: MessageControlHeader
    /// The message fragment.
    public var data: ByteBuffer

    /// Creates a PDV.
    public init(presentationContextID: UInt8, messageControlHeader: MessageControlHeader, data: ByteBuffer) {
        self.presentationContextID = presentationContextID
        self.messageControlHeader = messageControlHeader
        self.data = data
    }

    /// The number of bytes the PDV item occupies on the wire (4-byte length + 2 + fragment).
    public var encodedLength: Int { 6 + self.data.readableBytes }

    /// Decodes one PDV item, slicing its fragment from `buffer` without copying.
    ///
    /// - Throws: ``PDUError`` if the item length is below 2 or runs past the end of the PDU.
    public init(from buffer: inout ByteBuffer) throws {
        let length: UInt32 = try buffer.readPDUInteger("PDV item length")
        guard length >= 2 else {
            throw PDUError.invalidLength("PDV item", length: Int(length), expected: "at least 2")
        }
        guard Int(length) <= buffer.readableBytes else {
            throw PDUError.lengthExceedsParent("PDV item", length: Int(length), available: buffer.readableBytes)
        }
        self.presentationContextID = try buffer.readPDUInteger("presentation context ID")
        let header: UInt8 = try buffer.readPDUInteger("message control header")
        guard header & 0xFC == 0 else {
            throw PDUError.invalidParameterValue("message control header", value: "0x\(String(header, radix: 16))")
        }
        self.messageControlHeader = MessageControlHeader(rawValue: header)
        self.data = try buffer.readPDUSlice(length: Int(length) - 2, "PDV fragment")
    }

    /// Appends the PDV item.
    ///
    /// - Throws: ``PDUError/valueTooLong(_:length:maximum:)`` if the fragment does not fit a u32 length.
    public func encode(into buffer: inout ByteBuffer) throws {
        let length = self.data.readableBytes + 2
        guard length <= Int(UInt32.max) else {
            throw PDUError.valueTooLong("PDV fragment", length: length, maximum: Int(UInt32.max))
        }
        buffer.writeInteger(UInt32(length), endianness: .big)
        buffer.writeInteger(self.presentationContextID)
        buffer.writeInteger(self.messageControlHeader.rawValue)
        buffer.writeImmutableBuffer(self.data)
    }
}
