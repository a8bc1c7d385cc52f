import NIOCore

/// Any of the seven upper-layer PDUs (PS3.8 §9.3); the PDU-type byte decides how a frame is decoded.
public enum PDU: Sendable, Hashable {
    /// A-ASSOCIATE-RQ (0x01).
    case associateRQ(AssociateRQ)
    /// A-ASSOCIATE-AC (0x02).
    case associateAC(AssociateAC)
    /// A-ASSOCIATE-RJ (0x03).
    case associateRJ(AssociateRJ)
    /// P-DATA-TF (0x04).
    case dataTF(DataTF)
    /// A-RELEASE-RQ (0x05).
    case releaseRQ
    /// A-RELEASE-RP (0x06).
    case releaseRP
    /// A-ABORT (0x07).
    case abort(Abort)

    /// The PDU-type byte.
    public var type: PDUType {
        switch self {
        case .associateRQ: return .associateRQ
        case .associateAC: return .associateAC
        case .associateRJ: return .associateRJ
        case .dataTF: return .dataTF
        case .releaseRQ: return .releaseRQ
        case .releaseRP: return .releaseRP
        case .abort: return .abort
        }
    }

    /// Decodes a PDU from its type byte and variable field.
    ///
    /// - Throws: ``PDUError/unrecognizedPDUType(_:)`` for an unknown type, or any decoding error of the body.
    ///   The whole body must be consumed.
    public init(type: UInt8, body: ByteBuffer) throws {
        guard let pduType = PDUType(rawValue: type) else {
            throw PDUError.unrecognizedPDUType(type)
        }
        var body = body
        let length = body.readableBytes
        switch pduType {
        case .associateRQ: self = .associateRQ(try AssociateRQ(body: &body))
        case .associateAC: self = .associateAC(try AssociateAC(body: &body))
        case .associateRJ: self = .associateRJ(try AssociateRJ(body: &body))
        case .dataTF: self = .dataTF(try DataTF(body: &body))
        case .releaseRQ:
            _ = try ReleaseRQ(body: &body)
            self = .releaseRQ
        case .releaseRP:
            _ = try ReleaseRP(body: &body)
            self = .releaseRP
        case .abort: self = .abort(try Abort(body: &body))
        }
        guard body.readableBytes == 0 else {
            throw PDUError.invalidLength(
                "\(pduType) body", length: length, expected: "\(length - body.readableBytes) used")
        }
    }

    /// Decodes a PDU from a frame produced by ``PDUFrameDecoder``.
    public init(frame: PDUFrame) throws {
        if let streamed = frame.streamedPDV {
            self = .dataTF(
                DataTF(
                    PDV(
                        presentationContextID: streamed.presentationContextID,
                        messageControlHeader: streamed.messageControlHeader, data: frame.body)))
            return
        }
        try self.init(type: frame.type, body: frame.body)
    }

    /// Decodes one complete PDU, header included, consuming it from `buffer`.
    ///
    /// - Throws: ``PDUError`` if the PDU is truncated, of unknown type or malformed.
    public init(from buffer: inout ByteBuffer) throws {
        var copy = buffer
        guard copy.readableBytes >= 6 else {
            throw PDUError.truncated("PDU header", needed: 6, available: copy.readableBytes)
        }
        let type: UInt8 = try copy.readPDUInteger("PDU type")
        try copy.skipReserved(1, in: "PDU header")
        let length: UInt32 = try copy.readPDUInteger("PDU length")
        guard Int(length) <= copy.readableBytes else {
            throw PDUError.truncated("PDU body", needed: Int(length), available: copy.readableBytes)
        }
        let body = try copy.readPDUSlice(length: Int(length), "PDU body")
        try self.init(type: type, body: body)
        buffer = copy
    }

    /// Appends the complete PDU, header included.
    ///
    /// - Throws: ``PDUError`` if a field cannot be represented on the wire.
    public func encode(into buffer: inout ByteBuffer) throws {
        switch self {
        case .associateRQ(let pdu): try pdu.encode(into: &buffer)
        case .associateAC(let pdu): try pdu.encode(into: &buffer)
        case .associateRJ(let pdu): try pdu.encode(into: &buffer)
        case .dataTF(let pdu): try pdu.encode(into: &buffer)
        case .releaseRQ: try ReleaseRQ().encode(into: &buffer)
        case .releaseRP: try ReleaseRP().encode(into: &buffer)
        case .abort(let pdu): try pdu.encode(into: &buffer)
        }
    }
}
