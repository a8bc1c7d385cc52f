/// The A-RELEASE-RQ PDU, type 0x05 (PS3.8 §9.3.6): four reserved bytes.
public struct ReleaseRQ: ReleasePDU {
    public static var pduType: PDUType { .releaseRQ }

    /// Creates an A-RELEASE-RQ.
    public init() {}
}
