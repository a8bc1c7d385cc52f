/// The Query/Retrieve level, (0008,0052) QueryRetrieveLevel (PS3.4 C.6).
public enum QueryLevel: String, Hashable, Sendable, CaseIterable {
    case patient, study, series, image

    /// The attribute value: `PATIENT`, `STUDY`, `SERIES`, `IMAGE`.
    public var dicomValue: String { rawValue.uppercased() }
}

/// The Query/Retrieve information model (PS3.4 C.6.1, C.6.2).
public enum QueryModel: String, Hashable, Sendable, CaseIterable {
    case patientRoot = "patient"
    case studyRoot = "study"
}
