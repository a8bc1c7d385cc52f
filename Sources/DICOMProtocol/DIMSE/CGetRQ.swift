/// C-GET-RQ (PS3.7 §9.3.3.1): the identifier follows; matches come back as C-STORE sub-operations on the
/// same association, with the requestor in the Storage SCP role (PS3.7 Annex D.3.3.4).
public struct CGetRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .cGetRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002): the information model's GET SOP class.
    public var affectedSOPClassUID: String
    /// Priority (0000,0700).
    public var priority: DIMSEPriority

    public var hasDataSet: Bool { true }

    public init(messageID: UInt16, affectedSOPClassUID: String, priority: DIMSEPriority = .medium) {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
        self.priority = priority
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: Self.commandField)
        self.affectedSOPClassUID = try commandSet.requiredString(E.affectedSOPClassUID, "Affected SOP Class UID", in: Self.commandField)
        self.priority = DIMSEPriority(rawValue: commandSet.uint16(E.priority) ?? 0)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: true)
        set.set(E.messageID, self.messageID)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.priority, self.priority.rawValue)
        return set
    }
}
