import NIOCore

/// The A-RELEASE-RP PDU, type 0x06 (PS3.8 §9.3.7): four reserved bytes.
public struct ReleaseRP: PDUMessage {
    public static var pduType: PDUType { .releaseRP }

    /// Creates an A-RELEASE-RP.
    public init() {}

    public init(body buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength("A-RELEASE-RP", length: buffer.readableBytes, expected: "4")
        }
        buffer.moveReaderIndex(forwardBy: 4)
    }

    public func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(0))
    }
}
