import NIOCore

/// A user-information sub-item this implementation does not interpret, kept verbatim (PS3.7 §D.3.3).
///
/// Unknown sub-items are not fatal: they are preserved so a PDU re-encodes byte for byte.
public struct UnknownSubItem: Sendable, Hashable {
    /// The sub-item type byte.
    public var type: UInt8
    /// The second header byte (reserved, or a version for some sub-items).
    public var reserved: UInt8
    /// The sub-item body after its 4-byte header.
    public var body: ByteBuffer

    /// Creates an opaque sub-item.
    public init(type: UInt8, reserved: UInt8 = 0, body: ByteBuffer) {
        self.type = type
        self.reserved = reserved
        self.body = body
    }

    /// Appends the complete sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: self.type, reserved: self.reserved, "sub-item 0x\(String(self.type, radix: 16))") {
            out in
            out.writeImmutableBuffer(self.body)
        }
    }
}
