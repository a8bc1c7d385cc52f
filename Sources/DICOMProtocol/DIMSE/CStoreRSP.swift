import DICOMData

/// C-STORE-RSP (PS3.7 §9.3.1.2).
public struct CStoreRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .cStoreRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Offending Element (0000,0901), as a tag (group << 16 | element).
    public var offendingElement: UInt32?
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public var hasDataSet: Bool { false }

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        affectedSOPInstanceUID: String?,
        status: DIMSEStatus,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
        self.status = status
        self.offendingElement = offendingElement
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: Self.commandField)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.affectedSOPInstanceUID = commandSet.string(E.affectedSOPInstanceUID)
        self.status = try commandSet.status(.store, in: Self.commandField)
        self.offendingElement = commandSet.tag(E.offendingElement)
        self.errorComment = commandSet.string(E.errorComment)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        set.set(E.status, self.status.code)
        set[E.offendingElement] = self.offendingElement.map { .tags([$0]) }
        set.set(E.errorComment, self.errorComment)
        return set
    }
}
