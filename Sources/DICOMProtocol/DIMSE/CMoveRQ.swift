/// C-MOVE-RQ (PS3.7 §9.3.4.1): the identifier follows; matches are sent to ``moveDestination`` by C-STORE
/// sub-operations on a separate association.
public struct CMoveRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .cMoveRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002): the information model's MOVE SOP class.
    public var affectedSOPClassUID: String
    /// Priority (0000,0700).
    public var priority: DIMSEPriority
    /// Move Destination (0000,0600): the AE title of the C-STORE SCP.
    public var moveDestination: String

    public var hasDataSet: Bool { true }

    public init(messageID: UInt16, affectedSOPClassUID: String, priority: DIMSEPriority = .medium, moveDestination: String) {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
        self.priority = priority
        self.moveDestination = moveDestination
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: Self.commandField)
        self.affectedSOPClassUID = try commandSet.requiredString(E.affectedSOPClassUID, "Affected SOP Class UID", in: Self.commandField)
        self.priority = DIMSEPriority(rawValue: commandSet.uint16(E.priority) ?? 0)
        self.moveDestination = try commandSet.requiredString(E.moveDestination, "Move Destination", in: Self.commandField)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: true)
        set.set(E.messageID, self.messageID)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.priority, self.priority.rawValue)
        set.set(E.moveDestination, self.moveDestination)
        return set
    }
}
