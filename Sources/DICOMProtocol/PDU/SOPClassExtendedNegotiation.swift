import NIOCore

/// The SOP Class Extended Negotiation sub-item, type 0x56 (PS3.7 §D.3.3.5).
public struct SOPClassExtendedNegotiation: Sendable, Hashable {
    /// The SOP class UID.
    public var sopClassUID: String
    /// The service-class-specific application information, kept as raw bytes.
    public var serviceClassApplicationInformation: ByteBuffer

    /// Creates an extended negotiation sub-item.
    public init(sopClassUID: String, serviceClassApplicationInformation: ByteBuffer) {
        self.sopClassUID = sopClassUID
        self.serviceClassApplicationInformation = serviceClassApplicationInformation
    }

    init(itemBody buffer: inout ByteBuffer) throws {
        self.sopClassUID = try buffer.readU16PrefixedString("extended negotiation SOP class UID")
        self.serviceClassApplicationInformation = try buffer.readPDUSlice(
            length: buffer.readableBytes,
            "service class application information"
        )
    }

    /// Appends the complete 0x56 sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.sopClassExtendedNegotiation.rawValue, "extended negotiation sub-item") {
            out in
            try out.writeU16PrefixedString(self.sopClassUID, "extended negotiation SOP class UID")
            out.writeImmutableBuffer(self.serviceClassApplicationInformation)
        }
    }
}
