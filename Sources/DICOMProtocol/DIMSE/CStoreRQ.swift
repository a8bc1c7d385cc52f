/// C-STORE-RQ (PS3.7 §9.3.1.1): the data set (the SOP instance) always follows.
public struct CStoreRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .cStoreRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String
    /// Priority (0000,0700).
    public var priority: DIMSEPriority
    /// Move Originator Application Entity Title (0000,1030), for C-STOREs of a C-MOVE.
    public var moveOriginatorAETitle: String?
    /// Move Originator Message ID (0000,1031).
    public var moveOriginatorMessageID: UInt16?

    public var hasDataSet: Bool { true }

    public init(
        messageID: UInt16,
        affectedSOPClassUID: String,
        affectedSOPInstanceUID: String,
        priority: DIMSEPriority = .medium,
        moveOriginatorAETitle: String? = nil,
        moveOriginatorMessageID: UInt16? = nil
    ) {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
        self.priority = priority
        self.moveOriginatorAETitle = moveOriginatorAETitle
        self.moveOriginatorMessageID = moveOriginatorMessageID
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: Self.commandField)
        self.affectedSOPClassUID = try commandSet.requiredString(
            E.affectedSOPClassUID, "Affected SOP Class UID", in: Self.commandField)
        self.affectedSOPInstanceUID = try commandSet.requiredString(
            E.affectedSOPInstanceUID, "Affected SOP Instance UID", in: Self.commandField)
        self.priority = DIMSEPriority(rawValue: commandSet.uint16(E.priority) ?? 0)
        self.moveOriginatorAETitle = commandSet.string(E.moveOriginatorApplicationEntityTitle)
        self.moveOriginatorMessageID = commandSet.uint16(E.moveOriginatorMessageID)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: true)
        set.set(E.messageID, self.messageID)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        set.set(E.priority, self.priority.rawValue)
        set.set(E.moveOriginatorApplicationEntityTitle, self.moveOriginatorAETitle)
        set.set(E.moveOriginatorMessageID, self.moveOriginatorMessageID)
        return set
    }
}
