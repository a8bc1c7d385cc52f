import NIOCore

/// A-RELEASE-RQ and A-RELEASE-RP (PS3.8 §9.3.6, §9.3.7): PDUs whose variable field is four reserved
/// bytes, decoded and encoded here once for both.
public protocol ReleasePDU: PDUMessage {
    /// Creates the PDU.
    init()
}

extension ReleasePDU {
    public init(body buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength("\(Self.pduType)", length: buffer.readableBytes, expected: "4")
        }
        buffer.moveReaderIndex(forwardBy: 4)
        self.init()
    }

    public func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt32(0))
    }
}
