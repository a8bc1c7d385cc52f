import NIOCore

/// Splits a TCP byte stream into PDU frames (PS3.8 §9.3.1).
///
/// The decoder peeks at the 6-byte header, rejects unknown PDU types and announced lengths above its caps
/// before buffering the body, and returns the body as a zero-copy slice. Errors are ``PDUError`` values;
/// the connection layer answers them with an A-ABORT (Evt19).
///
/// Two caps apply: ``maximumAssociationPDULength`` to A-ASSOCIATE, A-RELEASE and A-ABORT PDUs, and
/// ``maximumDataPDULength`` to P-DATA-TF, which should be the maximum length this side announced
/// (sub-item 0x51) plus a little slack; `0` there means "announced unlimited" and falls back to
/// ``defaultUnlimitedDataPDULength``.
public struct PDUFrameDecoder: NIOSingleStepByteToMessageDecoder {
    public typealias InboundOut = PDUFrame

    /// The default cap for association-related PDUs: 1 MiB, plenty for 128 contexts and user identity.
    public static let defaultMaximumAssociationPDULength: UInt32 = 1 << 20
    /// The cap used for P-DATA-TF when the configured maximum is 0 ("unlimited"): 64 MiB.
    public static let defaultUnlimitedDataPDULength: UInt32 = 64 << 20

    /// The largest accepted variable-field length of A-ASSOCIATE-RQ/AC/RJ, A-RELEASE-RQ/RP and A-ABORT.
    public var maximumAssociationPDULength: UInt32
    /// The largest accepted variable-field length of P-DATA-TF; `0` means ``defaultUnlimitedDataPDULength``.
    public var maximumDataPDULength: UInt32

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - maximumDataPDULength: The cap on P-DATA-TF lengths, usually the local maximum length (sub-item 0x51).
    ///   - maximumAssociationPDULength: The cap on other PDUs.
    public init(
        maximumDataPDULength: UInt32,
        maximumAssociationPDULength: UInt32 = PDUFrameDecoder.defaultMaximumAssociationPDULength
    ) {
        self.maximumDataPDULength = maximumDataPDULength
        self.maximumAssociationPDULength = maximumAssociationPDULength
    }

    /// The cap that applies to a PDU of `type`.
    public func maximumLength(for type: PDUType) -> UInt32 {
        switch type {
        case .dataTF:
            return self.maximumDataPDULength == 0 ? Self.defaultUnlimitedDataPDULength : self.maximumDataPDULength
        default:
            return self.maximumAssociationPDULength
        }
    }

    public mutating func decode(buffer: inout ByteBuffer) throws -> PDUFrame? {
        guard let typeByte = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        guard let type = PDUType(rawValue: typeByte) else {
            throw PDUError.unrecognizedPDUType(typeByte)
        }
        guard let length = buffer.getInteger(at: buffer.readerIndex + 2, endianness: .big, as: UInt32.self) else {
            return nil
        }
        let maximum = self.maximumLength(for: type)
        guard length <= maximum else {
            throw PDUError.pduTooLarge(type: typeByte, announced: length, maximum: maximum)
        }
        guard buffer.readableBytes >= 6 + Int(length) else { return nil }
        buffer.moveReaderIndex(forwardBy: 6)
        if type == .dataTF && length >= 32 * 1024 && buffer.readableBytes > Int(length) {
            // Part of the next PDU follows this one in the buffer. A slice would share the buffer's storage,
            // so ByteToMessageHandler's compaction of the remainder would copy it into freshly allocated
            // storage (copy-on-write, page faults on every large PDU). Copying this body out instead keeps
            // the cumulation buffer uniquely owned (compaction becomes a memmove in place). Measured on
            // px-listen, 300 x 512 KiB over storescu: 560 -> 500 ms CPU (median of 7, interleaved).
            var body = ByteBufferAllocator().buffer(capacity: Int(length))
            body.writeImmutableBuffer(buffer.getSlice(at: buffer.readerIndex, length: Int(length))!)
            buffer.moveReaderIndex(forwardBy: Int(length))
            return PDUFrame(type: typeByte, body: body)
        }
        let body = try buffer.readPDUSlice(length: Int(length), "PDU body")
        return PDUFrame(type: typeByte, body: body)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> PDUFrame? {
        if let frame = try self.decode(buffer: &buffer) {
            return frame
        }
        if buffer.readableBytes > 0 {
            throw PDUError.truncated("PDU at end of stream", needed: 6, available: buffer.readableBytes)
        }
        return nil
    }
}
