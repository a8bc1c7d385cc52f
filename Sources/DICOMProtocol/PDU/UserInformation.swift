import NIOCore

/// The User Information item, type 0x50, and its sub-items (PS3.8 §9.3.2.3, PS3.7 Annex D.3.3).
///
/// Encoding writes the sub-items in the order PS3.7 lists them and DCMTK sends them: 0x51, 0x52, 0x55, 0x53,
/// 0x54..., 0x56..., 0x57..., 0x58/0x59, then any preserved unknown sub-items.
public struct UserInformation: Sendable, Hashable {
    /// The largest P-DATA-TF variable field the sender can receive; `0` means unlimited (PS3.8 §D.1, sub-item 0x51).
    public var maximumLength: UInt32
    /// The sender's implementation class UID (sub-item 0x52).
    public var implementationClassUID: String
    /// The sender's implementation version name, 1 to 16 characters (sub-item 0x55).
    public var implementationVersionName: String?
    /// The asynchronous operations window (sub-item 0x53); absent means synchronous.
    public var asynchronousOperationsWindow: AsynchronousOperationsWindow?
    /// SCP/SCU role selections, one per SOP class (sub-items 0x54).
    public var roleSelections: [RoleSelection]
    /// SOP class extended negotiations (sub-items 0x56).
    public var extendedNegotiations: [SOPClassExtendedNegotiation]
    /// SOP class common extended negotiations (sub-items 0x57; A-ASSOCIATE-RQ only).
    public var commonExtendedNegotiations: [SOPClassCommonExtendedNegotiation]
    /// The requestor's user identity (sub-item 0x58; A-ASSOCIATE-RQ only).
    public var userIdentityRequest: UserIdentityRQ?
    /// The acceptor's user identity response (sub-item 0x59; A-ASSOCIATE-AC only).
    public var userIdentityResponse: UserIdentityAC?
    /// Sub-items this implementation does not interpret, preserved in order of appearance.
    public var unknownSubItems: [UnknownSubItem]

    /// Creates a user information item.
    public init(
        maximumLength: UInt32,
        implementationClassUID: String,
        implementationVersionName: String? = nil,
        asynchronousOperationsWindow: AsynchronousOperationsWindow? = nil,
        roleSelections: [RoleSelection] = [],
        extendedNegotiations: [SOPClassExtendedNegotiation] = [],
        commonExtendedNegotiations: [SOPClassCommonExtendedNegotiation] = [],
        userIdentityRequest: UserIdentityRQ? = nil,
        userIdentityResponse: UserIdentityAC? = nil,
        unknownSubItems: [UnknownSubItem] = []
    ) {
        self.maximumLength = maximumLength
        self.implementationClassUID = implementationClassUID
        self.implementationVersionName = implementationVersionName
        self.asynchronousOperationsWindow = asynchronousOperationsWindow
        self.roleSelections = roleSelections
        self.extendedNegotiations = extendedNegotiations
        self.commonExtendedNegotiations = commonExtendedNegotiations
        self.userIdentityRequest = userIdentityRequest
        self.userIdentityResponse = userIdentityResponse
        self.unknownSubItems = unknownSubItems
    }

    /// Decodes the body of a 0x50 item (the bytes after its 4-byte header).
    ///
    /// - Throws: ``PDUError`` if a sub-item is truncated or malformed, or the maximum length sub-item is missing.
    init(itemBody buffer: inout ByteBuffer) throws {
        var maximumLength: UInt32?
        var implementationClassUID: String?
        self.implementationVersionName = nil
        self.asynchronousOperationsWindow = nil
        self.roleSelections = []
        self.extendedNegotiations = []
        self.commonExtendedNegotiations = []
        self.userIdentityRequest = nil
        self.userIdentityResponse = nil
        self.unknownSubItems = []
        while buffer.readableBytes > 0 {
            let (type, reserved, item) = try buffer.readItem(in: "user information item")
            var body = item
            switch ItemType(rawValue: type) {
            case .maximumLength:
                guard maximumLength == nil else {
                    throw PDUError.unexpectedItem("a second maximum length sub-item", in: "user information item")
                }
                guard body.readableBytes == 4 else {
                    throw PDUError.invalidLength("maximum length sub-item", length: body.readableBytes, expected: "4")
                }
                maximumLength = try body.readPDUInteger("maximum length", as: UInt32.self)
            case .implementationClassUID:
                implementationClassUID = try body.readPDUString(length: body.readableBytes, "implementation class UID")
            case .implementationVersionName:
                self.implementationVersionName = try body.readPDUString(
                    length: body.readableBytes,
                    "implementation version name"
                )
            case .asynchronousOperationsWindow:
                self.asynchronousOperationsWindow = try AsynchronousOperationsWindow(itemBody: &body)
            case .roleSelection:
                self.roleSelections.append(try RoleSelection(itemBody: &body))
            case .sopClassExtendedNegotiation:
                self.extendedNegotiations.append(try SOPClassExtendedNegotiation(itemBody: &body))
            case .sopClassCommonExtendedNegotiation:
                self.commonExtendedNegotiations.append(
                    try SOPClassCommonExtendedNegotiation(version: reserved, itemBody: &body)
                )
            case .userIdentityRQ:
                self.userIdentityRequest = try UserIdentityRQ(itemBody: &body)
            case .userIdentityAC:
                self.userIdentityResponse = try UserIdentityAC(itemBody: &body)
            default:
                self.unknownSubItems.append(UnknownSubItem(type: type, reserved: reserved, body: body))
            }
        }
        guard let maximumLength else {
            throw PDUError.missingItem("maximum length sub-item (0x51)", in: "user information item")
        }
        self.maximumLength = maximumLength
        self.implementationClassUID = implementationClassUID ?? ""
    }

    /// Decodes a complete 0x50 item, header included.
    public init(from buffer: inout ByteBuffer) throws {
        let (type, _, item) = try buffer.readItem(in: "A-ASSOCIATE PDU")
        guard type == ItemType.userInformation.rawValue else {
            throw PDUError.unrecognizedItemType(type, in: "user information item")
        }
        var body = item
        try self.init(itemBody: &body)
    }

    /// Appends the complete 0x50 item.
    ///
    /// - Throws: ``PDUError/valueTooLong(_:length:maximum:)`` if the item or a field exceeds its length field.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.userInformation.rawValue, "user information item") { out in
            out.writeInteger(ItemType.maximumLength.rawValue)
            out.writeInteger(UInt8(0))
            out.writeInteger(UInt16(4), endianness: .big)
            out.writeInteger(self.maximumLength, endianness: .big)
            try out.writeTextItem(
                type: ItemType.implementationClassUID.rawValue,
                self.implementationClassUID,
                "implementation class UID"
            )
            if let name = self.implementationVersionName {
                try out.writeTextItem(
                    type: ItemType.implementationVersionName.rawValue, name, "implementation version name")
            }
            self.asynchronousOperationsWindow?.encode(into: &out)
            for selection in self.roleSelections { try selection.encode(into: &out) }
            for negotiation in self.extendedNegotiations { try negotiation.encode(into: &out) }
            for negotiation in self.commonExtendedNegotiations { try negotiation.encode(into: &out) }
            try self.userIdentityRequest?.encode(into: &out)
            try self.userIdentityResponse?.encode(into: &out)
            for item in self.unknownSubItems { try item.encode(into: &out) }
        }
    }
}
