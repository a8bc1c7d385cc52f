import DICOMData

/// A Query/Retrieve service (PS3.7 §9.1.2–§9.1.4): what tells its messages apart from the other two's,
/// which otherwise share one shape (``QueryRetrieveRQ``, ``RetrieveRSP``).
public protocol QueryRetrieveService: Sendable {
    /// The elements the request carries beyond Message ID, Affected SOP Class UID and Priority.
    associatedtype RequestParameters: QueryRetrieveRequestParameters
    /// The request's Command Field.
    static var requestField: DIMSECommandField { get }
    /// The response's Command Field.
    static var responseField: DIMSECommandField { get }
    /// The table that names the response's statuses.
    static var statusService: DIMSEStatus.Service { get }
}

/// A Query/Retrieve service whose responses count sub-operations: C-GET and C-MOVE.
public protocol RetrieveService: QueryRetrieveService {}

/// C-FIND (PS3.7 §9.1.2).
public enum CFind: QueryRetrieveService {
    public typealias RequestParameters = NoRequestParameters
    public static var requestField: DIMSECommandField { .cFindRQ }
    public static var responseField: DIMSECommandField { .cFindRSP }
    public static var statusService: DIMSEStatus.Service { .find }
}

/// C-GET (PS3.7 §9.1.3): matches come back as C-STORE sub-operations on the same association, with the
/// requestor in the Storage SCP role (PS3.7 Annex D.3.3.4).
public enum CGet: RetrieveService {
    public typealias RequestParameters = NoRequestParameters
    public static var requestField: DIMSECommandField { .cGetRQ }
    public static var responseField: DIMSECommandField { .cGetRSP }
    public static var statusService: DIMSEStatus.Service { .get }
}

/// C-MOVE (PS3.7 §9.1.4): matches are sent to the Move Destination by C-STORE sub-operations on a
/// separate association.
public enum CMove: RetrieveService {
    public typealias RequestParameters = MoveDestination
    public static var requestField: DIMSECommandField { .cMoveRQ }
    public static var responseField: DIMSECommandField { .cMoveRSP }
    public static var statusService: DIMSEStatus.Service { .move }
}

/// The elements a Query/Retrieve request adds to the ones all three share.
public protocol QueryRetrieveRequestParameters: Sendable, Hashable {
    init(commandSet: CommandSet, in field: DIMSECommandField) throws
    func write(into set: inout CommandSet)
}

/// C-FIND-RQ and C-GET-RQ add nothing.
public struct NoRequestParameters: QueryRetrieveRequestParameters {
    public init() {}
    public init(commandSet: CommandSet, in field: DIMSECommandField) {}
    public func write(into set: inout CommandSet) {}
}

/// Move Destination (0000,0600) of a C-MOVE-RQ: the AE title of the C-STORE SCP.
public struct MoveDestination: QueryRetrieveRequestParameters {
    public var aeTitle: String

    public init(_ aeTitle: String) { self.aeTitle = aeTitle }

    public init(commandSet: CommandSet, in field: DIMSECommandField) throws {
        self.aeTitle = try commandSet.requiredString(CommandSet.Element.moveDestination, "Move Destination", in: field)
    }

    public func write(into set: inout CommandSet) {
        set.set(CommandSet.Element.moveDestination, self.aeTitle)
    }
}

/// C-FIND-RQ, C-GET-RQ and C-MOVE-RQ (PS3.7 §9.3.2.1, §9.3.3.1, §9.3.4.1): the identifier follows as the
/// data set.
public struct QueryRetrieveRQ<Service: QueryRetrieveService>: DIMSECommand {
    public static var commandField: DIMSECommandField { Service.requestField }
    /// Message ID (0000,0110).
    public var messageID: UInt16
    /// Affected SOP Class UID (0000,0002): the information model's SOP class for this service.
    public var affectedSOPClassUID: String
    /// Priority (0000,0700).
    public var priority: DIMSEPriority
    /// What this service's request adds (C-MOVE: the Move Destination).
    public var parameters: Service.RequestParameters

    public var hasDataSet: Bool { true }

    public init(
        messageID: UInt16, affectedSOPClassUID: String, priority: DIMSEPriority = .medium,
        parameters: Service.RequestParameters
    ) {
        self.messageID = messageID
        self.affectedSOPClassUID = affectedSOPClassUID
        self.priority = priority
        self.parameters = parameters
    }

    public init(commandSet: CommandSet) throws {
        typealias E = CommandSet.Element
        self.messageID = try commandSet.required16(E.messageID, "Message ID", in: Self.commandField)
        self.affectedSOPClassUID = try commandSet.requiredString(
            E.affectedSOPClassUID, "Affected SOP Class UID", in: Self.commandField)
        self.priority = DIMSEPriority(rawValue: commandSet.uint16(E.priority) ?? 0)
        self.parameters = try Service.RequestParameters(commandSet: commandSet, in: Self.commandField)
    }

    public var commandSet: CommandSet {
        typealias E = CommandSet.Element
        var set = CommandSet(Self.commandField, hasDataSet: true)
        set.set(E.messageID, self.messageID)
        set.set(E.affectedSOPClassUID, self.affectedSOPClassUID)
        set.set(E.priority, self.priority.rawValue)
        self.parameters.write(into: &set)
        return set
    }
}

extension QueryRetrieveRQ where Service.RequestParameters == NoRequestParameters {
    public init(messageID: UInt16, affectedSOPClassUID: String, priority: DIMSEPriority = .medium) {
        self.init(
            messageID: messageID, affectedSOPClassUID: affectedSOPClassUID, priority: priority,
            parameters: NoRequestParameters())
    }
}

extension QueryRetrieveRQ where Service == CMove {
    public init(
        messageID: UInt16, affectedSOPClassUID: String, priority: DIMSEPriority = .medium, moveDestination: String
    ) {
        self.init(
            messageID: messageID, affectedSOPClassUID: affectedSOPClassUID, priority: priority,
            parameters: MoveDestination(moveDestination))
    }

    /// Move Destination (0000,0600): the AE title of the C-STORE SCP.
    public var moveDestination: String {
        get { self.parameters.aeTitle }
        set { self.parameters.aeTitle = newValue }
    }
}

/// C-FIND-RQ (PS3.7 §9.3.2.1).
public typealias CFindRQ = QueryRetrieveRQ<CFind>
/// C-GET-RQ (PS3.7 §9.3.3.1).
public typealias CGetRQ = QueryRetrieveRQ<CGet>
/// C-MOVE-RQ (PS3.7 §9.3.4.1).
public typealias CMoveRQ = QueryRetrieveRQ<CMove>

/// C-GET-RSP and C-MOVE-RSP (PS3.7 §9.3.3.2, §9.3.4.2): pending responses report sub-operation progress;
/// a final response with failures may carry a data set listing the Failed SOP Instance UIDs (0008,0058).
public struct RetrieveRSP<Service: RetrieveService>: DIMSEResponse {
    public static var commandField: DIMSECommandField { Service.responseField }
    /// Message ID Being Responded To, Affected SOP Class UID, Status, Offending Element, Error Comment.
    public var response: DIMSEResponseFields
    /// The sub-operation counters.
    public var subOperations: SubOperationCounts
    /// Whether a data set follows.
    public var hasDataSet: Bool

    public init(
        messageIDBeingRespondedTo: UInt16,
        affectedSOPClassUID: String?,
        status: DIMSEStatus,
        subOperations: SubOperationCounts = SubOperationCounts(),
        hasDataSet: Bool = false,
        offendingElement: UInt32? = nil,
        errorComment: String? = nil
    ) {
        self.response = DIMSEResponseFields(
            messageIDBeingRespondedTo: messageIDBeingRespondedTo, affectedSOPClassUID: affectedSOPClassUID,
            status: status, offendingElement: offendingElement, errorComment: errorComment)
        self.subOperations = subOperations
        self.hasDataSet = hasDataSet
    }

    public init(commandSet: CommandSet) throws {
        self.response = try DIMSEResponseFields(
            commandSet: commandSet, service: Service.statusService, in: Self.commandField)
        self.subOperations = SubOperationCounts(commandSet: commandSet)
        self.hasDataSet = commandSet.hasDataSet
    }

    public var commandSet: CommandSet {
        var set = CommandSet(Self.commandField, hasDataSet: self.hasDataSet)
        self.response.write(into: &set)
        self.subOperations.write(into: &set)
        return set
    }
}

/// C-GET-RSP (PS3.7 §9.3.3.2).
public typealias CGetRSP = RetrieveRSP<CGet>
/// C-MOVE-RSP (PS3.7 §9.3.4.2).
public typealias CMoveRSP = RetrieveRSP<CMove>
