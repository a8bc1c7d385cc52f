import DICOMData

/// A typed DIMSE message (PS3.7 §9.3): converts to and from its ``CommandSet``.
public protocol DIMSECommand: Sendable, Hashable {
    /// The Command Field value of this message type.
    static var commandField: DIMSECommandField { get }
    /// Whether a data set follows the command (Command Data Set Type other than 0x0101).
    var hasDataSet: Bool { get }
    /// Reads the message from a decoded command set.
    ///
    /// - Throws: ``DIMSEError/missingElement(_:in:)`` when a required element is absent.
    init(commandSet: CommandSet) throws
    /// The command set, with Command Field and Command Data Set Type filled in.
    var commandSet: CommandSet { get }
}

extension CommandSet {
    /// Starts a command set with Command Field and Command Data Set Type.
    init(_ field: DIMSECommandField, hasDataSet: Bool) {
        self.init()
        self[Element.commandField] = .uint16(field.rawValue)
        self[Element.commandDataSetType] = .uint16(hasDataSet ? CommandSet.dataSetPresent : CommandSet.noDataSet)
    }

    /// The required Status (0000,0900), named from `service`'s table.
    func status(_ service: DIMSEStatus.Service, in field: DIMSECommandField) throws -> DIMSEStatus {
        DIMSEStatus(code: try self.required16(Element.status, "Status", in: field), service: service)
    }

    /// A required US element.
    func required16(_ element: UInt16, _ name: String, in field: DIMSECommandField) throws -> UInt16 {
        guard let value = self.uint16(element) else { throw DIMSEError.missingElement(name, in: field.description) }
        return value
    }

    /// A required UI, AE or LO element.
    func requiredString(_ element: UInt16, _ name: String, in field: DIMSECommandField) throws -> String {
        guard let value = self.string(element) else { throw DIMSEError.missingElement(name, in: field.description) }
        return value
    }

    /// Sets an optional string element.
    mutating func set(_ element: UInt16, _ value: String?) {
        self[element] = value.map(Value.string)
    }

    /// Sets an optional US element.
    mutating func set(_ element: UInt16, _ value: UInt16?) {
        self[element] = value.map(Value.uint16)
    }
}
