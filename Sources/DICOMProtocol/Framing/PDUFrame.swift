import NIOCore

/// One framed PDU: its type byte and a zero-copy slice of its variable field (PS3.8 §9.3.1).
///
/// A decoder that streams data sets (``PDUFrameDecoder/streamsDataSets``) also produces frames that
/// carry one PDV of a P-DATA-TF whose PDU has not fully arrived: ``streamedPDV`` holds the PDV's
/// header, `body` the fragment bytes only. Such a frame stands for a P-DATA-TF with that one PDV.
///
/// Decode it into a ``PDU`` with ``PDU/init(frame:)``.
public struct PDUFrame: Sendable, Hashable {
    /// The header of a streamed PDV (PS3.8 §9.3.5.1): its presentation context and message control header.
    public struct StreamedPDV: Sendable, Hashable {
        public var presentationContextID: UInt8
        public var messageControlHeader: PDV.MessageControlHeader

        public init(presentationContextID: UInt8, messageControlHeader: PDV.MessageControlHeader) {
            self.presentationContextID = presentationContextID
            self.messageControlHeader = messageControlHeader
        }
    }

    /// The PDU-type byte (one of ``PDUType``, validated by ``PDUFrameDecoder``).
    public var type: UInt8
    /// The variable field, after the 6-byte header; for a streamed PDV, the fragment only.
    public var body: ByteBuffer
    /// Set when the frame is one PDV of a P-DATA-TF (``body`` is its fragment).
    public var streamedPDV: StreamedPDV?

    /// Creates a frame.
    public init(type: UInt8, body: ByteBuffer, streamedPDV: StreamedPDV? = nil) {
        self.type = type
        self.body = body
        self.streamedPDV = streamedPDV
    }

    /// The PDU type, or `nil` if the type byte is unknown.
    public var pduType: PDUType? { PDUType(rawValue: self.type) }
}
