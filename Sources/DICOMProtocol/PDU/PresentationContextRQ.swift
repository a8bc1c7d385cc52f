import NIOCore

/// A presentation context proposed in an A-ASSOCIATE-RQ: item type 0x20 (PS3.8 §9.3.2.2).
///
/// Carries one abstract syntax (sub-item 0x30) and one or more transfer syntaxes (sub-items 0x40).
/// UIDs are sent at their real length, without padding.
public struct PresentationContextRQ: Sendable, Hashable {
    /// The presentation context ID: an odd integer 1...255.
    public var id: UInt8
    /// The abstract syntax name (a SOP class UID).
    public var abstractSyntax: String
    /// The proposed transfer syntax UIDs, in the requestor's order of preference.
    public var transferSyntaxes: [String]
    /// The three reserved bytes after the ID, as received (PS3.8 §9.3.2.2).
    ///
    /// They are never tested; they are kept only so that a decoded PDU re-encodes byte for byte
    /// (DCMTK sends `00 FF 00`). New contexts use zeros.
    public var reservedBytes: ReservedBytes

    /// Three reserved bytes of a presentation context item.
    public struct ReservedBytes: Sendable, Hashable, ExpressibleByArrayLiteral, CustomStringConvertible {
        public var first: UInt8
        public var second: UInt8
        public var third: UInt8

        public init(arrayLiteral elements: UInt8...) {
            self.first = elements.count > 0 ? elements[0] : 0
            self.second = elements.count > 1 ? elements[1] : 0
            self.third = elements.count > 2 ? elements[2] : 0
        }

        public var description: String { "[\(self.first), \(self.second), \(self.third)]" }
    }

    /// Creates a proposed presentation context.
    public init(
        id: UInt8, abstractSyntax: String, transferSyntaxes: [String], reservedBytes: ReservedBytes = [0, 0, 0]
    ) {
        self.id = id
        self.abstractSyntax = abstractSyntax
        self.transferSyntaxes = transferSyntaxes
        self.reservedBytes = reservedBytes
    }

    /// Decodes the body of a 0x20 item (the bytes after its 4-byte header).
    ///
    /// - Throws: ``PDUError`` if a sub-item is truncated or the abstract syntax is missing.
    init(itemBody buffer: inout ByteBuffer) throws {
        self.id = try buffer.readPDUInteger("presentation context ID")
        var reserved: ReservedBytes = [0, 0, 0]
        reserved.first = try buffer.readPDUInteger("presentation context item reserved byte")
        reserved.second = try buffer.readPDUInteger("presentation context item reserved byte")
        reserved.third = try buffer.readPDUInteger("presentation context item reserved byte")
        self.reservedBytes = reserved
        var abstractSyntax: String?
        var transferSyntaxes: [String] = []
        while buffer.readableBytes > 0 {
            let (type, _, item) = try buffer.readItem(in: "presentation context item")
            var body = item
            switch type {
            case ItemType.abstractSyntax.rawValue:
                guard abstractSyntax == nil else {
                    throw PDUError.unexpectedItem("a second abstract syntax", in: "presentation context \(self.id)")
                }
                abstractSyntax = try body.readPDUString(length: body.readableBytes, "abstract syntax")
            case ItemType.transferSyntax.rawValue:
                transferSyntaxes.append(try body.readPDUString(length: body.readableBytes, "transfer syntax"))
            default:
                throw PDUError.unrecognizedItemType(type, in: "presentation context item (RQ)")
            }
        }
        guard let abstractSyntax else {
            throw PDUError.missingItem("abstract syntax sub-item", in: "presentation context \(self.id)")
        }
        guard !transferSyntaxes.isEmpty else {
            throw PDUError.missingItem("transfer syntax sub-item", in: "presentation context \(self.id)")
        }
        self.abstractSyntax = abstractSyntax
        self.transferSyntaxes = transferSyntaxes
    }

    /// Decodes a complete 0x20 item, header included.
    public init(from buffer: inout ByteBuffer) throws {
        let (type, _, item) = try buffer.readItem(in: "A-ASSOCIATE-RQ")
        var body = item
        guard type == ItemType.presentationContextRQ.rawValue else {
            throw PDUError.unrecognizedItemType(type, in: "presentation context item (RQ)")
        }
        try self.init(itemBody: &body)
    }

    /// Appends the complete 0x20 item.
    ///
    /// - Throws: ``PDUError/valueTooLong(_:length:maximum:)`` if the item exceeds 65535 bytes.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.presentationContextRQ.rawValue, "presentation context item") { out in
            out.writeInteger(self.id)
            out.writeInteger(self.reservedBytes.first)
            out.writeInteger(self.reservedBytes.second)
            out.writeInteger(self.reservedBytes.third)
            try out.writeTextItem(type: ItemType.abstractSyntax.rawValue, self.abstractSyntax, "abstract syntax")
            for syntax in self.transferSyntaxes {
                try out.writeTextItem(type: ItemType.transferSyntax.rawValue, syntax, "transfer syntax")
            }
        }
    }
}
