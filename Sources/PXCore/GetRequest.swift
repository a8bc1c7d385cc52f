/// A C-GET request (PS3.4 §C.4.3): what to retrieve on this association and where to store it.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, as for
/// ``MoveRequest``. Received instances go into the ``StorageLayout`` tree under ``root``.
public struct GetRequest: Hashable, Sendable {
    public var model: QueryModel
    /// Needed for the patient-root model.
    public var patientID: String?
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]
    /// The root of the storage tree.
    public var root: String
    public var layout: StorageLayout

    /// - Throws: ``PXError/usage(_:)`` for missing UIDs, instance UIDs without a series, or an empty root.
    public init(
        model: QueryModel = .studyRoot, patientID: String? = nil, studyInstanceUID: String,
        seriesInstanceUID: String? = nil, sopInstanceUIDs: [String] = [], root: String, layout: StorageLayout = StorageLayout()
    ) throws(PXError) {
        guard !studyInstanceUID.isEmpty else { throw .usage("a get needs a StudyInstanceUID") }
        if !sopInstanceUIDs.isEmpty && (seriesInstanceUID ?? "").isEmpty {
            throw .usage("getting instances needs their SeriesInstanceUID")
        }
        if model == .patientRoot && (patientID ?? "").isEmpty {
            throw .usage("the patient-root model needs a PatientID")
        }
        guard !root.isEmpty else { throw .usage("empty storage root") }
        self.model = model
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
        self.root = root
        self.layout = layout
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

/// A finished C-GET: the final status and sub-operation counts (PS3.7 §9.1.3), and what was stored.
public struct GetResult: Hashable, Sendable {
    public var request: GetRequest
    public var status: DIMSEStatus
    /// Remaining sub-operations of the final response (0 when the final response leaves it out, as
    /// PS3.4 §C.4.3.1.4 allows).
    public var remaining: Int?
    public var completed: Int
    public var failed: Int
    public var warning: Int
    /// How many C-GET-RSPs arrived, the final one included.
    public var responses: Int
    /// The instances stored at their final paths; ``ReceivedInstance/bytes`` is the data set's length.
    public var instances: [ReceivedInstance]
    /// Instances that arrived but could not be stored.
    public var storeFailures: [ListenEvent]

    public init(
        request: GetRequest, status: DIMSEStatus, remaining: Int?, completed: Int, failed: Int, warning: Int, responses: Int,
        instances: [ReceivedInstance], storeFailures: [ListenEvent]
    ) {
        self.request = request
        self.status = status
        self.remaining = remaining
        self.completed = completed
        self.failed = failed
        self.warning = warning
        self.responses = responses
        self.instances = instances
        self.storeFailures = storeFailures
    }
}
