/// C-ECHO-RQ (PS3.7 §9.3.5.1): verifies end-to-end communication.
public struct CEchoRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .cEchoRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002): the Verification SOP Class.
    public var affectedSOPClassUID: String

    public var hasDataSet: Bool { false }

    public init(messageID: UInt16, affectedSOPClassUID: String = "1.2.840.10008.1.1") {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
    }

    public init(commandSet: CommandSet) throws {
        self.messageID = try commandSet.required16(CommandSet.Element.messageID, "Message ID", in: Self.commandField)
        self.affectedSOPClassUID = commandSet.string(CommandSet.Element.affectedSOPClassUID) ?? "1.2.840.10008.1.1"
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(CommandSet.Element.messageID, self.messageID)
        set.set(CommandSet.Element.affectedSOPClassUID, self.affectedSOPClassUID)
        return set
    }
}
