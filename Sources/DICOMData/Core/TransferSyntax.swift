/// How a dataset is encoded: VR explicit or implicit, byte order, deflate, encapsulated pixel data
/// (PS3.5 §10 and Annex A).
public struct TransferSyntax: Hashable, Sendable, CustomStringConvertible {
    public let uid: String
    public let isExplicitVR: Bool
    public let isBigEndian: Bool
    /// The dataset after the file meta information is deflated (PS3.5 §A.5).
    public let isDeflated: Bool
    /// Pixel data is encapsulated in fragments (PS3.5 §A.4).
    public let isEncapsulated: Bool

    private init(uid: String, explicit: Bool, bigEndian: Bool = false, deflated: Bool = false, encapsulated: Bool) {
        self.uid = uid
        self.isExplicitVR = explicit
        self.isBigEndian = bigEndian
        self.isDeflated = deflated
        self.isEncapsulated = encapsulated
    }

    /// Implicit VR Little Endian, the default transfer syntax (PS3.5 §A.1).
    public static let implicitVRLittleEndian = TransferSyntax(
        uid: "1.2.840.10008.1.2", explicit: false, encapsulated: false)
    /// Explicit VR Little Endian (PS3.5 §A.2).
    public static let explicitVRLittleEndian = TransferSyntax(
        uid: "1.2.840.10008.1.2.1", explicit: true, encapsulated: false)
    /// Deflated Explicit VR Little Endian (PS3.5 §A.5); read only.
    public static let deflatedExplicitVRLittleEndian = TransferSyntax(
        uid: "1.2.840.10008.1.2.1.99", explicit: true, deflated: true, encapsulated: false)
    /// Explicit VR Big Endian (PS3.5 §A.3, retired); read only.
    public static let explicitVRBigEndian = TransferSyntax(
        uid: "1.2.840.10008.1.2.2", explicit: true, bigEndian: true, encapsulated: false)

    /// The transfer syntaxes whose datasets are not compressed, in the order px proposes them.
    public static let uncompressed: [TransferSyntax] = [
        .explicitVRLittleEndian, .implicitVRLittleEndian, .explicitVRBigEndian,
    ]

    /// The transfer syntax for a UID. Every UID not listed above is one of the encapsulated
    /// (compressed) syntaxes, which all encode the dataset as Explicit VR Little Endian (PS3.5 §A.4).
    public init(uid rawUID: String) {
        let uid = trimUID(rawUID)
        switch uid {
        case Self.implicitVRLittleEndian.uid: self = .implicitVRLittleEndian
        case Self.explicitVRLittleEndian.uid: self = .explicitVRLittleEndian
        case Self.deflatedExplicitVRLittleEndian.uid: self = .deflatedExplicitVRLittleEndian
        case Self.explicitVRBigEndian.uid: self = .explicitVRBigEndian
        default: self.init(uid: uid, explicit: true, encapsulated: true)
        }
    }

    /// Whether px can write datasets in this transfer syntax without transcoding.
    public var isWritable: Bool { !isBigEndian && !isDeflated }

    public var description: String { uid }
}

/// A UID without the NUL or space padding that makes it even (PS3.5 §9.1).
@inlinable
func trimUID(_ uid: String) -> String {
    var u = Substring(uid)
    while let last = u.last, last == "\0" || last == " " { u.removeLast() }
    while let first = u.first, first == " " { u.removeFirst() }
    return String(u)
}
