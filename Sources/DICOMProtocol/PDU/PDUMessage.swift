import NIOCore

/// A PDU type that decodes from and encodes to its variable field (PS3.8 §9.3.1).
///
/// Conforming types implement the body codec; this protocol adds the 6-byte PDU header
/// (type, reserved byte, u32 big-endian length) on top.
public protocol PDUMessage: Sendable, Hashable {
    /// The PDU-type byte of this PDU.
    static var pduType: PDUType { get }

    /// Decodes the variable field of the PDU: the bytes after the 6-byte header, exactly `length` of them.
    ///
    /// - Throws: ``PDUError`` on malformed input.
    init(body: inout ByteBuffer) throws

    /// Appends the variable field of the PDU (without the header).
    ///
    /// - Throws: ``PDUError`` if a field cannot be represented on the wire.
    func encodeBody(into buffer: inout ByteBuffer) throws
}

extension PDUMessage {
    /// Decodes a complete PDU, header included, consuming it from `buffer`.
    ///
    /// - Throws: ``PDUError`` if the type byte does not match, the PDU is truncated or the body is malformed.
    public init(from buffer: inout ByteBuffer) throws {
        var copy = buffer
        let type: UInt8 = try copy.readPDUInteger("PDU type")
        guard type == Self.pduType.rawValue else {
            throw PDUError.invalidParameterValue(
                "PDU type", value: "0x\(String(type, radix: 16)) (expected \(Self.pduType))")
        }
        try copy.skipReserved(1, in: "PDU header")
        let length: UInt32 = try copy.readPDUInteger("PDU length")
        guard Int(length) <= copy.readableBytes else {
            throw PDUError.truncated("PDU body", needed: Int(length), available: copy.readableBytes)
        }
        var body = try copy.readPDUSlice(length: Int(length), "PDU body")
        try self.init(body: &body)
        if body.readableBytes > 0 {
            throw PDUError.invalidLength(
                "\(Self.pduType) body", length: Int(length), expected: "\(Int(length) - body.readableBytes) used")
        }
        buffer = copy
    }

    /// Appends the complete PDU: header and variable field.
    ///
    /// - Throws: ``PDUError`` if a field cannot be represented on the wire.
    public func encode(into buffer: inout ByteBuffer) throws {
        buffer.writeInteger(Self.pduType.rawValue)
        buffer.writeInteger(UInt8(0))
        let lengthIndex = buffer.writerIndex
        buffer.writeInteger(UInt32(0), endianness: .big)
        let start = buffer.writerIndex
        try self.encodeBody(into: &buffer)
        let length = buffer.writerIndex - start
        guard length <= Int(UInt32.max) else {
            throw PDUError.valueTooLong("\(Self.pduType)", length: length, maximum: Int(UInt32.max))
        }
        buffer.setInteger(UInt32(length), at: lengthIndex, endianness: .big)
    }
}
