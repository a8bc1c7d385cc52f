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
    /// "failedSOPInstanceUIDs"?}`, the optional members only when there is something to say. `failed` is
    /// ``MoveResult/failedCount``.
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
            failed = result.failedCount
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
    /// `failed` is ``GetResult/failedCount`` (an instance px refused is counted once, not again as its store
    /// failure); each store failure names the instance, the status px answered and why.
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
            failed = result.failedCount
            warning = result.warning
            responses = result.responses
            instances = result.instances.sorted { $0.path < $1.path }.map(StoredInstanceOutput.init)
            storeFailures = result.storeFailures.map(ListenEventOutput.init)
            failedSOPInstanceUIDs = result.failedSOPInstanceUIDs.isEmpty ? nil : result.failedSOPInstanceUIDs
        }
    }

    /// One target of px-move or px-get (what was asked: a patient, study, series or instances) and what
    /// became of it: `{"PatientID"?, "StudyInstanceUID"?, "SeriesInstanceUID"?, "SOPInstanceUIDs"?, "status",
    /// "completed", "failed", "warning", "error"}`. `status` is `success`, `failed` (a failure status,
    /// failed or warning sub-operations, or an error: `error` says which) or `notTried` (the peer could not be
    /// reached for an earlier target; `error` is that target's). Every target is listed, so a consumer sees
    /// each one's result however the run ended.
    public struct RetrieveTargetOutput: Encodable {
        public var patientID: String?
        public var studyInstanceUID: String?
        public var seriesInstanceUID: String?
        public var sopInstanceUIDs: [String]?
        public var status: String
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var error: Nullable<ErrorOutput>

        enum CodingKeys: String, CodingKey {
            case patientID = "PatientID"
            case studyInstanceUID = "StudyInstanceUID"
            case seriesInstanceUID = "SeriesInstanceUID"
            case sopInstanceUIDs = "SOPInstanceUIDs"
            case status, completed, failed, warning, error
        }

        /// A target that was tried: `completed`, `failed` (``GetResult/failedCount``,
        /// ``MoveResult/failedCount``) and `warning` summed over its retrieves, `error` its failure.
        public init(
            patientID: String?, studyInstanceUID: String, seriesInstanceUID: String?, sopInstanceUIDs: [String],
            completed: Int, failed: Int, warning: Int, error: PXError?, tried: Bool = true
        ) {
            self.patientID = patientID
            self.studyInstanceUID = studyInstanceUID.isEmpty ? nil : studyInstanceUID
            self.seriesInstanceUID = seriesInstanceUID
            self.sopInstanceUIDs = sopInstanceUIDs.isEmpty ? nil : sopInstanceUIDs
            status = !tried ? "notTried" : error == nil ? "success" : "failed"
            self.completed = completed
            self.failed = failed
            self.warning = warning
            self.error = Nullable(error.map(ErrorOutput.init))
        }
    }

    /// px-move's data: each C-MOVE, each target's outcome and the sub-operation totals, `{"moves", "targets",
    /// "completed", "failed", "warning"}`.
    public struct MoveSummaryOutput: Encodable {
        public var moves: [MoveOutput]
        public var targets: [RetrieveTargetOutput]
        public var completed: Int
        public var failed: Int
        public var warning: Int

        public init(_ results: [MoveResult], targets: [RetrieveTargetOutput] = []) {
            moves = results.map(MoveOutput.init)
            self.targets = targets
            completed = results.reduce(0) { $0 + $1.completed }
            failed = results.reduce(0) { $0 + $1.failedCount }
            warning = results.reduce(0) { $0 + $1.warning }
        }
    }

    /// px-get's data: each C-GET with its instances, each target's outcome, and the totals, `{"gets",
    /// "targets", "completed", "failed", "warning", "instances"}`.
    public struct GetSummaryOutput: Encodable {
        public var gets: [GetOutput]
        public var targets: [RetrieveTargetOutput]
        public var completed: Int
        public var failed: Int
        public var warning: Int
        public var instances: Int

        public init(_ results: [GetResult], targets: [RetrieveTargetOutput] = []) {
            self.init(
                gets: results.map(GetOutput.init), targets: targets, completed: results.reduce(0) { $0 + $1.completed },
                failed: results.reduce(0) { $0 + $1.failedCount }, warning: results.reduce(0) { $0 + $1.warning },
                instances: results.reduce(0) { $0 + $1.instances.count })
        }

        /// The totals counted as the retrieves were done, `gets` those kept (none when they went to a
        /// ``JSONArraySpool`` for `gets`, which takes this member's place in the envelope).
        public init(
            gets: [GetOutput], targets: [RetrieveTargetOutput], completed: Int, failed: Int, warning: Int,
            instances: Int
        ) {
            self.gets = gets
            self.targets = targets
            self.completed = completed
            self.failed = failed
            self.warning = warning
            self.instances = instances
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
