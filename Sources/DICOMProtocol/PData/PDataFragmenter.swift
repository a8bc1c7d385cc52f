import NIOCore

/// Splits one DIMSE message into P-DATA-TF PDUs, one PDV per PDU (PS3.8 §9.3.5, Annex E; PS3.7 §9.3.1).
///
/// The command comes first, then the optional data set. Each fragment holds at most
/// `peerMaximumPDULength - 6` bytes (the PDV item's 4-byte length, context ID and message control header
/// take the rest of the peer's maximum variable field). Fragments are zero-copy slices of the inputs.
/// Message control headers: 0x01/0x03 for command fragments, 0x00/0x02 for data set fragments.
///
/// It is a lazy `Sequence`, so large data sets never produce a large array of PDUs.
public struct PDataFragmenter: Sequence, Sendable {
    /// The presentation context of the message.
    public let presentationContextID: UInt8
    /// The encoded command set (always Implicit VR Little Endian).
    public let command: ByteBuffer
    /// The encoded data set, if the message has one.
    public let dataset: ByteBuffer?
    /// The largest fragment size in bytes.
    public let fragmentLength: Int

    /// Creates a fragmenter.
    ///
    /// - Parameters:
    ///   - presentationContextID: The accepted presentation context to send on.
    ///   - command: The command set bytes.
    ///   - dataset: The data set bytes, or `nil` when the command has no data set.
    ///   - peerMaximumPDULength: The peer's maximum length (sub-item 0x51); `0` means unlimited.
    /// - Throws: ``PDUError/invalidMaximumPDULength(_:)`` if the maximum is between 1 and 6.
    public init(presentationContextID: UInt8, command: ByteBuffer, dataset: ByteBuffer?, peerMaximumPDULength: UInt32)
        throws
    {
        self.presentationContextID = presentationContextID
        self.command = command
        self.dataset = dataset
        self.fragmentLength = try Self.fragmentLength(forPeerMaximumPDULength: peerMaximumPDULength)
    }

    /// The largest fragment size for a peer maximum PDU length (`0` = unlimited, capped to fit a u32 PDV length).
    ///
    /// - Throws: ``PDUError/invalidMaximumPDULength(_:)`` if the maximum is between 1 and 6.
    public static func fragmentLength(forPeerMaximumPDULength maximum: UInt32) throws -> Int {
        if maximum == 0 {
            return Int(UInt32.max) - 6
        }
        guard maximum > 6 else {
            throw PDUError.invalidMaximumPDULength(maximum)
        }
        return Int(maximum) - 6
    }

    public func makeIterator() -> Iterator {
        Iterator(fragmenter: self)
    }

    /// Produces the P-DATA-TF PDUs in order.
    public struct Iterator: IteratorProtocol, Sendable {
        private let fragmenter: PDataFragmenter
        private var offset: Int
        private var inDataset: Bool
        private var finished: Bool

        init(fragmenter: PDataFragmenter) {
            self.fragmenter = fragmenter
            self.offset = 0
            self.inDataset = false
            self.finished = false
        }

        public mutating func next() -> DataTF? {
            guard !self.finished else { return nil }
            let source = self.inDataset ? (self.fragmenter.dataset ?? ByteBuffer()) : self.fragmenter.command
            let remaining = source.readableBytes - self.offset
            let length = Swift.min(remaining, self.fragmenter.fragmentLength)
            let slice =
                source.getSlice(at: source.readerIndex + self.offset, length: length) ?? ByteBuffer()
            self.offset += length
            let isLast = self.offset >= source.readableBytes
            let header = PDV.MessageControlHeader(isCommand: !self.inDataset, isLastFragment: isLast)
            if isLast {
                if !self.inDataset && self.fragmenter.dataset != nil {
                    self.inDataset = true
                    self.offset = 0
                } else {
                    self.finished = true
                }
            }
            return DataTF(
                PDV(
                    presentationContextID: self.fragmenter.presentationContextID, messageControlHeader: header,
                    data: slice))
        }
    }
}
