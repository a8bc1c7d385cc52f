import NIOCore

/// Writes typed ``PDU`` values straight into the outbound buffer, without an intermediate body copy
/// (PS3.8 §9.3).
public struct PDUEncoder: MessageToByteEncoder {
    public typealias OutboundIn = PDU

    /// Creates an encoder.
    public init() {}

    public func encode(data: PDU, out: inout ByteBuffer) throws {
        try data.encode(into: &out)
    }
}
