import NIOCore

/// The Asynchronous Operations Window sub-item, type 0x53 (PS3.7 §D.3.3.3).
///
/// `1`/`1` means synchronous operation; `0` means unlimited.
public struct AsynchronousOperationsWindow: Sendable, Hashable {
    /// Maximum number of outstanding operations the sender may invoke.
    public var maximumOperationsInvoked: UInt16
    /// Maximum number of outstanding operations the sender may perform.
    public var maximumOperationsPerformed: UInt16

    /// Creates a window; the default is synchronous operation.
    public init(maximumOperationsInvoked: UInt16 = 1, maximumOperationsPerformed: UInt16 = 1) {
        self.maximumOperationsInvoked = maximumOperationsInvoked
        self.maximumOperationsPerformed = maximumOperationsPerformed
    }

    init(itemBody buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength(
                "asynchronous operations window sub-item", length: buffer.readableBytes, expected: "4")
        }
        self.maximumOperationsInvoked = try buffer.readPDUInteger("maximum operations invoked")
        self.maximumOperationsPerformed = try buffer.readPDUInteger("maximum operations performed")
    }

    /// Appends the complete 0x53 sub-item.
    public func encode(into buffer: inout ByteBuffer) {
        buffer.writeInteger(ItemType.asynchronousOperationsWindow.rawValue)
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(UInt16(4), endianness: .big)
        buffer.writeInteger(self.maximumOperationsInvoked, endianness: .big)
        buffer.writeInteger(self.maximumOperationsPerformed, endianness: .big)
    }
}
