/// A C-MOVE request (PS3.4 C.4.2): what to move and where.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, because
/// some archives require the higher-level keys even in study root.
public struct MoveRequest: Hashable, Sendable {
    public var model: QueryModel
    /// The move destination AE title, (0000,0600) MoveDestination.
    public var destination: String
    /// Needed for the patient-root model.
    public var patientID: String?
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]

    /// - Throws: ``PXError/usage(_:)`` for a bad destination, missing UIDs or instance UIDs without a series.
    public init(
        model: QueryModel = .studyRoot, destination: String, patientID: String? = nil, studyInstanceUID: String,
        seriesInstanceUID: String? = nil, sopInstanceUIDs: [String] = []
    ) throws(PXError) {
        try AETitle.validate(destination, role: "move destination")
        guard !studyInstanceUID.isEmpty else { throw .usage("a move needs a StudyInstanceUID") }
        if !sopInstanceUIDs.isEmpty && (seriesInstanceUID ?? "").isEmpty {
            throw .usage("moving instances needs their SeriesInstanceUID")
        }
        if model == .patientRoot && (patientID ?? "").isEmpty {
            throw .usage("the patient-root model needs a PatientID")
        }
        self.model = model
        self.destination = destination
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
    }

    /// The level implied by the deepest UID given.
    public var level: QueryLevel {
        if !sopInstanceUIDs.isEmpty { return .image }
        if seriesInstanceUID != nil { return .series }
        return .study
    }

    /// The identifier keys in order, as (keyword, value) pairs, QueryRetrieveLevel first.
    public var keys: [(keyword: String, value: String)] {
        var keys: [(String, String)] = [("QueryRetrieveLevel", level.dicomValue)]
        if model == .patientRoot, let patientID { keys.append(("PatientID", patientID)) }
        keys.append(("StudyInstanceUID", studyInstanceUID))
        if let seriesInstanceUID { keys.append(("SeriesInstanceUID", seriesInstanceUID)) }
        if !sopInstanceUIDs.isEmpty { keys.append(("SOPInstanceUID", sopInstanceUIDs.joined(separator: "\\"))) }
        return keys
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

    public init(request: MoveRequest, status: DIMSEStatus, completed: Int, failed: Int, warning: Int, responses: Int) {
        self.request = request
        self.status = status
        self.completed = completed
        self.failed = failed
        self.warning = warning
        self.responses = responses
    }
}
