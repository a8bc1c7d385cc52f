import NIOCore

/// The User Identity sub-item of an A-ASSOCIATE-AC, type 0x59 (PS3.7 §D.3.3.7.2).
public struct UserIdentityAC: Sendable, Hashable {
    /// The server response (a Kerberos server ticket, SAML response or JWT; empty for username types).
    public var serverResponse: ByteBuffer

    /// Creates a user identity response.
    public init(serverResponse: ByteBuffer = ByteBuffer()) {
        self.serverResponse = serverResponse
    }

    init(itemBody buffer: inout ByteBuffer) throws {
        self.serverResponse = try buffer.readU16PrefixedSlice("user identity server response")
        guard buffer.readableBytes == 0 else {
            throw PDUError.invalidLength(
                "user identity sub-item (AC)", length: buffer.readableBytes, expected: "no trailing bytes")
        }
    }

    /// Appends the complete 0x59 sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.userIdentityAC.rawValue, "user identity sub-item (AC)") { out in
            try out.writeU16PrefixedBytes(self.serverResponse, "user identity server response")
        }
    }
}
