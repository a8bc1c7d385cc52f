import DICOMData

/// The elements every C-FIND, C-GET, C-MOVE and C-STORE response carries (PS3.7 §9.3.1.2, §9.3.2.2,
/// §9.3.3.2, §9.3.4.2): read and written in one place, shared by ``CFindRSP``, ``CStoreRSP`` and
/// ``RetrieveRSP``.
public struct DIMSEResponseFields: Sendable, Hashable {
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String?
    /// Status (0000,0900).
    public var status: DIMSEStatus
    /// Offending Element (0000,0901), as a tag (group << 16 | element).
    public var offendingElement: UInt32?
    /// Error Comment (0000,0902).
    public var errorComment: String?

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        status: DIMSEStatus,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
        self.affectedSOPClassUID = affectedSOPClassUID
        self.status = status
        self.offendingElement = offendingElement
        self.errorComment = errorComment
    }

    /// Reads the fields from a response's command set; `service` names the table the status is read with.
    ///
    /// - Throws: ``DIMSEError`` when Message ID Being Responded To or Status is absent.
    init(commandSet: CommandSet, service: DIMSEStatus.Service, in field: DIMSECommandField) throws {
        typealias E = CommandSet.Element
        self.messageIDBeingRespondedTo = try commandSet.required16(
            E.messageIDBeingRespondedTo, "Message ID Being Responded To", in: field)
        self.affectedSOPClassUID = commandSet.string(E.affectedSOPClassUID)
        self.status = try commandSet.status(service, in: field)
        self.offendingElement = commandSet.tag(E.offendingElement)
        self.errorComment = commandSet.string(E.errorComment)
    }

    /// Writes the fields into a response's command set.
    func write(into set: inout CommandSet) {
        typealias E = CommandSet.Element
        set.set(E.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.status, self.status.code)
        set[E.offendingElement] = self.offendingElement.map { .tags([$0]) }
        set.set(E.errorComment, self.errorComment)
    }
}

/// A DIMSE response built on ``DIMSEResponseFields``: the fields read and write through it by name.
public protocol DIMSEResponse: DIMSECommand {
    /// The elements all these responses share.
    var response: DIMSEResponseFields { get set }
}

extension DIMSEResponse {
    /// Message ID Being Responded To (0000,0120).
    public var messageIDBeingRespondedTo: UInt16 {
        get { self.response.messageIDBeingRespondedTo }
        set { self.response.messageIDBeingRespondedTo = newValue }
    }
    /// Affected SOP Class UID (0000,0002).
    public var affectedSOPClassUID: String? {
        get { self.response.affectedSOPClassUID }
        set { self.response.affectedSOPClassUID = newValue }
    }
    /// Status (0000,0900).
    public var status: DIMSEStatus {
        get { self.response.status }
        set { self.response.status = newValue }
    }
    /// Offending Element (0000,0901), as a tag (group << 16 | element).
    public var offendingElement: UInt32? {
        get { self.response.offendingElement }
        set { self.response.offendingElement = newValue }
    }
    /// Error Comment (0000,0902).
    public var errorComment: String? {
        get { self.response.errorComment }
        set { self.response.errorComment = newValue }
    }
}
