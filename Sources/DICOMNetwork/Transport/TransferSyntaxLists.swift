import DICOMData

/// Transfer syntax lists for negotiation (PS3.5 §10, Annex A).
public enum TransferSyntaxLists {
    /// Explicit VR Little Endian, then Implicit VR Little Endian: the preference for uncompressed data.
    public static let uncompressed: [String] = [
        WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian,
    ]

    /// The encapsulated (compressed) transfer syntaxes of the UID registry, plus Encapsulated Uncompressed
    /// Explicit VR Little Endian: accepted for storage as they are, without transcoding.
    public static let encapsulated: [String] = [
        "1.2.840.10008.1.2.1.98",
        "1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.51", "1.2.840.10008.1.2.4.57", "1.2.840.10008.1.2.4.70",
        "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.81", "1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91",
        "1.2.840.10008.1.2.4.92", "1.2.840.10008.1.2.4.93", "1.2.840.10008.1.2.4.94", "1.2.840.10008.1.2.4.95",
        "1.2.840.10008.1.2.4.100", "1.2.840.10008.1.2.4.100.1", "1.2.840.10008.1.2.4.101", "1.2.840.10008.1.2.4.101.1",
        "1.2.840.10008.1.2.4.102", "1.2.840.10008.1.2.4.102.1", "1.2.840.10008.1.2.4.103", "1.2.840.10008.1.2.4.103.1",
        "1.2.840.10008.1.2.4.104", "1.2.840.10008.1.2.4.104.1", "1.2.840.10008.1.2.4.105", "1.2.840.10008.1.2.4.105.1",
        "1.2.840.10008.1.2.4.106", "1.2.840.10008.1.2.4.106.1", "1.2.840.10008.1.2.4.107", "1.2.840.10008.1.2.4.108",
        "1.2.840.10008.1.2.4.201", "1.2.840.10008.1.2.4.202", "1.2.840.10008.1.2.4.203", "1.2.840.10008.1.2.4.204",
        "1.2.840.10008.1.2.4.205", "1.2.840.10008.1.2.5", "1.2.840.10008.1.2.7.1", "1.2.840.10008.1.2.7.2",
        "1.2.840.10008.1.2.7.3",
    ]

    /// Everything a storage SCP accepts, in the order it picks from a context's offer: an encapsulated syntax
    /// first (a requestor offers one only when it holds the data that way, so accepting it avoids
    /// transcoding), then Explicit and Implicit VR Little Endian, then Deflated Explicit VR Little Endian.
    public static let storage: [String] = encapsulated + uncompressed + [WellKnownUID.deflatedExplicitVRLittleEndian]
}
