/// The seven upper-layer PDU types (PS3.8 §9.3, Table 9-11 and following).
public enum PDUType: UInt8, Sendable, Hashable, CaseIterable {
    case associateRQ = 0x01
    case associateAC = 0x02
    case associateRJ = 0x03
    case dataTF = 0x04
    case releaseRQ = 0x05
    case releaseRP = 0x06
    case abort = 0x07
}
