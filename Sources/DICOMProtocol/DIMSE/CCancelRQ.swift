/// C-CANCEL-RQ (PS3.7 §9.3.2.3): asks the peer to stop a C-FIND, C-MOVE or C-GET in progress.
public struct CCancelRQ: DIMSECommand {
    public static var commandField: DIMSECommandField { .cCancelRQ }
    /// Message ID Being Responded To (0000,0120): the request to cancel.
    public var messageIDBeingRespondedTo: UInt16

    public var hasDataSet: Bool { false }

    public init(messageIDBeingRespondedTo: UInt16) {
        self.messageIDBeingRespondedTo = messageIDBeingRespondedTo
    }

    public init(commandSet: CommandSet) throws {
        self.messageIDBeingRespondedTo = try commandSet.required16(
            CommandSet.Element.messageIDBeingRespondedTo, "Message ID Being Responded To", in: Self.commandField)
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: false)
        set.set(CommandSet.Element.messageIDBeingRespondedTo, self.messageIDBeingRespondedTo)
        return set
    }
}
