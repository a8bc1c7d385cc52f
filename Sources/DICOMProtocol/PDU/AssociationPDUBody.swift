import NIOCore

/// The fields shared by the A-ASSOCIATE-RQ and A-ASSOCIATE-AC variable fields (PS3.8 §9.3.2, §9.3.3).
///
/// Layout: protocol version (u16), 2 reserved bytes, called AE title (16 bytes), calling AE title (16 bytes),
/// 32 reserved bytes, then variable items: one Application Context item (0x10), presentation context items,
/// and one User Information item (0x50).
struct AssociationPDUBody<Context: Sendable & Hashable>: Sendable, Hashable {
    var protocolVersion: UInt16
    var calledAETitle: String
    var callingAETitle: String
    var applicationContextName: String
    var presentationContexts: [Context]
    var userInformation: UserInformation

    init(
        protocolVersion: UInt16,
        calledAETitle: String,
        callingAETitle: String,
        applicationContextName: String,
        presentationContexts: [Context],
        userInformation: UserInformation
    ) {
        self.protocolVersion = protocolVersion
        self.calledAETitle = calledAETitle
        self.callingAETitle = callingAETitle
        self.applicationContextName = applicationContextName
        self.presentationContexts = presentationContexts
        self.userInformation = userInformation
    }

    init(
        body buffer: inout ByteBuffer,
        pduName: String,
        contextItemType: ItemType,
        decodeContext: (inout ByteBuffer) throws -> Context
    ) throws {
        guard buffer.readableBytes >= 68 else {
            throw PDUError.truncated("\(pduName) fixed fields", needed: 68, available: buffer.readableBytes)
        }
        self.protocolVersion = try buffer.readPDUInteger("protocol version")
        try buffer.skipReserved(2, in: pduName)
        self.calledAETitle = try buffer.readAETitle("called AE title")
        self.callingAETitle = try buffer.readAETitle("calling AE title")
        try buffer.skipReserved(32, in: pduName)

        var applicationContextName: String?
        var userInformation: UserInformation?
        self.presentationContexts = []
        while buffer.readableBytes > 0 {
            let (type, _, item) = try buffer.readItem(in: pduName)
            var body = item
            switch type {
            case ItemType.applicationContext.rawValue:
                guard applicationContextName == nil else {
                    throw PDUError.unexpectedItem("a second application context item", in: pduName)
                }
                applicationContextName = try body.readPDUString(length: body.readableBytes, "application context name")
            case contextItemType.rawValue:
                self.presentationContexts.append(try decodeContext(&body))
            case ItemType.userInformation.rawValue:
                guard userInformation == nil else {
                    throw PDUError.unexpectedItem("a second user information item", in: pduName)
                }
                userInformation = try UserInformation(itemBody: &body)
            default:
                throw PDUError.unrecognizedItemType(type, in: pduName)
            }
        }
        guard let applicationContextName else {
            throw PDUError.missingItem("application context item (0x10)", in: pduName)
        }
        guard let userInformation else {
            throw PDUError.missingItem("user information item (0x50)", in: pduName)
        }
        self.applicationContextName = applicationContextName
        self.userInformation = userInformation
    }

    func encode(into buffer: inout ByteBuffer, encodeContext: (Context, inout ByteBuffer) throws -> Void) throws {
        buffer.writeInteger(self.protocolVersion, endianness: .big)
        buffer.writeInteger(UInt16(0), endianness: .big)
        buffer.writeAETitle(self.calledAETitle)
        buffer.writeAETitle(self.callingAETitle)
        buffer.writeRepeatingByte(0, count: 32)
        try buffer.writeTextItem(
            type: ItemType.applicationContext.rawValue,
            self.applicationContextName,
            "application context name"
        )
        for context in self.presentationContexts {
            try encodeContext(context, &buffer)
        }
        try self.userInformation.encode(into: &buffer)
    }
}
