import DICOMData
import NIOCore

/// Any DIMSE-C message this implementation understands (PS3.7 §9.3), and the DIMSE-N messages of storage
/// commitment (N-ACTION, N-EVENT-REPORT, PS3.7 §10.3.1, §10.3.4).
public enum DIMSEMessage: Sendable, Hashable {
    case cEchoRQ(CEchoRQ)
    case cEchoRSP(CEchoRSP)
    case cStoreRQ(CStoreRQ)
    case cStoreRSP(CStoreRSP)
    case cFindRQ(CFindRQ)
    case cFindRSP(CFindRSP)
    case cMoveRQ(CMoveRQ)
    case cMoveRSP(CMoveRSP)
    case cGetRQ(CGetRQ)
    case cGetRSP(CGetRSP)
    case cCancelRQ(CCancelRQ)
    case nActionRQ(NActionRQ)
    case nActionRSP(NActionRSP)
    case nEventReportRQ(NEventReportRQ)
    case nEventReportRSP(NEventReportRSP)
    /// A command this implementation does not type, as its command set: a request or response whose Command
    /// Field is not one of the above (DIMSE-N, PS3.7 §10, or a value PS3.7 does not define). A request is kept
    /// rather than thrown so that it can be answered with ``unrecognizedOperationResponse`` instead of
    /// aborting the association; a response is routed by its Message ID Being Responded To like any other.
    case unrecognized(CommandSet)

    /// Decodes a message from its encoded command set.
    ///
    /// - Throws: ``DIMSEError`` for a malformed command set, an unknown Command Field or a missing element.
    public init(commandSetBytes: ByteBuffer) throws {
        try self.init(commandSet: CommandSet(decoding: commandSetBytes))
    }

    /// Types a decoded command set by its Command Field.
    public init(commandSet: CommandSet) throws {
        switch commandSet.commandField {
        case .cEchoRQ?: self = .cEchoRQ(try CEchoRQ(commandSet: commandSet))
        case .cEchoRSP?: self = .cEchoRSP(try CEchoRSP(commandSet: commandSet))
        case .cStoreRQ?: self = .cStoreRQ(try CStoreRQ(commandSet: commandSet))
        case .cStoreRSP?: self = .cStoreRSP(try CStoreRSP(commandSet: commandSet))
        case .cFindRQ?: self = .cFindRQ(try CFindRQ(commandSet: commandSet))
        case .cFindRSP?: self = .cFindRSP(try CFindRSP(commandSet: commandSet))
        case .cMoveRQ?: self = .cMoveRQ(try CMoveRQ(commandSet: commandSet))
        case .cMoveRSP?: self = .cMoveRSP(try CMoveRSP(commandSet: commandSet))
        case .cGetRQ?: self = .cGetRQ(try CGetRQ(commandSet: commandSet))
        case .cGetRSP?: self = .cGetRSP(try CGetRSP(commandSet: commandSet))
        case .cCancelRQ?: self = .cCancelRQ(try CCancelRQ(commandSet: commandSet))
        case .nActionRQ?: self = .nActionRQ(try NActionRQ(commandSet: commandSet))
        case .nActionRSP?: self = .nActionRSP(try NActionRSP(commandSet: commandSet))
        case .nEventReportRQ?: self = .nEventReportRQ(try NEventReportRQ(commandSet: commandSet))
        case .nEventReportRSP?: self = .nEventReportRSP(try NEventReportRSP(commandSet: commandSet))
        case let field?
        where commandSet.uint16(
            field.isResponse ? CommandSet.Element.messageIDBeingRespondedTo : CommandSet.Element.messageID) != nil:
            self = .unrecognized(commandSet)
        default: throw DIMSEError.unknownCommand(commandSet.commandField?.rawValue)
        }
    }

    /// The typed message inside; `nil` for ``unrecognized(_:)``.
    public var command: (any DIMSECommand)? {
        switch self {
        case .cEchoRQ(let m): return m
        case .cEchoRSP(let m): return m
        case .cStoreRQ(let m): return m
        case .cStoreRSP(let m): return m
        case .cFindRQ(let m): return m
        case .cFindRSP(let m): return m
        case .cMoveRQ(let m): return m
        case .cMoveRSP(let m): return m
        case .cGetRQ(let m): return m
        case .cGetRSP(let m): return m
        case .cCancelRQ(let m): return m
        case .nActionRQ(let m): return m
        case .nActionRSP(let m): return m
        case .nEventReportRQ(let m): return m
        case .nEventReportRSP(let m): return m
        case .unrecognized: return nil
        }
    }

    /// The Command Field.
    public var commandField: DIMSECommandField {
        guard let command = self.command else { return self.commandSet.commandField ?? DIMSECommandField(rawValue: 0) }
        return type(of: command).commandField
    }

    /// Whether a data set follows the command.
    public var hasDataSet: Bool { self.commandSet.hasDataSet }

    /// The command set.
    public var commandSet: CommandSet {
        if case .unrecognized(let set) = self { return set }
        return self.command?.commandSet ?? CommandSet()
    }

    /// The answer to an ``unrecognized(_:)``: a response with the request's Command Field and bit 15 set
    /// (how PS3.7 §9.3 and §10.3 number every response), its Message ID, no data set, and Status 0x0211
    /// (Unrecognized Operation, PS3.7 Annex C); `nil` for any other message.
    public var unrecognizedOperationResponse: DIMSEMessage? {
        guard case .unrecognized(let request) = self, let field = request.commandField, !field.isResponse,
            let messageID = request.uint16(CommandSet.Element.messageID)
        else { return nil }
        typealias E = CommandSet.Element
        var response = CommandSet(DIMSECommandField(rawValue: field.rawValue | 0x8000), hasDataSet: false)
        response.set(E.messageIDBeingRespondedTo, messageID)
        response.set(
            E.affectedSOPClassUID, request.string(E.affectedSOPClassUID) ?? request.string(E.requestedSOPClassUID))
        response.set(E.status, DIMSEStatus.unrecognizedOperation.code)
        return .unrecognized(response)
    }

    /// Message ID of a request.
    public var messageID: UInt16? {
        switch self {
        case .cEchoRQ(let m): return m.messageID
        case .cStoreRQ(let m): return m.messageID
        case .cFindRQ(let m): return m.messageID
        case .cMoveRQ(let m): return m.messageID
        case .cGetRQ(let m): return m.messageID
        case .nActionRQ(let m): return m.messageID
        case .nEventReportRQ(let m): return m.messageID
        case .unrecognized(let set):
            return set.commandField?.isResponse == true ? nil : set.uint16(CommandSet.Element.messageID)
        default: return nil
        }
    }

    /// Message ID Being Responded To of a response or C-CANCEL-RQ: routes it to its request.
    public var messageIDBeingRespondedTo: UInt16? {
        switch self {
        case .cEchoRSP(let m): return m.messageIDBeingRespondedTo
        case .cStoreRSP(let m): return m.messageIDBeingRespondedTo
        case .cFindRSP(let m): return m.messageIDBeingRespondedTo
        case .cMoveRSP(let m): return m.messageIDBeingRespondedTo
        case .cGetRSP(let m): return m.messageIDBeingRespondedTo
        case .cCancelRQ(let m): return m.messageIDBeingRespondedTo
        case .nActionRSP(let m): return m.messageIDBeingRespondedTo
        case .nEventReportRSP(let m): return m.messageIDBeingRespondedTo
        case .unrecognized(let set):
            return set.commandField?.isResponse == true ? set.uint16(CommandSet.Element.messageIDBeingRespondedTo) : nil
        default: return nil
        }
    }

    /// Status of a response.
    public var status: DIMSEStatus? {
        switch self {
        case .cEchoRSP(let m): return m.status
        case .cStoreRSP(let m): return m.status
        case .cFindRSP(let m): return m.status
        case .cMoveRSP(let m): return m.status
        case .cGetRSP(let m): return m.status
        case .nActionRSP(let m): return m.status
        case .nEventReportRSP(let m): return m.status
        case .unrecognized(let set): return set.uint16(CommandSet.Element.status).map { DIMSEStatus(code: $0) }
        default: return nil
        }
    }
}
