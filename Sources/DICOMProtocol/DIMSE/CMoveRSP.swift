/// C-MOVE-RSP (PS3.7 §9.3.4.2): pending responses report sub-operation progress; a final response with
/// failures may carry a data set listing the Failed SOP Instance UIDs (0008,0058).
public struct CMoveRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .cMoveRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// The sub-operation counters.
    public var subOperations: SubOperationCounts
    /// Whether a data set follows.
    public var hasDataSet: Bool
    /// Offending Element (0000,0901).
    public var offendingElement: UInt32?
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        status: DIMSEStatus,
        subOperations: SubOperationCounts = SubOperationCounts(),
        hasDataSet: Bool = false,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.status = status
        self.subOperations = subOperations
        self.hasDataSet = hasDataSet
        self.offendingElement = offendingElement
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: Self.commandField)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.status = DIMSEStatus(try commandSet.required16(E.status, "Status", in: Self.commandField))
        self.subOperations = SubOperationCounts(commandSet: commandSet)
        self.hasDataSet = commandSet.hasDataSet
        self.offendingElement = commandSet.tag(E.offendingElement)
        self.errorComment = commandSet.string(E.errorComment)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.status, self.status.rawValue)
        self.subOperations.write(into: &set)
        set[E.offendingElement] = self.offendingElement.map { .tags([$0]) }
        set.set(E.errorComment, self.errorComment)
        return set
    }
}
