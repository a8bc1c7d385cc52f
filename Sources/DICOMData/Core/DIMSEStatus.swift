/// A DIMSE status, Status (0000,0900) of a response (PS3.7 §9.1.1.1.9 and Annex C; the service-specific
/// codes of PS3.4 Annexes B and C), with its category and its name.
///
/// Names are DCMTK's (`Refused: MoveDestinationUnknown`), so a status reads the same whichever backend
/// reported it; ``meaning`` is the standard's wording. Some codes mean different things per service
/// (0xB000 is a coercion warning for C-STORE and "sub-operations complete with failures" for C-MOVE), so a
/// status knows the ``Service`` whose table names it: a decoded response takes its command's service.
///
/// Two statuses are equal when their codes are: the service and name only say how the code reads.
///
/// It lives in the data layer, below both the protocol (``DICOMProtocol``'s DIMSE messages) and px's
/// typed model (PXCore's results), so that both use this one type and this one table.
public struct DIMSEStatus: Sendable, Hashable, CustomStringConvertible {
    /// The status categories (PS3.7 Annex C.1).
    public enum Category: String, Sendable, Hashable {
        /// 0x0000.
        case success
        /// 0xFF00, 0xFF01.
        case pending
        /// 0x0001, 0x0107, 0x0116, 0xBxxx.
        case warning
        /// Everything else: 0x01xx, 0x02xx, 0xA7xx, 0xA9xx, 0xAxxx, 0xCxxx.
        case failure
        /// 0xFE00.
        case cancel
    }

    /// The DIMSE service whose table names a code.
    public enum Service: Sendable, Hashable {
        case general, echo, find, move, get, store
    }

    /// The status code, (0000,0900).
    public let code: UInt16
    /// The service whose table names ``code``.
    public let service: Service
    /// A name a peer or tool printed that the table lacks (DCMTK's log names a status, not its code).
    private let reportedName: String?

    /// A status from its code, named from the table of `service`.
    public init(code: UInt16, service: Service = .general) {
        self.code = code
        self.service = service
        self.reportedName = nil
    }

    /// A status a tool reported by a name the table lacks: the category comes from the name's prefix
    /// (`Failed: ...`, `Warning: ...`) and the code is that category's general one.
    public init(reportedName name: String, service: Service) {
        let code: UInt16
        if name.hasPrefix("Success") {
            code = 0x0000
        } else if name.hasPrefix("Pending") {
            code = 0xFF00
        } else if name.hasPrefix("Warning") {
            code = 0xB000
        } else if name.hasPrefix("Cancel") {
            code = 0xFE00
        } else {
            code = 0xC000
        }
        self.code = code
        self.service = service
        self.reportedName = name
    }

    /// The status DCMTK's `-v` log names with `text` (`Refused: MoveDestinationUnknown`, `Pending`),
    /// or `nil` when the text is not in the table of `service`.
    public init?(dcmtkName text: String, service: Service) {
        // As DCMTK's tools print them: a storage table for C-STORE, the Query/Retrieve one otherwise.
        let tables =
            service == .store ? [Self.storageTable, Self.generalTable] : [Self.queryRetrieveTable, Self.generalTable]
        guard let entry = tables.lazy.compactMap({ $0.first { $0.name == text } }).first else { return nil }
        self.init(code: entry.code, service: service)
    }

    public static func == (lhs: DIMSEStatus, rhs: DIMSEStatus) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(self.code) }

    // General (PS3.7 Annex C).
    /// Success (0x0000).
    public static let success = DIMSEStatus(code: 0x0000)
    /// Cancel: the operation was terminated by a C-CANCEL (0xFE00).
    public static let cancel = DIMSEStatus(code: 0xFE00)
    /// Pending: matches or sub-operations are continuing (0xFF00).
    public static let pending = DIMSEStatus(code: 0xFF00)
    /// Failure: processing failure (0x0110).
    public static let processingFailure = DIMSEStatus(code: 0x0110)
    /// Failure: SOP class not supported (0x0122).
    public static let sopClassNotSupported = DIMSEStatus(code: 0x0122)
    /// Failure: unrecognized operation (0x0211): the service is not one this side performs.
    public static let unrecognizedOperation = DIMSEStatus(code: 0x0211)

    // Storage (PS3.4 §B.2.3) and Query/Retrieve (PS3.4 §C.4).
    /// Refused: out of resources (0xA700; storage and C-FIND).
    public static let outOfResources = DIMSEStatus(code: 0xA700)
    /// Refused: out of resources, unable to calculate number of matches (0xA701; C-MOVE, C-GET).
    public static let outOfResourcesNumberOfMatches = DIMSEStatus(code: 0xA701)
    /// Refused: out of resources, unable to perform sub-operations (0xA702; C-MOVE, C-GET).
    public static let outOfResourcesSubOperations = DIMSEStatus(code: 0xA702)
    /// Refused: move destination unknown (0xA801; C-MOVE).
    public static let moveDestinationUnknown = DIMSEStatus(code: 0xA801)
    /// Error: data set does not match SOP class / identifier does not match SOP class (0xA900).
    public static let dataSetDoesNotMatchSOPClass = DIMSEStatus(code: 0xA900)
    /// Error: cannot understand (0xC000; storage), failed: unable to process (Query/Retrieve).
    public static let cannotUnderstand = DIMSEStatus(code: 0xC000, service: .store)
    /// Warning: coercion of data elements (C-STORE), sub-operations complete with failures (C-MOVE, C-GET)
    /// (0xB000).
    public static let coercionOfDataElements = DIMSEStatus(code: 0xB000, service: .store)

    /// The category (PS3.7 Annex C).
    public var category: Category { Self.category(of: self.code) }

    /// The category by code range alone (PS3.7 Annex C).
    public static func category(of code: UInt16) -> Category {
        switch code {
        case 0x0000: return .success
        case 0xFF00, 0xFF01: return .pending
        case 0xFE00: return .cancel
        case 0x0001, 0x0107, 0x0116, 0xB000...0xBFFF: return .warning
        default: return .failure
        }
    }

    public var isSuccess: Bool { self.category == .success }
    /// Whether more responses follow.
    public var isPending: Bool { self.category == .pending }
    public var isFailure: Bool { self.category == .failure }
    /// Whether the operation completed: success or warning.
    public var isSuccessOrWarning: Bool { self.category == .success || self.category == .warning }

    /// DCMTK's name, e.g. `Refused: MoveDestinationUnknown`.
    public var name: String {
        if let reportedName { return reportedName }
        if let entry = Self.entry(code: self.code, service: self.service) { return entry.name }
        switch self.category {
        case .success: return "Success"
        case .pending: return "Pending"
        case .cancel: return "Cancel"
        case .warning: return "Warning"
        case .failure: return "Failed"
        }
    }

    /// The standard's meaning, e.g. `Refused: move destination unknown`.
    public var meaning: String {
        if let reportedName { return reportedName }
        return Self.entry(code: self.code, service: self.service)?.meaning ?? "status \(self.hexCode)"
    }

    /// `0xa801`: four lower-case hex digits, as DCMTK prints them.
    public var hexCode: String {
        let digits = String(self.code, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

    /// `Refused: MoveDestinationUnknown (0xa801)`.
    public var description: String { "\(self.name) (\(self.hexCode))" }
}

// MARK: - The name table

extension DIMSEStatus {
    struct Entry: Sendable {
        let code: UInt16
        let name: String
        let meaning: String
        init(_ code: UInt16, _ name: String, _ meaning: String) {
            self.code = code
            self.name = name
            self.meaning = meaning
        }
    }

    /// General statuses (PS3.7 Annex C.1–C.5), named as DCMTK's `DU_*StatusString` names them.
    static let generalTable: [Entry] = [
        Entry(0x0000, "Success", "Success"),
        Entry(0xFE00, "Cancel", "Operation terminated due to a cancel indication"),
        Entry(0xFF00, "Pending", "Matches are continuing"),
        Entry(
            0xFF01, "Pending: WarningUnsupportedOptionalKeys",
            "Matches are continuing; one or more optional keys were not supported"),
        Entry(
            0x0001, "Warning: RequestedOptionalAttributesNotSupported",
            "Requested optional attributes are not supported"),
        Entry(0x0107, "Warning: AttributeListError", "Attribute list error"),
        Entry(0x0116, "Warning: AttributeValueOutOfRange", "Attribute value out of range"),
        Entry(0x0105, "Failed: NoSuchAttribute", "No such attribute"),
        Entry(0x0106, "Failed: InvalidAttributeValue", "Invalid attribute value"),
        Entry(0x0110, "Failed: ProcessingFailure", "Processing failure"),
        Entry(0x0111, "Failed: DuplicateSOPInstance", "Duplicate SOP instance"),
        Entry(0x0112, "Failed: NoSuchObjectInstance", "No such SOP instance"),
        Entry(0x0117, "Failed: InvalidObjectInstance", "Invalid object instance"),
        Entry(0x0118, "Failed: NoSuchSOPClass", "No such SOP class"),
        Entry(0x0119, "Failed: ClassInstanceConflict", "Class-instance conflict"),
        Entry(0x0120, "Failed: MissingAttribute", "Missing attribute"),
        Entry(0x0121, "Failed: MissingAttributeValue", "Missing attribute value"),
        Entry(0x0122, "Refused: SOPClassNotSupported", "SOP class not supported"),
        Entry(0x0124, "Refused: NotAuthorized", "Not authorized"),
        Entry(0x0210, "Failed: DuplicateInvocation", "Duplicate invocation"),
        Entry(0x0211, "Failed: UnrecognizedOperation", "Unrecognized operation"),
        Entry(0x0212, "Failed: MistypedArgument", "Mistyped argument"),
        Entry(0x0213, "Failed: ResourceLimitation", "Resource limitation"),
    ]

    /// Query/Retrieve statuses (PS3.4 C.4.1.1.4, C.4.2.1.5, C.4.3.1.4).
    static let queryRetrieveTable: [Entry] = [
        Entry(0xA700, "Refused: OutOfResources", "Refused: out of resources"),
        Entry(
            0xA701, "Refused: OutOfResourcesNumberOfMatches",
            "Refused: out of resources, unable to calculate number of matches"),
        Entry(
            0xA702, "Refused: OutOfResourcesSubOperations",
            "Refused: out of resources, unable to perform sub-operations"),
        Entry(0xA801, "Refused: MoveDestinationUnknown", "Refused: move destination unknown"),
        Entry(0xA900, "Error: DataSetDoesNotMatchSOPClass", "Identifier does not match SOP class"),
        Entry(0xC000, "Failed: UnableToProcess", "Unable to process"),
        Entry(
            0xB000, "Warning: SubOperationsCompleteOneOrMoreFailures",
            "Sub-operations complete, one or more failures or warnings"),
    ]

    /// Storage statuses (PS3.4 B.2.3).
    static let storageTable: [Entry] = [
        Entry(0xA700, "Refused: OutOfResources", "Refused: out of resources"),
        Entry(0xA900, "Error: DataSetDoesNotMatchSOPClass", "Data set does not match SOP class"),
        Entry(0xC000, "Error: CannotUnderstand", "Cannot understand"),
        Entry(0xB000, "Warning: CoercionOfDataElements", "Coercion of data elements"),
        Entry(0xB006, "Warning: ElementsDiscarded", "Elements discarded"),
        Entry(0xB007, "Warning: DataSetDoesNotMatchSOPClass", "Data set does not match SOP class"),
    ]

    /// The tables that name a service's codes, most specific first.
    static func tables(for service: Service) -> [[Entry]] {
        switch service {
        case .find, .move, .get, .general: return [queryRetrieveTable, generalTable]
        case .store: return [storageTable, generalTable]
        case .echo: return [generalTable]
        }
    }

    /// The entry naming `code` for `service`, by exact code, then by the ranges of PS3.4 C.4.1.1.4 and
    /// B.2.3 (0xA7xx out of resources, 0xA9xx does not match SOP class, 0xCxxx cannot understand).
    static func entry(code: UInt16, service: Service) -> Entry? {
        for table in tables(for: service) {
            if let entry = table.first(where: { $0.code == code }) { return entry }
        }
        switch code {
        case 0xA700...0xA7FF: return Entry(code, "Refused: OutOfResources", "Refused: out of resources")
        case 0xA900...0xA9FF: return Entry(code, "Error: DataSetDoesNotMatchSOPClass", "Does not match SOP class")
        case 0xC000...0xCFFF:
            return service == .store
                ? Entry(code, "Error: CannotUnderstand", "Cannot understand")
                : Entry(code, "Failed: UnableToProcess", "Unable to process")
        default: return nil
        }
    }
}
