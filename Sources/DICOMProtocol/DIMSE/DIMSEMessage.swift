import DICOMData
import NIOCore

/// Any DIMSE-C message this implementation understands (PS3.7 §9.3).
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
        default: throw DIMSEError.unknownCommand(commandSet.commandField?.rawValue)
        }
    }

    /// The typed message inside.
    public var command: any DIMSECommand {
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
        }
    }

    /// The Command Field.
    public var commandField: DIMSECommandField { type(of: self.command).commandField }

    /// Whether a data set follows the command.
    public var hasDataSet: Bool { self.command.hasDataSet }

    /// The command set.
    public var commandSet: CommandSet { self.command.commandSet }

    /// Message ID of a request.
    public var messageID: UInt16? {
        switch self {
        case .cEchoRQ(let m): return m.messageID
        case .cStoreRQ(let m): return m.messageID
        case .cFindRQ(let m): return m.messageID
        case .cMoveRQ(let m): return m.messageID
        case .cGetRQ(let m): return m.messageID
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
        default: return nil
        }
    }
}
