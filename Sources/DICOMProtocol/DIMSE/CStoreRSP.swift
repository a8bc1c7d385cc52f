import DICOMData

/// C-STORE-RSP (PS3.7 §9.3.1.2).
public struct CStoreRSP: DIMSEResponse {
    public static var commandField: DIMSECommandField { .cStoreRSP }
    /// Message ID Being Responded To, Affected SOP Class UID, Status, Offending Element, Error Comment.
    public var response: DIMSEResponseFields
    /// Affected SOP Instance UID (0000,1000).
    public var affectedSOPInstanceUID: String?

    public var hasDataSet: Bool { false }

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        affectedSOPInstanceUID: String?,
        status: DIMSEStatus,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.response = DIMSEResponseFields(
            messageIDBeingRespondedTo: messageIDBeingRespondedTo, affectedSOPClassUID: affectedSOPClassUID,
            status: status, offendingElement: offendingElement, errorComment: errorComment)
        self.affectedSOPInstanceUID = affectedSOPInstanceUID
    }

    public init(commandSet: CommandSet) throws {
        self.response = try DIMSEResponseFields(commandSet: commandSet, service: .store, in: Self.commandField)
        self.affectedSOPInstanceUID = commandSet.string(CommandSet.Element.affectedSOPInstanceUID)
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: false)
        self.response.write(into: &set)
        set.set(CommandSet.Element.affectedSOPInstanceUID, self.affectedSOPInstanceUID)
        return set
    }
}
