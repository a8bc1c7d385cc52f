import DICOMData

/// C-FIND-RSP (PS3.7 §9.3.2.2): pending responses carry a matching identifier as their data set.
public struct CFindRSP: DIMSEResponse {
    public static var commandField: DIMSECommandField { .cFindRSP }
    /// Message ID Being Responded To, Affected SOP Class UID, Status, Offending Element, Error Comment.
    public var response: DIMSEResponseFields
    /// Whether an identifier follows.
    public var hasDataSet: Bool

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        status: DIMSEStatus,
        hasDataSet: Bool,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.response = DIMSEResponseFields(
            messageIDBeingRespondedTo: messageIDBeingRespondedTo, affectedSOPClassUID: affectedSOPClassUID,
            status: status, offendingElement: offendingElement, errorComment: errorComment)
        self.hasDataSet = hasDataSet
    }

    public init(commandSet: CommandSet) throws {
        self.response = try DIMSEResponseFields(commandSet: commandSet, service: .find, in: Self.commandField)
        self.hasDataSet = commandSet.hasDataSet
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        self.response.write(into: &set)
        return set
    }
}
