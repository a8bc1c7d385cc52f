import DICOMData

/// Transfer syntax lists for negotiation (PS3.5 §10, Annex A).
public enum TransferSyntaxLists {
    /// Explicit VR Little Endian, then Implicit VR Little Endian: the preference for uncompressed data.
    public static let uncompressed: [String] = [
        WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian,
    ]

    /// The encapsulated (compressed) transfer syntaxes of the UID registry, plus Encapsulated Uncompressed
    /// Explicit VR Little Endian: accepted for storage as they are, without transcoding.
    public static let encapsulated: [String] =
        [
            "1.2.840.10008.1.2.1.98",
            "1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.51", "1.2.840.10008.1.2.4.57", "1.2.840.10008.1.2.4.70",
            "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.81", "1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91",
            "1.2.840.10008.1.2.4.92", "1.2.840.10008.1.2.4.93", "1.2.840.10008.1.2.4.94", "1.2.840.10008.1.2.4.95",
            "1.2.840.10008.1.2.4.100", "1.2.840.10008.1.2.4.100.1", "1.2.840.10008.1.2.4.101",
            "1.2.840.10008.1.2.4.101.1",
            "1.2.840.10008.1.2.4.102", "1.2.840.10008.1.2.4.102.1", "1.2.840.10008.1.2.4.103",
            "1.2.840.10008.1.2.4.103.1",
            "1.2.840.10008.1.2.4.104", "1.2.840.10008.1.2.4.104.1", "1.2.840.10008.1.2.4.105",
            "1.2.840.10008.1.2.4.105.1",
            "1.2.840.10008.1.2.4.106", "1.2.840.10008.1.2.4.106.1", "1.2.840.10008.1.2.4.107",
            "1.2.840.10008.1.2.4.108",
            "1.2.840.10008.1.2.4.201", "1.2.840.10008.1.2.4.202", "1.2.840.10008.1.2.4.203", "1.2.840.10008.1.2.4.204",
            "1.2.840.10008.1.2.4.205", "1.2.840.10008.1.2.5", "1.2.840.10008.1.2.7.1", "1.2.840.10008.1.2.7.2",
            "1.2.840.10008.1.2.7.3",
            // JPEG XL (lossless, JPEG recompression, lossy) and Deflated Image Frame Compression (PS3.5 §A.4.12,
            // §A.4.13, 2024): newer than px's UID dictionary, stored as they arrive all the same.
            "1.2.840.10008.1.2.4.110", "1.2.840.10008.1.2.4.111", "1.2.840.10008.1.2.4.112", "1.2.840.10008.1.2.8.1",
        ] + retiredJPEG

    /// The retired JPEG processes (PS3.5 §A.4.1, Table A.4-3 of earlier editions): no longer defined, but
    /// old archives still hold such files, and a receiver stores them as they are.
    public static let retiredJPEG: [String] = [
        "1.2.840.10008.1.2.4.52", "1.2.840.10008.1.2.4.53", "1.2.840.10008.1.2.4.54", "1.2.840.10008.1.2.4.55",
        "1.2.840.10008.1.2.4.56", "1.2.840.10008.1.2.4.58", "1.2.840.10008.1.2.4.59", "1.2.840.10008.1.2.4.60",
        "1.2.840.10008.1.2.4.61", "1.2.840.10008.1.2.4.62", "1.2.840.10008.1.2.4.63", "1.2.840.10008.1.2.4.64",
        "1.2.840.10008.1.2.4.65", "1.2.840.10008.1.2.4.66",
    ]

    /// Everything a storage SCP accepts, in the order it picks from a context's offer: an encapsulated syntax
    /// first (a requestor offers one only when it holds the data that way, so accepting it avoids
    /// transcoding), then Explicit and Implicit VR Little Endian, then Deflated Explicit VR Little Endian,
    /// then Explicit VR Big Endian (PS3.5 §A.3, retired but still sent by old modalities; accepted when a
    /// context offers nothing else, so that a Big Endian file arrives unchanged instead of being converted
    /// by its sender). Every one of them is stored as it arrives: the data set is written as received, with
    /// the context's transfer syntax in the file meta information.
    public static let storage: [String] =
        encapsulated + uncompressed + [WellKnownUID.deflatedExplicitVRLittleEndian, WellKnownUID.explicitVRBigEndian]

    /// Every transfer syntax a C-GET requestor can receive and store unchanged, most common first: what gets a
    /// presentation context of its own when the context budget allows (see
    /// ``ProposedPresentationContext/get(_:storageSOPClasses:transferSyntaxes:)``). The uncompressed ones lead:
    /// a peer that sends every instance of a SOP class on the first context it accepted for it (dcmqrscp)
    /// then picks an uncompressed one when it cannot send a compressed syntax unchanged.
    public static let retrievable: [String] = {
        let leading = [
            WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian,
            "1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.70", "1.2.840.10008.1.2.4.90", "1.2.840.10008.1.2.4.91",
            "1.2.840.10008.1.2.4.80", "1.2.840.10008.1.2.4.81", "1.2.840.10008.1.2.5", "1.2.840.10008.1.2.4.51",
            "1.2.840.10008.1.2.4.57", WellKnownUID.explicitVRBigEndian, WellKnownUID.deflatedExplicitVRLittleEndian,
            "1.2.840.10008.1.2.4.201", "1.2.840.10008.1.2.4.202", "1.2.840.10008.1.2.4.203",
        ]
        let rest = storage.filter { !leading.contains($0) }
        return leading + rest
    }()
}
