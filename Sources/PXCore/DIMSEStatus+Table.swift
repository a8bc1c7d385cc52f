extension DIMSEStatus {
    struct Entry: Sendable {
        let code: UInt16
        let category: Category
        let name: String
        let meaning: String
        init(_ code: UInt16, _ category: Category, _ name: String, _ meaning: String) {
            self.code = code
            self.category = category
            self.name = name
            self.meaning = meaning
        }
    }

    /// General statuses (PS3.7 Annex C.1–C.5), named as DCMTK's `DU_*StatusString` name them.
    static let generalTable: [Entry] = [
        Entry(0x0000, .success, "Success", "Success"),
        Entry(0xFE00, .cancel, "Cancel", "Operation terminated due to a cancel indication"),
        Entry(0xFF00, .pending, "Pending", "Matches are continuing"),
        Entry(0xFF01, .pending, "Pending: WarningUnsupportedOptionalKeys",
              "Matches are continuing; one or more optional keys were not supported"),
        Entry(0x0001, .warning, "Warning: RequestedOptionalAttributesNotSupported", "Requested optional attributes are not supported"),
        Entry(0x0107, .warning, "Warning: AttributeListError", "Attribute list error"),
        Entry(0x0116, .warning, "Warning: AttributeValueOutOfRange", "Attribute value out of range"),
        Entry(0x0105, .failure, "Failed: NoSuchAttribute", "No such attribute"),
        Entry(0x0106, .failure, "Failed: InvalidAttributeValue", "Invalid attribute value"),
        Entry(0x0110, .failure, "Failed: ProcessingFailure", "Processing failure"),
        Entry(0x0111, .failure, "Failed: DuplicateSOPInstance", "Duplicate SOP instance"),
        Entry(0x0112, .failure, "Failed: NoSuchObjectInstance", "No such SOP instance"),
        Entry(0x0117, .failure, "Failed: InvalidObjectInstance", "Invalid object instance"),
        Entry(0x0118, .failure, "Failed: NoSuchSOPClass", "No such SOP class"),
        Entry(0x0119, .failure, "Failed: ClassInstanceConflict", "Class-instance conflict"),
        Entry(0x0120, .failure, "Failed: MissingAttribute", "Missing attribute"),
        Entry(0x0121, .failure, "Failed: MissingAttributeValue", "Missing attribute value"),
        Entry(0x0122, .failure, "Refused: SOPClassNotSupported", "SOP class not supported"),
        Entry(0x0124, .failure, "Refused: NotAuthorized", "Not authorized"),
        Entry(0x0210, .failure, "Failed: DuplicateInvocation", "Duplicate invocation"),
        Entry(0x0211, .failure, "Failed: UnrecognizedOperation", "Unrecognized operation"),
        Entry(0x0212, .failure, "Failed: MistypedArgument", "Mistyped argument"),
        Entry(0x0213, .failure, "Failed: ResourceLimitation", "Resource limitation"),
    ]

    /// Query/Retrieve statuses (PS3.4 C.4.1.1.4, C.4.2.1.5, C.4.3.1.4).
    static let queryRetrieveTable: [Entry] = [
        Entry(0xA700, .failure, "Refused: OutOfResources", "Refused: out of resources"),
        Entry(0xA701, .failure, "Refused: OutOfResourcesNumberOfMatches",
              "Refused: out of resources, unable to calculate number of matches"),
        Entry(0xA702, .failure, "Refused: OutOfResourcesSubOperations",
              "Refused: out of resources, unable to perform sub-operations"),
        Entry(0xA801, .failure, "Refused: MoveDestinationUnknown", "Refused: move destination unknown"),
        Entry(0xA900, .failure, "Error: DataSetDoesNotMatchSOPClass", "Identifier does not match SOP class"),
        Entry(0xC000, .failure, "Failed: UnableToProcess", "Unable to process"),
        Entry(0xB000, .warning, "Warning: SubOperationsCompleteOneOrMoreFailures",
              "Sub-operations complete, one or more failures or warnings"),
    ]

    /// Storage statuses (PS3.4 B.2.3).
    static let storageTable: [Entry] = [
        Entry(0xA700, .failure, "Refused: OutOfResources", "Refused: out of resources"),
        Entry(0xA900, .failure, "Error: DataSetDoesNotMatchSOPClass", "Data set does not match SOP class"),
        Entry(0xC000, .failure, "Error: CannotUnderstand", "Cannot understand"),
        Entry(0xB000, .warning, "Warning: CoercionOfDataElements", "Coercion of data elements"),
        Entry(0xB006, .warning, "Warning: ElementsDiscarded", "Elements discarded"),
        Entry(0xB007, .warning, "Warning: DataSetDoesNotMatchSOPClass", "Data set does not match SOP class"),
    ]

    static func lookup(code: UInt16, service: Service) -> Entry? {
        let specific: [Entry]
        switch service {
        case .find, .move, .get, .general: specific = queryRetrieveTable
        case .store: specific = storageTable
        case .echo: specific = []
        }
        if let e = specific.first(where: { $0.code == code }) { return e }
        if let e = generalTable.first(where: { $0.code == code }) { return e }
        // Ranges: 0xA7xx out of resources, 0xA9xx / 0xCxxx (PS3.4 C.4.1.1.4, B.2.3).
        switch code {
        case 0xA700...0xA7FF: return Entry(code, .failure, "Refused: OutOfResources", "Refused: out of resources")
        case 0xA900...0xA9FF:
            return Entry(code, .failure, "Error: DataSetDoesNotMatchSOPClass", "Does not match SOP class")
        case 0xC000...0xCFFF:
            return service == .store
                ? Entry(code, .failure, "Error: CannotUnderstand", "Cannot understand")
                : Entry(code, .failure, "Failed: UnableToProcess", "Unable to process")
        default: return nil
        }
    }

    /// The status DCMTK's `-v` log names with `text` (`Refused: MoveDestinationUnknown`,
    /// `Pending`), or `nil` when the text is not in the table.
    public init?(dcmtkName text: String, service: Service) {
        let all: [Entry]
        switch service {
        case .store: all = DIMSEStatus.storageTable + DIMSEStatus.generalTable
        default: all = DIMSEStatus.queryRetrieveTable + DIMSEStatus.generalTable
        }
        guard let entry = all.first(where: { $0.name == text }) else { return nil }
        self.init(code: entry.code, category: entry.category, name: entry.name, meaning: entry.meaning)
    }
}
