import DICOMData
import Logging

/// A way to speak DICOM: the DCMTK tools or the native stack.
///
/// Every backend returns the same typed results and throws only ``PXError`` (typed throws: an error
/// from below, a task group or a subprocess, is mapped at the backend's edge with
/// ``PXError/catching(_:)``), so the JSON rendered from them (``PXOutput``) is identical whichever
/// backend ran.
public protocol DICOMBackend: Sendable {
    /// `dcmtk` or `native`.
    var name: String { get }

    /// Verifies the peer with C-ECHO (PS3.4 Annex A).
    /// - Throws: ``PXError``.
    func echo(connection: Connection, logger: Logger) async throws(PXError) -> EchoResult

    /// Verifies the peer the way its protocol can: C-ECHO for a DIMSE node (the default,
    /// ``echo(connection:logger:)``), a QIDO-RS search for a DICOMweb service (``WebVerification``).
    /// - Throws: ``PXError``.
    func verify(connection: Connection, logger: Logger) async throws(PXError) -> Verification

    /// Whether a patient can be retrieved whole (a PATIENT-level C-MOVE or C-GET in the Patient Root model,
    /// PS3.4 §C.6.1); `false` when only studies, series and instances can (WADO-RS, PS3.18 §10.4.1.1), so a
    /// patient is retrieved study by study. `true` by default.
    var retrievesWholePatients: Bool { get }

    /// The backend as one that retrieves many requests side by side (``ParallelRetrieving``), `nil` when it
    /// retrieves one request after the other (the default).
    var parallelRetrieval: (any ParallelRetrieving)? { get }

    /// Runs one C-FIND (PS3.4 C.4.1), calling `onResponse` for each pending response as it arrives.
    ///
    /// A failure final status is returned in ``FindResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult

    /// Runs one C-MOVE (PS3.4 C.4.2), calling `onProgress` for each response.
    ///
    /// A failure final status is returned in ``MoveResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult

    /// Sends the sendable files of `request` with C-STORE (PS3.4 Annex B) on ONE association that
    /// proposes only the contexts they need; `onFile` sees each file's result as it is known.
    ///
    /// Per-file failures (unreadable input, no accepted context, failure status) are in the result.
    /// - Throws: ``PXError`` when the association cannot be opened or is lost.
    func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult

    /// Runs one C-GET (PS3.4 C.4.3): the matches arrive as C-STORE sub-operations on the same
    /// association (the requestor takes the SCP role, PS3.7 §D.3.3.4) and are stored in the
    /// ``StorageLayout`` tree. A failure final status is returned in ``GetResult/status``.
    /// - Throws: ``PXError`` for association and transport failures.
    func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult

    /// Runs `body` with a ``RetrieveSession`` on `connection`: its C-MOVEs and C-GETs share one association
    /// where the backend can (the native backend; reopened when the peer ended it between requests), or
    /// each runs on its own (the default, ``OneAssociationPerRequest``). The session is closed (its
    /// association released) when `body` returns or throws.
    /// - Throws: ``PXError``: what `body` throws.
    func withRetrieveSession<T>(
        connection: Connection, logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T

    /// Receives C-STORE requests into the ``StorageLayout`` tree until the task is cancelled (then it
    /// returns), calling `onEvent` for each ``ListenEvent``.
    /// - Throws: ``PXError`` when the receiver cannot start or dies.
    func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError)
}

/// A backend that retrieves many requests side by side, ``parallel`` in flight at once (WADO-RS, PS3.18
/// §10.4: no association to share, so px-get's `--parallel` sets how many requests run together).
public protocol ParallelRetrieving: DICOMBackend {
    /// How many requests are in flight at once.
    var parallel: Int { get set }

    /// Retrieves `requests` into their ``StorageLayout`` trees, ``parallel`` at once.
    /// - Parameter onProgress: a request's counts as its parts complete, and its final counts.
    /// - Returns: one result per request, in the requests' order.
    /// - Throws: ``PXError``: the first failing request stops the others.
    func get(
        _ requests: [GetRequest], connection: Connection, logger: Logger,
        onProgress: @Sendable (GetRequest, MoveProgress) async -> Void
    ) async throws(PXError) -> [GetResult]
}

extension ParallelRetrieving {
    public var parallelRetrieval: (any ParallelRetrieving)? { self }
}

extension DICOMBackend {
    /// C-ECHO (PS3.7 §9.1.5).
    public func verify(connection: Connection, logger: Logger) async throws(PXError) -> Verification {
        .echo(try await echo(connection: connection, logger: logger))
    }

    public var retrievesWholePatients: Bool { true }

    public var parallelRetrieval: (any ParallelRetrieving)? { nil }

    /// One association per request: ``OneAssociationPerRequest``.
    public func withRetrieveSession<T>(
        connection: Connection, logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await body(OneAssociationPerRequest(backend: self, connection: connection, logger: logger))
    }

    /// pypx 3.x's two-phase query: a STUDY-level C-FIND, then a SERIES-level C-FIND under each
    /// study (some archives do not match patient keys at series level).
    ///
    /// - Parameters:
    ///   - studyKeys: the study-level identifier (matching and return keys).
    ///   - seriesKeys: the series-level identifier; StudyInstanceUID is set per study.
    ///   - studyLimit: C-CANCEL the study query after this many studies.
    /// - Returns: the studies with their series, and the study-level status. Studies whose
    ///   series query found nothing are kept with an empty list.
    public func findStudiesWithSeries(
        studyKeys: DataSet, seriesKeys: DataSet, model: QueryModel, studyLimit: Int? = nil, maxResponses: Int? = nil,
        keptIfReturned: [Tag] = [], connection: Connection, logger: Logger
    ) async throws(PXError) -> (studies: [StudyWithSeries], status: DIMSEStatus) {
        var out: [StudyWithSeries] = []
        let status = try await forEachStudyWithSeries(
            studyKeys: studyKeys, seriesKeys: seriesKeys, model: model, studyLimit: studyLimit,
            maxResponses: maxResponses, keptIfReturned: keptIfReturned, connection: connection, logger: logger
        ) { study throws(PXError) in out.append(study) }
        return (out, status)
    }

    /// The two-phase query with each study handed to `body` once its series are known, so that a caller
    /// that writes each study out holds one study at a time: the study responses wait in a
    /// ``DataSetSpool`` on disk while the series queries run, whatever number the peer sends (issue 14).
    /// `keptIfReturned`: ``FindRequest/keptIfReturned`` of both queries.
    ///
    /// - Returns: the study-level status (a failure: `body` was never called).
    public func forEachStudyWithSeries(
        studyKeys: DataSet, seriesKeys: DataSet, model: QueryModel, studyLimit: Int? = nil, maxResponses: Int? = nil,
        keptIfReturned: [Tag] = [], connection: Connection, logger: Logger,
        _ body: (StudyWithSeries) async throws(PXError) -> Void
    ) async throws(PXError) -> DIMSEStatus {
        let spool = try DataSetSpool()
        var studyRequest = FindRequest(
            level: .study, model: model, identifier: studyKeys, limit: studyLimit, maxResponses: maxResponses,
            keepMatches: false)
        studyRequest.keptIfReturned = keptIfReturned
        let studies = try await find(
            studyRequest,
            connection: connection,
            logger: logger, onResponse: { response in if let study = response.identifier { spool.append(study) } })
        guard !studies.status.isFailure else { return studies.status }
        try await spool.readEach { study throws(PXError) in
            guard let uid = study.string(.studyInstanceUID), !uid.isEmpty else { return }
            var keys = seriesKeys
            keys.set(.studyInstanceUID, vr: .UI, string: uid)
            if model == .patientRoot, let pid = study.string(.patientID) {
                keys.set(.patientID, vr: .LO, string: pid)
            }
            var seriesRequest = FindRequest(level: .series, model: model, identifier: keys, maxResponses: maxResponses)
            seriesRequest.keptIfReturned = keptIfReturned
            let series = try await find(
                seriesRequest,
                connection: connection,
                logger: logger, onResponse: { _ in })
            try await body(StudyWithSeries(study: study, series: series.matches, seriesStatus: series.status))
        }
        return studies.status
    }
}
