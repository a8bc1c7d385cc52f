/// The A-RELEASE-RP PDU, type 0x06 (PS3.8 §9.3.7): four reserved bytes.
public struct ReleaseRP: ReleasePDU {
    public static var pduType: PDUType { .releaseRP }

    /// Creates an A-RELEASE-RP.
    public init() {}
}
