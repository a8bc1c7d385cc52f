import DICOMData
import PXStorage

/// A C-GET request (PS3.4 §C.4.3): what to retrieve on this association and where to store it.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, as for
/// ``MoveRequest``. Received instances go into the ``StorageLayout`` tree under ``root``.
public struct GetRequest: Hashable, Sendable {
    public var model: QueryModel
    /// Needed for the patient-root model.
    public var patientID: String?
    /// Empty for a whole patient: a PATIENT-level retrieve in the patient-root model (PS3.4 §C.4.2.2.1, §C.6.1.2).
    public var studyInstanceUID: String
    public var seriesInstanceUID: String?
    public var sopInstanceUIDs: [String]
    /// The root of the storage tree.
    public var root: String
    public var layout: StorageLayout
    /// Whether each retrieved instance carries the header parsed on receipt (``ReceivedInstance/header``)
    /// where the backend has one: for a caller that records it (a folder place's index). px-get prints only
    /// paths and UIDs and turns it off, so its result holds no header per instance.
    public var keepsHeaders = true

    /// - Throws: ``PXError/usage(_:)`` for missing UIDs, instance UIDs without a series, or an empty root.
    public init(
        model: QueryModel = .studyRoot, patientID: String? = nil, studyInstanceUID: String,
        seriesInstanceUID: String? = nil, sopInstanceUIDs: [String] = [], root: String,
        layout: StorageLayout = StorageLayout()
    ) throws(PXError) {
        try RetrieveTarget.validate(
            verb: "get", model: model, patientID: patientID, studyInstanceUID: studyInstanceUID,
            seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
        guard !root.isEmpty else { throw .usage("empty storage root") }
        self.model = model
        self.patientID = patientID
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.sopInstanceUIDs = sopInstanceUIDs
        self.root = root
        self.layout = layout
    }

    /// The level implied by the deepest UID given (PATIENT for a whole patient, patient root only).
    public var level: QueryLevel {
        RetrieveTarget.level(
            studyInstanceUID: studyInstanceUID, seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
    }

    /// The identifier keys in order, as (keyword, value) pairs, QueryRetrieveLevel first.
    public var keys: [(keyword: String, value: String)] {
        RetrieveTarget.keys(
            model: model, patientID: patientID, studyInstanceUID: studyInstanceUID,
            seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
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
    /// The instances the peer says it could not send: the final response's Failed SOP Instance UID List
    /// (0008,0058), PS3.4 §C.4.3.1.3.2; empty when it names none.
    public var failedSOPInstanceUIDs: [String] = []
    /// Why sub-operations may have failed, when the backend knows a limit of its own (getscu's proposals).
    public var limitation: String?

    public init(
        request: GetRequest, status: DIMSEStatus, remaining: Int?, completed: Int, failed: Int, warning: Int,
        responses: Int,
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

extension GetRequest {
    /// The placer every retrieval into ``root`` stores through (C-GET on either backend, WADO-RS): the
    /// request's layout, and a file of the same name overwritten, as getscu does.
    /// - Throws: ``PXError`` for a root that cannot be opened as a folder.
    public func placer() throws(PXError) -> InstancePlacer {
        do {
            return try InstancePlacer(root: root, layout: layout, duplicates: .overwrite, fsync: false)
        } catch {
            throw PXError.storage(error)
        }
    }

    /// ``placer()`` and its staging folder (`<root>/.px-incoming`), for a retrieval that writes each
    /// instance there before placing it; the caller removes the folder (rmdir) when done.
    public func placerAndStagingFolder() throws(PXError) -> (placer: InstancePlacer, incoming: String) {
        let placer = try placer()
        do {
            return (placer, try placer.storage.stagingFolder())
        } catch {
            throw PXError.storage(error)
        }
    }
}

extension GetResult {
    /// The run's sub-operations all succeeded: none failed or ended with a warning (the peer's counts), and
    /// every instance that arrived was stored (PS3.4 §C.4.3.1.5: 0xB000 means some did not).
    public var isComplete: Bool {
        failed == 0 && warning == 0 && storeFailures.isEmpty && failedSOPInstanceUIDs.isEmpty
    }

    /// ``PXError/subOperationsFailed(operation:failed:warning:total:failedSOPInstanceUIDs:)`` for a run that is
    /// not ``isComplete``.
    public var subOperationFailure: PXError? {
        guard !isComplete else { return nil }
        let failed = max(self.failed, failedSOPInstanceUIDs.count) + storeFailures.count
        return .subOperationsFailed(
            operation: "C-GET", failed: failed, warning: warning, total: completed + failed + warning,
            failedSOPInstanceUIDs: failedSOPInstanceUIDs, limitation: limitation)
    }
}

extension MoveResult {
    /// The run's sub-operations all succeeded: none failed or ended with a warning (PS3.4 §C.4.2.1.5).
    public var isComplete: Bool { failed == 0 && warning == 0 && failedSOPInstanceUIDs.isEmpty }

    /// ``PXError/subOperationsFailed(operation:failed:warning:total:failedSOPInstanceUIDs:)`` for a run that is
    /// not ``isComplete``.
    public var subOperationFailure: PXError? {
        guard !isComplete else { return nil }
        let failed = max(self.failed, failedSOPInstanceUIDs.count)
        return .subOperationsFailed(
            operation: "C-MOVE", failed: failed, warning: warning, total: completed + failed + warning,
            failedSOPInstanceUIDs: failedSOPInstanceUIDs)
    }
}
