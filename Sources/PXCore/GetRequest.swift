import DICOMData
import PXStorage

/// A C-GET request (PS3.4 §C.4.3): what to retrieve on this association and where to store it.
///
/// StudyInstanceUID is always sent with SeriesInstanceUID, and both with SOPInstanceUIDs, as for
/// ``MoveRequest``. Received instances go into the ``StorageLayout`` tree under ``root``.
public struct GetRequest: RetrieveIdentifier, Hashable, Sendable {
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
    /// Told of each instance as it is placed under ``root`` (a zip destination that deflates while the
    /// retrieval runs).
    public var placementObserver: PlacementObserving?

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
}

/// A finished C-GET, or a WADO-RS retrieval shaped as one: the final status and sub-operation counts
/// (PS3.7 §9.1.3), and what was stored.
public struct GetResult: Hashable, Sendable {
    public var request: GetRequest
    /// The transaction that retrieved, as errors name it: `C-GET`, or `WADO-RS` (PS3.18 §10.4).
    public var operation = "C-GET"
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
            return try InstancePlacer(
                root: root, layout: layout, duplicates: .overwrite, fsync: false, observer: placementObserver)
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

/// How many sub-operations of a retrieve failed, each counted once (issue 32): the one definition behind a
/// C-GET's and a C-MOVE's `failed` in px's output, its partial-failure message and px-sync's counts.
///
/// A C-STORE sub-operation px refused (it answered a failure status: 0xA900, 0xC000, 0xA700) is a failed
/// sub-operation in the peer's own count too (PS3.4 §C.4.3.3.1: the C-GET SCP counts each sub-operation by
/// the status it was answered), so adding px's refusals to the peer's count would count it twice. Some peers
/// count none of them, or name the failed instances without a count: the most any of the three says is the
/// number. An instance px lost after it was answered with success (getscu answers before px places the file)
/// or that arrived without any C-STORE (a WADO-RS part) is in no peer count, so it is added.
public enum FailedSubOperations {
    /// - Parameters:
    ///   - peerFailed: the final response's Number of Failed Sub-operations (0000,1022).
    ///   - peerNamed: how many instances its Failed SOP Instance UID List (0008,0058) names.
    ///   - refused: C-STOREs px answered with a failure status.
    ///   - lost: instances px could not store although the peer was told they were stored, or was told nothing.
    public static func count(peerFailed: Int, peerNamed: Int, refused: Int = 0, lost: Int = 0) -> Int {
        max(peerFailed, peerNamed, refused) + lost
    }
}

extension GetResult {
    /// The failed sub-operations, each once (``FailedSubOperations/count(peerFailed:peerNamed:refused:lost:)``).
    public var failedCount: Int {
        let refused = storeFailures.count(where: \.wasAnsweredWithFailure)
        return FailedSubOperations.count(
            peerFailed: failed, peerNamed: failedSOPInstanceUIDs.count, refused: refused,
            lost: storeFailures.count - refused)
    }

    /// The run's sub-operations all succeeded: none failed or ended with a warning (the peer's counts), and
    /// every instance that arrived was stored (PS3.4 §C.4.3.1.5: 0xB000 means some did not).
    public var isComplete: Bool { failedCount == 0 && warning == 0 }

    /// ``PXError/subOperationsFailed(operation:failed:warning:total:failedSOPInstanceUIDs:limitation:)`` for a
    /// run that is not ``isComplete``: the instances the peer named and those px refused, with px's reasons.
    public var subOperationFailure: PXError? {
        guard !isComplete else { return nil }
        let failed = failedCount
        var refusals: [String] = []
        for case .storeFailed(let path, let uid, let error, let status) in storeFailures {
            let what = uid ?? path ?? "an instance"
            refusals.append("\(what) (\(status.map { "\($0.hexCode) \($0.name): " } ?? "")\(error.message))")
        }
        return .subOperationsFailed(
            operation: operation, failed: failed, warning: warning, total: completed + failed + warning,
            failedSOPInstanceUIDs: failedSOPInstanceUIDs, limitation: limitation, notStored: refusals)
    }
}

extension ListenEvent {
    /// A ``storeFailed(path:sopInstanceUID:error:status:)`` px answered with a failure status: the sender
    /// knows it failed (and counts it, when it counts).
    public var wasAnsweredWithFailure: Bool {
        guard case .storeFailed(_, _, _, let status?) = self else { return false }
        return status.isFailure
    }
}

extension MoveResult {
    /// The failed sub-operations, each once (``FailedSubOperations/count(peerFailed:peerNamed:refused:lost:)``;
    /// the instances went to a third node, which px does not hear from).
    public var failedCount: Int {
        FailedSubOperations.count(peerFailed: failed, peerNamed: failedSOPInstanceUIDs.count)
    }

    /// The run's sub-operations all succeeded: none failed or ended with a warning (PS3.4 §C.4.2.1.5).
    public var isComplete: Bool { failedCount == 0 && warning == 0 }

    /// ``PXError/subOperationsFailed(operation:failed:warning:total:failedSOPInstanceUIDs:limitation:)`` for a
    /// run that is not ``isComplete``.
    public var subOperationFailure: PXError? {
        guard !isComplete else { return nil }
        let failed = failedCount
        return .subOperationsFailed(
            operation: "C-MOVE", failed: failed, warning: warning, total: completed + failed + warning,
            failedSOPInstanceUIDs: failedSOPInstanceUIDs)
    }
}
