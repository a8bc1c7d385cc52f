import DICOMData

/// A C-MOVE request (PS3.4 C.4.2): what to move and where.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, because
/// some archives require the higher-level keys even in study root.
public struct MoveRequest: RetrieveIdentifier, Hashable, Sendable {
    public var model: QueryModel
    /// The move destination AE title, (0000,0600) MoveDestination.
    public var destination: String
    /// Needed for the patient-root model.
    public var patientID: String?
    /// Empty for a whole patient: a PATIENT-level retrieve in the patient-root model (PS3.4 §C.4.2.2.1, §C.6.1.2).
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]

    /// - Throws: ``PXError/usage(_:)`` for a bad destination, missing UIDs or instance UIDs without a series.
    public init(
        model: QueryModel = .studyRoot, destination: String, patientID: String? = nil, studyInstanceUID: String,
        seriesInstanceUID: String? = nil, sopInstanceUIDs: [String] = []
    ) throws(PXError) {
        try AETitle.validate(destination, role: "move destination")
        try RetrieveTarget.validate(
            verb: "move", model: model, patientID: patientID, studyInstanceUID: studyInstanceUID,
            seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
        self.model = model
        self.destination = destination
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
    }
}

/// Sub-operation counts of a C-MOVE-RSP (PS3.7 §9.1.4.1, (0000,1020)–(0000,1023)).
public struct MoveProgress: Hashable, Sendable {
    /// `nil` when the response leaves it out (final responses usually do).
    public var remaining: Int?
    public var completed: Int
    public var failed: Int
    public var warning: Int
    public var status: DIMSEStatus

    public init(remaining: Int?, completed: Int, failed: Int, warning: Int, status: DIMSEStatus) {
        self.remaining = remaining
        self.completed = completed
        self.failed = failed
        self.warning = warning
        self.status = status
    }
}

/// A finished C-MOVE: the final status and sub-operation counts.
public struct MoveResult: Hashable, Sendable {
    public var request: MoveRequest
    public var status: DIMSEStatus
    public var completed: Int
    public var failed: Int
    public var warning: Int
    /// How many C-MOVE-RSPs arrived, the final one included.
    public var responses: Int
    /// The instances the peer says it could not send: the final response's Failed SOP Instance UID List
    /// (0008,0058), PS3.4 §C.4.2.1.3.2; empty when it names none.
    public var failedSOPInstanceUIDs: [String] = []

    public init(request: MoveRequest, status: DIMSEStatus, completed: Int, failed: Int, warning: Int, responses: Int) {
        self.request = request
        self.status = status
        self.completed = completed
        self.failed = failed
        self.warning = warning
        self.responses = responses
    }
}
