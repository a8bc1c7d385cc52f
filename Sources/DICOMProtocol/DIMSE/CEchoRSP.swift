import DICOMData

/// C-ECHO-RSP (PS3.7 §9.3.5.2).
public struct CEchoRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .cEchoRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public var hasDataSet: Bool { false }

    public init(
        messageIDBeingRespondedTo: UInt16, affectedSOPClassUID: String? = "1.2.840.10008.1.1", status: DIMSEStatus,
        errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.status = status
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        self.messageIDBeingRespondedTo = try commandSet.required16(
            CommandSet.Element.messageIDBeingRespondedTo, "Message ID Being Responded To", in: Self.commandField)
        self.affectedSOPClassUID = commandSet.string(CommandSet.Element.affectedSOPClassUID)
        self.status = try commandSet.status(.echo, in: Self.commandField)
        self.errorComment = commandSet.string(CommandSet.Element.errorComment)
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(CommandSet.Element.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(CommandSet.Element.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(CommandSet.Element.status, self.status.code)
        set.set(CommandSet.Element.errorComment, self.errorComment)
        return set
    }
}
