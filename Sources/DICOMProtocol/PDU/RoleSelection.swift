import NIOCore

/// The SCP/SCU Role Selection sub-item, type 0x54 (PS3.7 §D.3.3.4).
///
/// In an A-ASSOCIATE-RQ the flags say which roles the requestor proposes for itself for one SOP class;
/// in an A-ASSOCIATE-AC they say which of those roles the acceptor agrees to. On the wire the SCU
/// flag precedes the SCP flag. C-GET needs the requestor to propose the SCP role for storage SOP classes.
public struct RoleSelection: Sendable, Hashable {
    /// The SOP class UID the roles apply to.
    public var sopClassUID: String
    /// Whether the association-requestor may act as SCU.
    public var scuRole: Bool
    /// Whether the association-requestor may act as SCP.
    public var scpRole: Bool

    /// Creates a role selection.
    public init(sopClassUID: String, scuRole: Bool, scpRole: Bool) {
        self.sopClassUID = sopClassUID
        self.scuRole = scuRole
        self.scpRole = scpRole
    }

    init(itemBody buffer: inout ByteBuffer) throws {
        self.sopClassUID = try buffer.readU16PrefixedString("role selection SOP class UID")
        let scu: UInt8 = try buffer.readPDUInteger("SCU role")
        let scp: UInt8 = try buffer.readPDUInteger("SCP role")
        guard scu <= 1, scp <= 1 else {
            throw PDUError.invalidParameterValue("SCP/SCU role selection", value: "SCU \(scu), SCP \(scp)")
        }
        self.scuRole = scu == 1
        self.scpRole = scp == 1
        guard buffer.readableBytes == 0 else {
            throw PDUError.invalidLength(
                "role selection sub-item", length: buffer.readableBytes, expected: "no trailing bytes")
        }
    }

    /// Appends the complete 0x54 sub-item.
    public func encode(into buffer: inout ByteBuffer) throws {
        try buffer.writeItem(type: ItemType.roleSelection.rawValue, "role selection sub-item") { out in
            try out.writeU16PrefixedString(self.sopClassUID, "role selection SOP class UID")
            out.writeInteger(UInt8(self.scuRole ? 1 : 0))
            out.writeInteger(UInt8(self.scpRole ? 1 : 0))
        }
    }
}
