import DICOMData

/// C-FIND-RSP (PS3.7 §9.3.2.2): pending responses carry a matching identifier as their data set.
public struct CFindRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .cFindRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Whether an identifier follows.
    public var hasDataSet: Bool
    /// Offending Element (0000,0901).
    public var offendingElement: UInt32?
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        status: DIMSEStatus,
        hasDataSet: Bool,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.status = status
        self.hasDataSet = hasDataSet
        self.offendingElement = offendingElement
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: Self.commandField)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.status = try commandSet.status(.find, in: Self.commandField)
        self.hasDataSet = commandSet.hasDataSet
        self.offendingElement = commandSet.tag(E.offendingElement)
        self.errorComment = commandSet.string(E.errorComment)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.status, self.status.code)
        set[E.offendingElement] = self.offendingElement.map { .tags([$0]) }
        set.set(E.errorComment, self.errorComment)
        return set
    }
}
