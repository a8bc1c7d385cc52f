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
///
/// With ``streamsDataSets``, a P-DATA-TF that has not fully arrived is not collected: its PDV headers are
/// checked against the PDU length (PS3.8 §9.3.5.1) and the bytes of each data set PDV are handed on as
/// they come, as frames with a ``PDUFrame/streamedPDV`` (the last-fragment bit only on the piece that
/// ends the PDV). Each read is then usually consumed whole, so `ByteToMessageHandler` neither appends
/// the next read to a remainder nor compacts one: received data set bytes are not copied in user space.
/// Command PDVs are still collected whole (they are short, and ``PDUFrame/streamedPDV`` commands must
/// be complete for C-CANCEL detection).
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
    /// Whether data set PDVs of a P-DATA-TF that has not fully arrived are handed on piece by piece.
    public var streamsDataSets: Bool

    /// Where the decoder is in the byte stream.
    private enum State: Sendable, Hashable {
        /// At a PDU boundary.
        case pduHeader
        /// Inside a streamed P-DATA-TF, `pduRemaining` bytes of its variable field left, at a PDV header.
        case pdvHeader(pduRemaining: Int)
        /// Inside a data set PDV of a streamed P-DATA-TF.
        case pdvData(pduRemaining: Int, pdvRemaining: Int, contextID: UInt8, control: UInt8)
    }
    private var state: State = .pduHeader

    /// Creates a decoder.
    ///
    /// - Parameters:
    ///   - maximumDataPDULength: The cap on P-DATA-TF lengths, usually the local maximum length (sub-item 0x51).
    ///   - maximumAssociationPDULength: The cap on other PDUs.
    ///   - streamsDataSets: Hand on data set PDVs of partly received P-DATA-TF PDUs piece by piece.
    public init(
        maximumDataPDULength: UInt32,
        maximumAssociationPDULength: UInt32 = PDUFrameDecoder.defaultMaximumAssociationPDULength,
        streamsDataSets: Bool = false
    ) {
        self.maximumDataPDULength = maximumDataPDULength
        self.maximumAssociationPDULength = maximumAssociationPDULength
        self.streamsDataSets = streamsDataSets
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
        switch self.state {
        case .pduHeader:
            return try self.decodePDU(buffer: &buffer)
        case .pdvHeader(let pduRemaining):
            return try self.decodePDVHeader(buffer: &buffer, pduRemaining: pduRemaining)
        case .pdvData(let pduRemaining, let pdvRemaining, let contextID, let control):
            guard buffer.readableBytes > 0 else { return nil }
            let count = min(buffer.readableBytes, pdvRemaining)
            let piece = buffer.readSlice(length: count)!
            let left = pdvRemaining - count
            if left > 0 {
                self.state = .pdvData(
                    pduRemaining: pduRemaining - count, pdvRemaining: left, contextID: contextID, control: control)
            } else {
                self.state = pduRemaining - count == 0 ? .pduHeader : .pdvHeader(pduRemaining: pduRemaining - count)
            }
            // Only the piece that ends the PDV keeps its last-fragment bit.
            let header = PDV.MessageControlHeader(rawValue: left > 0 ? control & ~0x02 : control)
            return PDUFrame(
                type: 0x04, body: piece,
                streamedPDV: .init(presentationContextID: contextID, messageControlHeader: header))
        }
    }

    /// At a PDU boundary: a whole PDU as one frame, or the start of a streamed P-DATA-TF.
    private mutating func decodePDU(buffer: inout ByteBuffer) throws -> PDUFrame? {
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
        guard buffer.readableBytes >= 6 + Int(length) else {
            guard type == .dataTF && self.streamsDataSets else { return nil }
            buffer.moveReaderIndex(forwardBy: 6)
            return try self.decodePDVHeader(buffer: &buffer, pduRemaining: Int(length))
        }
        buffer.moveReaderIndex(forwardBy: 6)
        if !self.streamsDataSets && type == .dataTF && length >= 32 * 1024 && buffer.readableBytes > Int(length) {
            // Part of the next PDU follows this one in the buffer. A slice would share the buffer's storage,
            // so ByteToMessageHandler's compaction of the remainder would copy it into freshly allocated
            // storage (copy-on-write, page faults on every large PDU). Copying this body out instead keeps
            // the cumulation buffer uniquely owned (compaction becomes a memmove in place), which lowered
            // px-listen's CPU time (docs/benchmarks.rst).
            // (A streaming decoder does not get here often: it consumes the partial PDU that follows.)
            var body = ByteBufferAllocator().buffer(capacity: Int(length))
            body.writeImmutableBuffer(buffer.getSlice(at: buffer.readerIndex, length: Int(length))!)
            buffer.moveReaderIndex(forwardBy: Int(length))
            return PDUFrame(type: typeByte, body: body)
        }
        let body = try buffer.readPDUSlice(length: Int(length), "PDU body")
        return PDUFrame(type: typeByte, body: body)
    }

    /// Inside a streamed P-DATA-TF, at a PDV item header (PS3.8 §9.3.5.1): checks it against what is left of
    /// the PDU, then hands on a data set PDV's first bytes, or a whole command PDV once it is all here.
    private mutating func decodePDVHeader(buffer: inout ByteBuffer, pduRemaining: Int) throws -> PDUFrame? {
        self.state = .pdvHeader(pduRemaining: pduRemaining)
        guard pduRemaining >= 6 else {
            throw PDUError.invalidLength(
                "PDV item in P-DATA-TF", length: pduRemaining, expected: "at least 6 bytes left in the PDU")
        }
        guard let itemLength = buffer.getInteger(at: buffer.readerIndex, endianness: .big, as: UInt32.self) else {
            return nil
        }
        guard itemLength >= 2 else {
            throw PDUError.invalidLength("PDV item", length: Int(itemLength), expected: "at least 2")
        }
        guard Int(itemLength) <= pduRemaining - 4 else {
            throw PDUError.lengthExceedsParent("PDV item", length: Int(itemLength), available: pduRemaining - 4)
        }
        guard let contextID = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self),
            let control = buffer.getInteger(at: buffer.readerIndex + 5, as: UInt8.self)
        else { return nil }
        let dataLength = Int(itemLength) - 2
        let afterItem = pduRemaining - 6 - dataLength
        if control & 0x01 != 0 {
            // A command fragment: whole, or not yet.
            guard buffer.readableBytes >= 6 + dataLength else { return nil }
            buffer.moveReaderIndex(forwardBy: 6)
            let data = buffer.readSlice(length: dataLength)!
            self.state = afterItem == 0 ? .pduHeader : .pdvHeader(pduRemaining: afterItem)
            return PDUFrame(
                type: 0x04, body: data,
                streamedPDV: .init(
                    presentationContextID: contextID, messageControlHeader: PDV.MessageControlHeader(rawValue: control))
            )
        }
        buffer.moveReaderIndex(forwardBy: 6)
        if dataLength == 0 {
            self.state = afterItem == 0 ? .pduHeader : .pdvHeader(pduRemaining: afterItem)
            return PDUFrame(
                type: 0x04, body: ByteBuffer(),
                streamedPDV: .init(
                    presentationContextID: contextID, messageControlHeader: PDV.MessageControlHeader(rawValue: control))
            )
        }
        self.state = .pdvData(
            pduRemaining: pduRemaining - 6, pdvRemaining: dataLength, contextID: contextID, control: control)
        return try self.decode(buffer: &buffer)
    }

    public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> PDUFrame? {
        if let frame = try self.decode(buffer: &buffer) {
            return frame
        }
        if self.state != .pduHeader {
            throw PDUError.truncated("P-DATA-TF at end of stream", needed: 1, available: 0)
        }
        if buffer.readableBytes > 0 {
            throw PDUError.truncated("PDU at end of stream", needed: 6, available: buffer.readableBytes)
        }
        return nil
    }
}
