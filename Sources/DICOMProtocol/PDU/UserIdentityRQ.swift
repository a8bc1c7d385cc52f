import NIOCore

/// The User Identity sub-item of an A-ASSOCIATE-RQ, type 0x58 (PS3.7 §D.3.3.7.1).
public struct UserIdentityRQ: Sendable, Hashable {
    /// The user identity type (PS3.7 Table D.3-14).
    public struct IdentityType: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 1: username as a UTF-8 string.
        public static let username = IdentityType(rawValue: 1)
        /// 2: username and passcode.
        public static let usernameAndPasscode = IdentityType(rawValue: 2)
        /// 3: Kerberos service ticket.
        public static let kerberos = IdentityType(rawValue: 3)
        /// 4: SAML assertion.
        public static let saml = IdentityType(rawValue: 4)
        /// 5: JSON Web Token.
        public static let jwt = IdentityType(rawValue: 5)
    }

    /// How the identity is expressed.
    public var identityType: IdentityType
    /// Whether the requestor asks for a positive server response (sub-item 0x59).
    public var positiveResponseRequested: Bool
    /// The primary field (username, ticket, assertion or token).
    public var primaryField: ByteBuffer
    /// The secondary field (the passcode for type 2; empty otherwise).
    public var secondaryField: ByteBuffer

    /// Creates a user identity sub-item.
    public init(
        identityType: IdentityType, positiveResponseRequested: Bool, primaryField: ByteBuffer,
        secondaryField: ByteBuffer = ByteBuffer()
    ) {
        self.identityType = identityType
        self.positiveResponseRequested = positiveResponseRequested
        self.primaryField = primaryField
        self.secondaryField = secondaryField
    }

    init(itemBody buffer: inout ByteBuffer) throws {
        self.identityType = IdentityType(rawValue: try buffer.readPDUInteger("user identity type"))
        let positive: UInt8 = try buffer.readPDUInteger("positive response requested")
        self.positiveResponseRequested = positive == 1
        self.primaryField = try buffer.readU16PrefixedSlice("user identity primary field")
        // Some peers omit the secondary-field length for types other than 2.
        if buffer.readableBytes == 0 {
            self.secondaryField = ByteBuffer()
        } else {
            self.secondaryField = try buffer.readU16PrefixedSlice("user identity secondary field")
        }
        guard buffer.readableBytes == 0 else {
            throw PDUError.invalidLength(
                "user identity sub-item", length: buffer.readableBytes, expected: "no trailing bytes")
        }
    }

    /// Appends the complete 0x58 sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.userIdentityRQ.rawValue, "user identity sub-item") { out in
            out.writeInteger(self.identityType.rawValue)
            out.writeInteger(UInt8(self.positiveResponseRequested ? 1 : 0))
            try out.writeU16PrefixedBytes(self.primaryField, "user identity primary field")
            try out.writeU16PrefixedBytes(self.secondaryField, "user identity secondary field")
        }
    }
}
