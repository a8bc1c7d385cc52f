import DICOMData

/// The Query/Retrieve level, (0008,0052) QueryRetrieveLevel (PS3.4 C.6).
public enum QueryLevel: String, Hashable, Sendable, CaseIterable {
    case patient, study, series, image

    /// The attribute value: `PATIENT`, `STUDY`, `SERIES`, `IMAGE`.
    public var dicomValue: String { rawValue.uppercased() }
}

/// The information model a C-FIND runs on: Patient Root or Study Root Query/Retrieve (PS3.4 C.6.1, C.6.2),
/// or the Modality Worklist (PS3.4 Annex K), which has C-FIND only and no levels.
public enum QueryModel: String, Hashable, Sendable, CaseIterable {
    case patientRoot = "patient"
    case studyRoot = "study"
    /// Modality Worklist Information Model - FIND (PS3.4 §K.6.1): scheduled procedure steps, matched with
    /// the Scheduled Procedure Step Sequence's item (sequence matching, PS3.4 §C.2.2.2.6). No
    /// QueryRetrieveLevel in the identifier, no C-MOVE or C-GET.
    case worklist

    /// The C-FIND SOP class UID (PS3.4 §C.6.1.1, §C.6.2.1, §K.6.1.1).
    public var findSOPClass: String {
        switch self {
        case .patientRoot: WellKnownUID.patientRootQueryRetrieveFind
        case .studyRoot: WellKnownUID.studyRootQueryRetrieveFind
        case .worklist: WellKnownUID.modalityWorklistFind
        }
    }

    /// Whether C-MOVE and C-GET exist on this model (the Query/Retrieve models).
    public var canRetrieve: Bool { self != .worklist }
}
