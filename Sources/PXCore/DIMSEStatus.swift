/// A DIMSE status (PS3.7 §9.1.1.1.9 and Annex C), with its category and a name in DCMTK's wording
/// (`Refused: MoveDestinationUnknown`), so both backends report a status the same way.
public struct DIMSEStatus: Hashable, Sendable, CustomStringConvertible {
    /// The status category (PS3.7 Annex C.1).
    public enum Category: String, Hashable, Sendable {
        case success, pending, warning, failure, cancel
    }

    /// The DIMSE service a status belongs to: some codes mean different things per service
    /// (0xB000 is a coercion warning for C-STORE and "sub-operations complete with failures" for
    /// C-MOVE).
    public enum Service: Hashable, Sendable {
        case general, echo, find, move, get, store
    }

    /// The status code, (0000,0900).
    public let code: UInt16
    public let category: Category
    /// DCMTK's name, e.g. `Refused: MoveDestinationUnknown`.
    public let name: String
    /// The standard's meaning, e.g. `Move destination unknown`.
    public let meaning: String

    /// A status from its code, named from the table of ``Service``.
    public init(code: UInt16, service: Service = .general) {
        self.code = code
        if let entry = DIMSEStatus.lookup(code: code, service: service) {
            category = entry.category
            name = entry.name
            meaning = entry.meaning
        } else {
            category = DIMSEStatus.category(of: code)
            switch category {
            case .success: name = "Success"
            case .pending: name = "Pending"
            case .cancel: name = "Cancel"
            case .warning: name = "Warning"
            case .failure: name = "Failed"
            }
            meaning = "status \(DIMSEStatus.hex(code))"
        }
    }

    /// A status with explicit parts (a name a peer or tool printed that the table lacks).
    public init(code: UInt16, category: Category, name: String, meaning: String) {
        self.code = code
        self.category = category
        self.name = name
        self.meaning = meaning
    }

    /// 0x0000.
    public static let success = DIMSEStatus(code: 0x0000)
    /// 0xFF00.
    public static let pending = DIMSEStatus(code: 0xFF00)

    /// `0xa801`: four lower-case hex digits, as DCMTK prints them.
    public var hexCode: String { DIMSEStatus.hex(code) }

    public var isSuccess: Bool { category == .success }
    public var isPending: Bool { category == .pending }
    public var isFailure: Bool { category == .failure }

    public var description: String { "\(hexCode) \(name)" }

    static func hex(_ code: UInt16) -> String {
        let digits = String(code, radix: 16)
        return "0x" + String(repeating: "0", count: 4 - digits.count) + digits
    }

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
}
