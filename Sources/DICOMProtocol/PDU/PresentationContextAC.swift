import NIOCore

/// The result/reason field of a presentation context in an A-ASSOCIATE-AC (PS3.8 §9.3.3.2, Table 9-18).
public struct PresentationContextResult: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0: acceptance.
    public static let acceptance = PresentationContextResult(rawValue: 0)
    /// 1: user-rejection.
    public static let userRejection = PresentationContextResult(rawValue: 1)
    /// 2: no-reason (provider rejection).
    public static let noReason = PresentationContextResult(rawValue: 2)
    /// 3: abstract-syntax-not-supported (provider rejection).
    public static let abstractSyntaxNotSupported = PresentationContextResult(rawValue: 3)
    /// 4: transfer-syntaxes-not-supported (provider rejection).
    public static let transferSyntaxesNotSupported = PresentationContextResult(rawValue: 4)

    public var description: String {
        switch self.rawValue {
        case 0: return "Accepted"
        case 1: return "User Rejection"
        case 2: return "Provider Rejection (No Reason)"
        case 3: return "Abstract Syntax Not Supported"
        case 4: return "Transfer Syntaxes Not Supported"
        default: return "Unknown Result (\(self.rawValue))"
        }
    }
}

/// A presentation context answered in an A-ASSOCIATE-AC: item type 0x21 (PS3.8 §9.3.3.2).
///
/// When the context is not accepted the transfer syntax "shall not be tested"; peers send a
/// zero-length 0x40 sub-item or none at all, both decoding to `transferSyntax == nil`.
public struct PresentationContextAC: Sendable, Hashable {
    /// The presentation context ID, echoing the one proposed.
    public var id: UInt8
    /// Whether and why the context was accepted or rejected.
    public var result: PresentationContextResult
    /// The transfer syntax selected by the acceptor; meaningful only when accepted.
    public var transferSyntax: String?

    /// Creates an answered presentation context.
    public init(id: UInt8, result: PresentationContextResult, transferSyntax: String?) {
        self.id = id
        self.result = result
        self.transferSyntax = transferSyntax
    }

    /// Decodes the body of a 0x21 item (the bytes after its 4-byte header).
    init(itemBody buffer: inout ByteBuffer) throws {
        self.id = try buffer.readPDUInteger("presentation context ID")
        try buffer.skipReserved(1, in: "presentation context item (AC)")
        self.result = PresentationContextResult(rawValue: try buffer.readPDUInteger("result/reason"))
        try buffer.skipReserved(1, in: "presentation context item (AC)")
        self.transferSyntax = nil
        var seenTransferSyntax = false
        while buffer.readableBytes > 0 {
            let (type, _, item) = try buffer.readItem(in: "presentation context item (AC)")
            var body = item
            guard type == ItemType.transferSyntax.rawValue else {
                throw PDUError.unrecognizedItemType(type, in: "presentation context item (AC)")
            }
            guard !seenTransferSyntax else {
                throw PDUError.unexpectedItem("a second transfer syntax", in: "presentation context \(self.id) (AC)")
            }
            seenTransferSyntax = true
            let uid = try body.readPDUString(length: body.readableBytes, "transfer syntax")
            self.transferSyntax = uid.isEmpty ? nil : uid
        }
        if self.result == .acceptance && self.transferSyntax == nil {
            throw PDUError.missingItem("transfer syntax sub-item", in: "accepted presentation context \(self.id)")
        }
    }

    /// Decodes a complete 0x21 item, header included.
    public init(from buffer: inout ByteBuffer) throws {
        let (type, _, item) = try buffer.readItem(in: "A-ASSOCIATE-AC")
        var body = item
        guard type == ItemType.presentationContextAC.rawValue else {
            throw PDUError.unrecognizedItemType(type, in: "presentation context item (AC)")
        }
        try self.init(itemBody: &body)
    }

    /// Appends the complete 0x21 item; a rejected context gets a zero-length transfer syntax sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.presentationContextAC.rawValue, "presentation context item (AC)") { out in
            out.writeInteger(self.id)
            out.writeInteger(UInt8(0))
            out.writeInteger(self.result.rawValue)
            out.writeInteger(UInt8(0))
            try out.writeTextItem(type: ItemType.transferSyntax.rawValue, self.transferSyntax ?? "", "transfer syntax")
        }
    }
}
