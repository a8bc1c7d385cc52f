import DICOMData

extension PXOutput {
    /// What a retrieve asked for, as its output names it: a whole patient (PS3.4 §C.6.1.1.2) by its PatientID
    /// (it has no StudyInstanceUID), else the StudyInstanceUID; the series and the instances when given.
    struct RetrieveKeys {
        var patientID: String?
        var studyInstanceUID: String?
        var seriesInstanceUID: String?
        var sopInstanceUIDs: [String]?

        init(
            level: QueryLevel, patientID: String?, studyInstanceUID: String, seriesInstanceUID: String?,
            sopInstanceUIDs: [String]
        ) {
            if level == .patient {
                self.patientID = patientID ?? ""
            } else {
                self.studyInstanceUID = studyInstanceUID
            }
            self.seriesInstanceUID = seriesInstanceUID
            self.sopInstanceUIDs = sopInstanceUIDs.isEmpty ? nil : sopInstanceUIDs
        }
    }

    /// A move's data: `{"destination", "level", "model", "PatientID"|"StudyInstanceUID", "SeriesInstanceUID"?,
    /// "SOPInstanceUIDs"?, "dimseStatus", "completed", "failed", "warning", "responses",
    /// "failedSOPInstanceUIDs"?}`, the optional members only when there is something to say.
    public struct MoveOutput: Encodable {
        public var destination: String
        public var level: String
        public var model: String
        public var patientID: String?
        public var studyInstanceUID: String?
        public var seriesInstanceUID: String?
        public var sopInstanceUIDs: [String]?
        public var dimseStatus: StatusOutput
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var responses: Int
        /// PS3.4 §C.4.2.1.3.2: the instances the peer could not send, when it names them.
        public var failedSOPInstanceUIDs: [String]?

        enum CodingKeys: String, CodingKey {
            case destination, level, model
            case patientID = "PatientID"
            case studyInstanceUID = "StudyInstanceUID"
            case seriesInstanceUID = "SeriesInstanceUID"
            case sopInstanceUIDs = "SOPInstanceUIDs"
            case dimseStatus, completed, failed, warning, responses, failedSOPInstanceUIDs
        }

        public init(_ result: MoveResult) {
            let request = result.request
            let keys = RetrieveKeys(
                level: request.level, patientID: request.patientID, studyInstanceUID: request.studyInstanceUID,
                seriesInstanceUID: request.seriesInstanceUID, sopInstanceUIDs: request.sopInstanceUIDs)
            destination = request.destination
            level = request.level.dicomValue
            model = request.model.rawValue
            patientID = keys.patientID
            studyInstanceUID = keys.studyInstanceUID
            seriesInstanceUID = keys.seriesInstanceUID
            sopInstanceUIDs = keys.sopInstanceUIDs
            dimseStatus = StatusOutput(result.status)
            completed = result.completed
            failed = result.failed
            warning = result.warning
            responses = result.responses
            failedSOPInstanceUIDs = result.failedSOPInstanceUIDs.isEmpty ? nil : result.failedSOPInstanceUIDs
        }
    }

    /// A C-MOVE progress line for stderr or NDJSON: `{"remaining", "completed", "failed", "warning",
    /// "dimseStatus"}`, `remaining` `null` when the response leaves it out.
    public struct MoveProgressOutput: Encodable {
        public var remaining: Nullable<Int>
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var dimseStatus: StatusOutput

        public init(_ progress: MoveProgress) {
            remaining = Nullable(progress.remaining)
            completed = progress.completed
            failed = progress.failed
            warning = progress.warning
            dimseStatus = StatusOutput(progress.status)
        }
    }

    /// One instance a C-GET stored: `{"path", "SOPClassUID", "SOPInstanceUID", "StudyInstanceUID",
    /// "SeriesInstanceUID", "bytes", "transferSyntaxUID"}`.
    public struct StoredInstanceOutput: Encodable {
        public var path: String
        public var sopClassUID: String
        public var sopInstanceUID: String
        public var studyInstanceUID: String
        public var seriesInstanceUID: String
        public var bytes: Int
        public var transferSyntaxUID: String

        enum CodingKeys: String, CodingKey {
            case path
            case sopClassUID = "SOPClassUID"
            case sopInstanceUID = "SOPInstanceUID"
            case studyInstanceUID = "StudyInstanceUID"
            case seriesInstanceUID = "SeriesInstanceUID"
            case bytes, transferSyntaxUID
        }

        public init(_ instance: ReceivedInstance) {
            path = instance.path
            sopClassUID = instance.sopClassUID
            sopInstanceUID = instance.sopInstanceUID
            studyInstanceUID = instance.studyInstanceUID
            seriesInstanceUID = instance.seriesInstanceUID
            bytes = instance.bytes
            transferSyntaxUID = instance.transferSyntaxUID
        }
    }

    /// One C-GET's data: the request, the final status and counts, and the stored instances sorted by path
    /// (arrival order differs between backends; the set does not): `{"level", "model",
    /// "PatientID"|"StudyInstanceUID", "SeriesInstanceUID"?, "SOPInstanceUIDs"?, "dimseStatus", "remaining",
    /// "completed", "failed", "warning", "responses", "instances", "storeFailures", "failedSOPInstanceUIDs"?}`.
    public struct GetOutput: Encodable {
        public var level: String
        public var model: String
        public var patientID: String?
        public var studyInstanceUID: String?
        public var seriesInstanceUID: String?
        public var sopInstanceUIDs: [String]?
        public var dimseStatus: StatusOutput
        public var remaining: Nullable<Int>
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var responses: Int
        public var instances: [StoredInstanceOutput]
        public var storeFailures: [ListenEventOutput]
        /// PS3.4 §C.4.3.1.3.2: the instances the peer could not send, when it names them.
        public var failedSOPInstanceUIDs: [String]?

        enum CodingKeys: String, CodingKey {
            case level, model
            case patientID = "PatientID"
            case studyInstanceUID = "StudyInstanceUID"
            case seriesInstanceUID = "SeriesInstanceUID"
            case sopInstanceUIDs = "SOPInstanceUIDs"
            case dimseStatus, remaining, completed, failed, warning, responses, instances, storeFailures
            case failedSOPInstanceUIDs
        }

        public init(_ result: GetResult) {
            let request = result.request
            let keys = RetrieveKeys(
                level: request.level, patientID: request.patientID, studyInstanceUID: request.studyInstanceUID,
                seriesInstanceUID: request.seriesInstanceUID, sopInstanceUIDs: request.sopInstanceUIDs)
            level = request.level.dicomValue
            model = request.model.rawValue
            patientID = keys.patientID
            studyInstanceUID = keys.studyInstanceUID
            seriesInstanceUID = keys.seriesInstanceUID
            sopInstanceUIDs = keys.sopInstanceUIDs
            dimseStatus = StatusOutput(result.status)
            remaining = Nullable(result.remaining)
            completed = result.completed
            failed = result.failed
            warning = result.warning
            responses = result.responses
            instances = result.instances.sorted { $0.path < $1.path }.map(StoredInstanceOutput.init)
            storeFailures = result.storeFailures.map(ListenEventOutput.init)
            failedSOPInstanceUIDs = result.failedSOPInstanceUIDs.isEmpty ? nil : result.failedSOPInstanceUIDs
        }
    }

    /// px-move's data: each C-MOVE and the sub-operation totals, `{"moves", "completed", "failed", "warning"}`.
    public struct MoveSummaryOutput: Encodable {
        public var moves: [MoveOutput]
        public var completed: Int
        public var failed: Int
        public var warning: Int

        public init(_ results: [MoveResult]) {
            moves = results.map(MoveOutput.init)
            completed = results.reduce(0) { $0 + $1.completed }
            failed = results.reduce(0) { $0 + $1.failed }
            warning = results.reduce(0) { $0 + $1.warning }
        }
    }

    /// px-get's data: each C-GET with its instances, and the totals, `{"gets", "completed", "failed",
    /// "warning", "instances"}`.
    public struct GetSummaryOutput: Encodable {
        public var gets: [GetOutput]
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var instances: Int

        public init(_ results: [GetResult]) {
            gets = results.map(GetOutput.init)
            completed = results.reduce(0) { $0 + $1.completed }
            failed = results.reduce(0) { $0 + $1.failed }
            warning = results.reduce(0) { $0 + $1.warning }
            instances = results.reduce(0) { $0 + $1.instances.count }
        }
    }

    /// A move's data (``MoveOutput``).
    public static func json(_ result: MoveResult) -> JSONValue { JSONValueEncoder.encode(MoveOutput(result)) }

    /// A progress line for stderr or NDJSON (``MoveProgressOutput``).
    public static func json(_ progress: MoveProgress) -> JSONValue {
        JSONValueEncoder.encode(MoveProgressOutput(progress))
    }

    /// One C-GET's data (``GetOutput``).
    public static func json(_ result: GetResult) -> JSONValue { JSONValueEncoder.encode(GetOutput(result)) }
}
