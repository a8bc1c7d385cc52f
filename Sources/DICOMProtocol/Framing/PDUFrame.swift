import NIOCore

/// One framed PDU: its type byte and a zero-copy slice of its variable field (PS3.8 §9.3.1).
///
/// Decode it into a ``PDU`` with ``PDU/init(frame:)``.
public struct PDUFrame: Sendable, Hashable {
    /// The PDU-type byte (one of ``PDUType``, validated by ``PDUFrameDecoder``).
    public var type: UInt8
    /// The variable field, after the 6-byte header.
    public var body: ByteBuffer

    /// Creates a frame.
    public init(type: UInt8, body: ByteBuffer) {
        self.type = type
        self.body = body
    }

    /// The PDU type, or `nil` if the type byte is unknown.
    public var pduType: PDUType? { PDUType(rawValue: self.type) }
}
