/// The value of Command Field (0000,0100): which DIMSE message a command set carries (PS3.7 §9.3, §10.3, Annex E).
public struct DIMSECommandField: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// C-STORE-RQ (PS3.7 §9.3.1.1).
    public static let cStoreRQ = DIMSECommandField(rawValue: 0x0001)
    /// C-STORE-RSP (PS3.7 §9.3.1.2).
    public static let cStoreRSP = DIMSECommandField(rawValue: 0x8001)
    /// C-GET-RQ (PS3.7 §9.3.3.1).
    public static let cGetRQ = DIMSECommandField(rawValue: 0x0010)
    /// C-GET-RSP (PS3.7 §9.3.3.2).
    public static let cGetRSP = DIMSECommandField(rawValue: 0x8010)
    /// C-FIND-RQ (PS3.7 §9.3.2.1).
    public static let cFindRQ = DIMSECommandField(rawValue: 0x0020)
    /// C-FIND-RSP (PS3.7 §9.3.2.2).
    public static let cFindRSP = DIMSECommandField(rawValue: 0x8020)
    /// C-MOVE-RQ (PS3.7 §9.3.4.1).
    public static let cMoveRQ = DIMSECommandField(rawValue: 0x0021)
    /// C-MOVE-RSP (PS3.7 §9.3.4.2).
    public static let cMoveRSP = DIMSECommandField(rawValue: 0x8021)
    /// C-ECHO-RQ (PS3.7 §9.3.5.1).
    public static let cEchoRQ = DIMSECommandField(rawValue: 0x0030)
    /// C-ECHO-RSP (PS3.7 §9.3.5.2).
    public static let cEchoRSP = DIMSECommandField(rawValue: 0x8030)
    /// C-CANCEL-RQ (PS3.7 §9.3.2.3).
    public static let cCancelRQ = DIMSECommandField(rawValue: 0x0FFF)

    /// Whether this is a response (bit 15 set).
    public var isResponse: Bool { self.rawValue & 0x8000 != 0 }

    public var description: String {
        switch self {
        case .cStoreRQ: return "C-STORE-RQ"
        case .cStoreRSP: return "C-STORE-RSP"
        case .cGetRQ: return "C-GET-RQ"
        case .cGetRSP: return "C-GET-RSP"
        case .cFindRQ: return "C-FIND-RQ"
        case .cFindRSP: return "C-FIND-RSP"
        case .cMoveRQ: return "C-MOVE-RQ"
        case .cMoveRSP: return "C-MOVE-RSP"
        case .cEchoRQ: return "C-ECHO-RQ"
        case .cEchoRSP: return "C-ECHO-RSP"
        case .cCancelRQ: return "C-CANCEL-RQ"
        case .nEventReportRQ: return "N-EVENT-REPORT-RQ"
        case .nEventReportRSP: return "N-EVENT-REPORT-RSP"
        case .nActionRQ: return "N-ACTION-RQ"
        case .nActionRSP: return "N-ACTION-RSP"
        default: return "command 0x" + String(self.rawValue, radix: 16, uppercase: true)
        }
    }
}

/// Priority (0000,0700) of a C-STORE, C-FIND, C-MOVE or C-GET request (PS3.7 §9.3.1.1).
public struct DIMSEPriority: RawRepresentable, Sendable, Hashable {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// MEDIUM (0x0000).
    public static let medium = DIMSEPriority(rawValue: 0x0000)
    /// HIGH (0x0001).
    public static let high = DIMSEPriority(rawValue: 0x0001)
    /// LOW (0x0002).
    public static let low = DIMSEPriority(rawValue: 0x0002)
}
