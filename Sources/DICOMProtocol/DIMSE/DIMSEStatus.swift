/// A DIMSE status (0000,0900) with its name and category (PS3.7 §9.1.1.1.9, Annex C; service-specific codes
/// from PS3.4 Annexes B and C).
public struct DIMSEStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The status categories of PS3.7 Annex C.
    public enum Category: String, Sendable, Hashable {
        /// 0x0000.
        case success
        /// 0x0001, 0x0107, 0x0116, 0xBxxx.
        case warning
        /// 0xFE00.
        case cancel
        /// 0xFF00, 0xFF01.
        case pending
        /// Everything else: 0x01xx, 0x02xx, 0xA7xx, 0xA9xx, 0xAxxx, 0xCxxx.
        case failure
    }

    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    // General (PS3.7 Annex C).
    /// Success (0x0000).
    public static let success = DIMSEStatus(0x0000)
    /// Cancel: the operation was terminated by a C-CANCEL (0xFE00).
    public static let cancel = DIMSEStatus(0xFE00)
    /// Pending: matches/sub-operations are continuing (0xFF00).
    public static let pending = DIMSEStatus(0xFF00)
    /// Pending: optional keys not supported (C-FIND, 0xFF01).
    public static let pendingWarning = DIMSEStatus(0xFF01)
    /// Warning: attribute list error (0x0107).
    public static let attributeListError = DIMSEStatus(0x0107)
    /// Warning: attribute value out of range (0x0116).
    public static let attributeValueOutOfRange = DIMSEStatus(0x0116)
    /// Failure: processing failure (0x0110).
    public static let processingFailure = DIMSEStatus(0x0110)
    /// Failure: duplicate SOP instance (0x0111).
    public static let duplicateSOPInstance = DIMSEStatus(0x0111)
    /// Failure: no such SOP instance (0x0112).
    public static let noSuchSOPInstance = DIMSEStatus(0x0112)
    /// Failure: invalid object instance (0x0117).
    public static let invalidObjectInstance = DIMSEStatus(0x0117)
    /// Failure: no such SOP class (0x0118).
    public static let noSuchSOPClass = DIMSEStatus(0x0118)
    /// Failure: SOP class not supported (0x0122).
    public static let sopClassNotSupported = DIMSEStatus(0x0122)
    /// Failure: not authorized (0x0124).
    public static let notAuthorized = DIMSEStatus(0x0124)
    /// Failure: duplicate invocation (0x0210).
    public static let duplicateInvocation = DIMSEStatus(0x0210)
    /// Failure: unrecognized operation (0x0211).
    public static let unrecognizedOperation = DIMSEStatus(0x0211)
    /// Failure: mistyped argument (0x0212).
    public static let mistypedArgument = DIMSEStatus(0x0212)
    /// Failure: resource limitation (0x0213).
    public static let resourceLimitation = DIMSEStatus(0x0213)

    // Storage (PS3.4 §B.2.3) and Query/Retrieve (PS3.4 §C.4).
    /// Refused: out of resources (0xA700; storage and C-FIND).
    public static let outOfResources = DIMSEStatus(0xA700)
    /// Refused: out of resources, unable to calculate number of matches (0xA701; C-MOVE, C-GET).
    public static let outOfResourcesNumberOfMatches = DIMSEStatus(0xA701)
    /// Refused: out of resources, unable to perform sub-operations (0xA702; C-MOVE, C-GET).
    public static let outOfResourcesSubOperations = DIMSEStatus(0xA702)
    /// Refused: move destination unknown (0xA801; C-MOVE).
    public static let moveDestinationUnknown = DIMSEStatus(0xA801)
    /// Error: data set does not match SOP class / identifier does not match SOP class (0xA900).
    public static let dataSetDoesNotMatchSOPClass = DIMSEStatus(0xA900)
    /// Error: cannot understand (0xC000).
    public static let cannotUnderstand = DIMSEStatus(0xC000)
    /// Warning: coercion of data elements, or sub-operations complete with failures (0xB000).
    public static let coercionOfDataElements = DIMSEStatus(0xB000)
    /// Warning: elements discarded (0xB006).
    public static let elementsDiscarded = DIMSEStatus(0xB006)
    /// Warning: data set does not match SOP class (0xB007).
    public static let dataSetDoesNotMatchSOPClassWarning = DIMSEStatus(0xB007)

    /// The category of PS3.7 Annex C.
    public var category: Category {
        switch self.rawValue {
        case 0x0000: return .success
        case 0xFE00: return .cancel
        case 0xFF00, 0xFF01: return .pending
        case 0x0001, 0x0107, 0x0116, 0xB000...0xBFFF: return .warning
        default: return .failure
        }
    }

    /// Whether more responses follow.
    public var isPending: Bool { self.category == .pending }
    /// Whether the operation completed: success or warning.
    public var isSuccessOrWarning: Bool { self.category == .success || self.category == .warning }

    /// The status name, in DCMTK's wording where one exists.
    public var name: String {
        switch self.rawValue {
        case 0x0000: return "Success"
        case 0xFE00: return "Cancel"
        case 0xFF00: return "Pending"
        case 0xFF01: return "Pending: WarningUnsupportedOptionalKeys"
        case 0x0001: return "Warning"
        case 0x0107: return "Warning: AttributeListError"
        case 0x0116: return "Warning: AttributeValueOutOfRange"
        case 0x0105: return "Failure: NoSuchAttribute"
        case 0x0106: return "Failure: InvalidAttributeValue"
        case 0x0110: return "Failure: ProcessingFailure"
        case 0x0111: return "Failure: DuplicateSOPInstance"
        case 0x0112: return "Failure: NoSuchSOPInstance"
        case 0x0117: return "Failure: InvalidObjectInstance"
        case 0x0118: return "Failure: NoSuchSOPClass"
        case 0x0122: return "Failure: SOPClassNotSupported"
        case 0x0124: return "Failure: NotAuthorized"
        case 0x0210: return "Failure: DuplicateInvocation"
        case 0x0211: return "Failure: UnrecognizedOperation"
        case 0x0212: return "Failure: MistypedArgument"
        case 0x0213: return "Failure: ResourceLimitation"
        case 0xA700: return "Refused: OutOfResources"
        case 0xA701: return "Refused: OutOfResourcesNumberOfMatches"
        case 0xA702: return "Refused: OutOfResourcesSubOperations"
        case 0xA801: return "Refused: MoveDestinationUnknown"
        case 0xA900: return "Error: DataSetDoesNotMatchSOPClass"
        case 0xB000: return "Warning: CoercionOfDataElements"
        case 0xB006: return "Warning: ElementsDiscarded"
        case 0xB007: return "Warning: DataSetDoesNotMatchSOPClass"
        case 0xA700...0xA7FF: return "Refused: OutOfResources"
        case 0xA900...0xA9FF: return "Error: DataSetDoesNotMatchSOPClass"
        case 0xAA00...0xAAFF: return "Failure: UnableToPerformSubOperations"
        case 0xC000...0xCFFF: return "Error: CannotUnderstand"
        case 0xB000...0xBFFF: return "Warning"
        case 0x0100...0x01FF: return "Failure"
        default: return "Failure"
        }
    }

    public var description: String {
        let hex = String(self.rawValue, radix: 16, uppercase: true)
        return "\(self.name) (0x" + String(repeating: "0", count: 4 - hex.count) + hex + ")"
    }
}
