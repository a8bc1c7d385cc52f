import NIOCore

/// The A-RELEASE-RQ PDU, type 0x05 (PS3.8 §9.3.6): four reserved bytes.
public struct ReleaseRQ: PDUMessage {
    public static var pduType: PDUType { .releaseRQ }

    /// Creates an A-RELEASE-RQ.
    public init() {}

    public init(body buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength("A-RELEASE-RQ", length: buffer.readableBytes, expected: "4")
        }
        buffer.moveReaderIndex(forwardBy: 4)
    }

    public func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(0))
    }
}
