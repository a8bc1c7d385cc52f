/// The seven upper-layer PDU types (PS3.8 §9.3, Table 9-11 and following).
public enum PDUType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case associateRQ = 0x01
    case associateAC = 0x02
    case associateRJ = 0x03
    case dataTF = 0x04
    case releaseRQ = 0x05
    case releaseRP = 0x06
    case abort = 0x07

    /// The PS3.8 name of the PDU, e.g. "A-ASSOCIATE-RQ".
    public var description: String {
        switch self {
        case .associateRQ: return "A-ASSOCIATE-RQ"
        case .associateAC: return "A-ASSOCIATE-AC"
        case .associateRJ: return "A-ASSOCIATE-RJ"
        case .dataTF: return "P-DATA-TF"
        case .releaseRQ: return "A-RELEASE-RQ"
        case .releaseRP: return "A-RELEASE-RP"
        case .abort: return "A-ABORT"
        }
    }
}
