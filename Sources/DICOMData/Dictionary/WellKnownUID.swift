/// The registered UIDs px uses by name (PS3.6 Annex A). Every other registered UID is in
/// ``UIDDictionary``.
public enum WellKnownUID {
    // Application context (PS3.7 §A.2.1).

    /// DICOM Application Context Name, the only application context (PS3.7 §A.2.1).
    public static let dicomApplicationContext = "1.2.840.10008.3.1.1.1"

    // Verification (PS3.4 Annex A).

    /// Verification SOP Class: C-ECHO (PS3.4 §A.4).
    public static let verificationSOPClass = "1.2.840.10008.1.1"

    // Query/Retrieve (PS3.4 Annex C, Table C.4-1).

    /// Patient Root Query/Retrieve Information Model - FIND.
    public static let patientRootQueryRetrieveFind = "1.2.840.10008.5.1.4.1.2.1.1"
    /// Patient Root Query/Retrieve Information Model - MOVE.
    public static let patientRootQueryRetrieveMove = "1.2.840.10008.5.1.4.1.2.1.2"
    /// Patient Root Query/Retrieve Information Model - GET.
    public static let patientRootQueryRetrieveGet = "1.2.840.10008.5.1.4.1.2.1.3"
    /// Study Root Query/Retrieve Information Model - FIND.
    public static let studyRootQueryRetrieveFind = "1.2.840.10008.5.1.4.1.2.2.1"
    /// Study Root Query/Retrieve Information Model - MOVE.
    public static let studyRootQueryRetrieveMove = "1.2.840.10008.5.1.4.1.2.2.2"
    /// Study Root Query/Retrieve Information Model - GET.
    public static let studyRootQueryRetrieveGet = "1.2.840.10008.5.1.4.1.2.2.3"
    /// Modality Worklist Information Model - FIND (PS3.4 Annex K).
    public static let modalityWorklistFind = "1.2.840.10008.5.1.4.31"

    // Storage related (PS3.4 Annex B and J).

    /// Storage Commitment Push Model SOP Class (PS3.4 Annex J).
    public static let storageCommitmentPushModel = "1.2.840.10008.1.20.1"
    /// Media Storage Directory Storage: the SOP class of a DICOMDIR (PS3.10 §8.6, PS3.3 §F).
    public static let mediaStorageDirectoryStorage = "1.2.840.10008.1.3.10"
    /// Secondary Capture Image Storage (PS3.4 Annex B).
    public static let secondaryCaptureImageStorage = "1.2.840.10008.5.1.4.1.1.7"

    // The uncompressed transfer syntaxes (PS3.5 §10 and Annex A).

    /// Implicit VR Little Endian, the default transfer syntax (PS3.5 §10.1, §A.1).
    public static let implicitVRLittleEndian = "1.2.840.10008.1.2"
    /// Explicit VR Little Endian (PS3.5 §A.2).
    public static let explicitVRLittleEndian = "1.2.840.10008.1.2.1"
    /// Deflated Explicit VR Little Endian (PS3.5 §A.5).
    public static let deflatedExplicitVRLittleEndian = "1.2.840.10008.1.2.1.99"
    /// Explicit VR Big Endian, retired (PS3.5 §A.3).
    public static let explicitVRBigEndian = "1.2.840.10008.1.2.2"
    /// Encapsulated Uncompressed Explicit VR Little Endian (PS3.5 §A.4.11).
    public static let encapsulatedUncompressedExplicitVRLittleEndian = "1.2.840.10008.1.2.1.98"

    /// The four native (unencapsulated) transfer syntaxes, most preferred first.
    public static let uncompressedTransferSyntaxes: [String] = [
        explicitVRLittleEndian, implicitVRLittleEndian, deflatedExplicitVRLittleEndian,
        explicitVRBigEndian,
    ]
}
