import NIOCore

/// Writes PDU frames: type byte, reserved byte, u32 big-endian length, variable field (PS3.8 §9.3.1).
public struct PDUFrameEncoder: MessageToByteEncoder {
    public typealias OutboundIn = PDUFrame

    /// Creates an encoder.
    public init() {}

    public func encode(data: PDUFrame, out: inout ByteBuffer) throws {
        guard data.body.readableBytes <= Int(UInt32.max) else {
            throw PDUError.valueTooLong("PDU body", length: data.body.readableBytes, maximum: Int(UInt32.max))
        }
        out.writeInteger(data.type)
        out.writeInteger(UInt8(0))
        out.writeInteger(UInt32(data.body.readableBytes), endianness: .big)
        out.writeImmutableBuffer(data.body)
    }
}
