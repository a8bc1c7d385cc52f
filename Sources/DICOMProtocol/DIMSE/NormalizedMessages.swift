import DICOMData

// DIMSE-N messages used by the Storage Commitment Push Model (PS3.4 Annex J): N-ACTION and N-EVENT-REPORT
// (PS3.7 §10.1.4, §10.1.1; command fields and elements in §10.3.4, §10.3.1 and Annex E).

extension DIMSECommandField {
    /// N-EVENT-REPORT-RQ (PS3.7 §10.3.1.1).
    public static let nEventReportRQ = DIMSECommandField(rawValue: 0x0100)
    /// N-EVENT-REPORT-RSP (PS3.7 §10.3.1.2).
    public static let nEventReportRSP = DIMSECommandField(rawValue: 0x8100)
    /// N-ACTION-RQ (PS3.7 §10.3.4.1).
    public static let nActionRQ = DIMSECommandField(rawValue: 0x0130)
    /// N-ACTION-RSP (PS3.7 §10.3.4.2).
    public static let nActionRSP = DIMSECommandField(rawValue: 0x8130)
}

extension CommandSet.Element {
    /// Event Type ID (0000,1002), US (PS3.7 Annex E).
    public static let eventTypeID: UInt16 = 0x1002
    /// Action Type ID (0000,1008), US (PS3.7 Annex E).
    public static let actionTypeID: UInt16 = 0x1008
}

/// N-ACTION-RQ (PS3.7 §10.3.4.1): asks the peer to perform an action on a SOP instance; for storage
/// commitment, Action Type ID 1 on the well-known instance with the Transaction UID and Referenced SOP
/// Sequence as data set (PS3.4 §J.3.2).
public struct NActionRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .nActionRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Requested SOP Class UID (0000,0003).
    public var requestedSOPClassUID: String
    /// Requested SOP Instance UID (0000,1001).
    public var requestedSOPInstanceUID: String
    /// Action Type ID (0000,1008).
    public var actionTypeID: UInt16
    /// Whether an action information data set follows.
    public var hasDataSet: Bool

    public init(
        messageID: UInt16, requestedSOPClassUID: String, requestedSOPInstanceUID: String, actionTypeID: UInt16,
        hasDataSet: Bool = true
    ) {
        self.messageID = messageID
        self.requestedSOPClassUID = requestedSOPClassUID
        self.requestedSOPInstanceUID = requestedSOPInstanceUID
        self.actionTypeID = actionTypeID
        self.hasDataSet = hasDataSet
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        let field = Self.commandField
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: field)
        self.requestedSOPClassUID = try commandSet.requiredString(
            E.requestedSOPClassUID, "Requested SOP Class UID", in: field)
        self.requestedSOPInstanceUID = try commandSet.requiredString(
            E.requestedSOPInstanceUID, "Requested SOP Instance UID", in: field)
        self.actionTypeID = try commandSet.required16(E.actionTypeID, "Action Type ID", in: field)
        self.hasDataSet = commandSet.hasDataSet
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        set.set(E.messageID, self.messageID)
        set.set(E.requestedSOPClassUID, self.requestedSOPClassUID)
        set.set(E.requestedSOPInstanceUID, self.requestedSOPInstanceUID)
        set.set(E.actionTypeID, self.actionTypeID)
        return set
    }
}

/// N-ACTION-RSP (PS3.7 §10.3.4.2).
public struct NActionRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .nActionRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String?
    /// Action Type ID (0000,1008).
    public var actionTypeID: UInt16?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public var hasDataSet: Bool { false }

    public init(
        messageIDBeingRespondedTo: UInt16, affectedSOPClassUID: String?, affectedSOPInstanceUID: String?,
        actionTypeID: UInt16?, status: DIMSEStatus, errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
        self.actionTypeID = actionTypeID
        self.status = status
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        let field = Self.commandField
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: field)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.affectedSOPInstanceUID = commandSet.string(E.affectedSOPInstanceUID)
        self.actionTypeID = commandSet.uint16(E.actionTypeID)
        self.status = try commandSet.status(.general, in: field)
        self.errorComment = commandSet.string(E.errorComment)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        set.set(E.actionTypeID, self.actionTypeID)
        set.set(E.status, self.status.code)
        set.set(E.errorComment, self.errorComment)
        return set
    }
}

/// N-EVENT-REPORT-RQ (PS3.7 §10.3.1.1): reports an event on a SOP instance; for storage commitment, Event Type
/// ID 1 (all committed) or 2 (some failed) with the Transaction UID, Referenced SOP Sequence and Failed SOP
/// Sequence as data set (PS3.4 §J.3.3).
public struct NEventReportRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .nEventReportRQ }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String
    /// Event Type ID (0000,1002).
    public var eventTypeID: UInt16
    /// Whether an event information data set follows.
    public var hasDataSet: Bool

    public init(
        messageID: UInt16, affectedSOPClassUID: String, affectedSOPInstanceUID: String, eventTypeID: UInt16,
        hasDataSet: Bool = true
    ) {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
        self.eventTypeID = eventTypeID
        self.hasDataSet = hasDataSet
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        let field = Self.commandField
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: field)
        self.affectedSOPClassUID = try commandSet.requiredString(
            E.affectedSOPClassUID, "Affected SOP Class UID", in: field)
        self.affectedSOPInstanceUID = try commandSet.requiredString(
            E.affectedSOPInstanceUID, "Affected SOP Instance UID", in: field)
        self.eventTypeID = try commandSet.required16(E.eventTypeID, "Event Type ID", in: field)
        self.hasDataSet = commandSet.hasDataSet
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        set.set(E.messageID, self.messageID)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        set.set(E.eventTypeID, self.eventTypeID)
        return set
    }
}

/// N-EVENT-REPORT-RSP (PS3.7 §10.3.1.2).
public struct NEventReportRSP: DIMSECommand {
    public static var commandField: DIMSECommandField { .nEventReportRSP }
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String?
    /// Event Type ID (0000,1002).
    public var eventTypeID: UInt16?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public var hasDataSet: Bool { false }

    public init(
        messageIDBeingRespondedTo: UInt16, affectedSOPClassUID: String?, affectedSOPInstanceUID: String?,
        eventTypeID: UInt16?, status: DIMSEStatus, errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
        self.eventTypeID = eventTypeID
        self.status = status
        self.errorComment = errorComment
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        let field = Self.commandField
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: field)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.affectedSOPInstanceUID = commandSet.string(E.affectedSOPInstanceUID)
        self.eventTypeID = commandSet.uint16(E.eventTypeID)
        self.status = try commandSet.status(.general, in: field)
        self.errorComment = commandSet.string(E.errorComment)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        set.set(E.eventTypeID, self.eventTypeID)
        set.set(E.status, self.status.code)
        set.set(E.errorComment, self.errorComment)
        return set
    }
}
