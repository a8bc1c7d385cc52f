import DICOMData
import Logging

/// A peer px speaks to, bound to where it talks: a DIMSE node reached with a backend (``DIMSEPeer``: a
/// ``DICOMBackend`` and a ``Connection``) or a DICOMweb service (PS3.18, its base URL and credentials).
///
/// What a peer can do is said by the capability protocols it conforms to (``Verifying``, ``Querying``,
/// ``Retrieving``, ``Moving``, ``Storing``): a DIMSE peer has them all, a DICOMweb service only those its
/// transactions give (no ``Moving``). Their methods take no connection: the peer already knows its address,
/// timeouts and credentials, so a command asks for the capability it needs and calls it the same way whatever
/// the protocol, and asking a peer for what it cannot do is decided by the types, never by the backend's name.
///
/// Every peer returns the same typed results and throws only ``PXError`` (typed throws: an error
/// from below, a task group or a subprocess, is mapped at the backend's edge with
/// ``PXError/catching(_:)``), so the JSON rendered from them (``PXOutput``) is identical whichever
/// backend ran.
public protocol PeerBackend: Sendable {
    /// `dcmtk`, `native` or `dicomweb`: what the envelope's `backend` reports.
    var name: String { get }
}

/// A peer that can check that it answers.
public protocol Verifying: PeerBackend {
    /// Verifies the peer the way its protocol can: C-ECHO for a DIMSE node (``DICOMBackend/echo(connection:logger:)``),
    /// a QIDO-RS search for a DICOMweb service (``WebVerification``).
    /// - Throws: ``PXError``.
    func verify(logger: Logger) async throws(PXError) -> Verification
}

/// A peer that can be searched: C-FIND (PS3.4 §C.4.1) or QIDO-RS (PS3.18 §10.6).
public protocol Querying: PeerBackend {
    /// The transaction a search is, as errors name it: `C-FIND` or `QIDO-RS`.
    var queryOperation: String { get }

    /// Runs one query, calling `onResponse` for each match (a pending response) as it arrives.
    ///
    /// A failure final status is returned in ``FindResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func find(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult

    /// Runs `body` with a peer for many queries in a row (a cohort: px-find `--queries`), used one query at a
    /// time. A DIMSE node on the native backend gives one association all of them share (PS3.7 §9.1.2: a
    /// C-FIND is one request and its responses, so the next may follow on the same association); by default
    /// `body` gets this peer, and each query is an association (findscu) or an HTTP request (QIDO-RS) of its own.
    /// Results and errors are ``find(_:logger:onResponse:)``'s.
    /// - Throws: ``PXError``: what `body` throws, or the failure to open the shared association.
    func withQuerySession<T>(
        logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T
}

extension Querying {
    /// Every query on its own: `body` gets this peer.
    public func withQuerySession<T>(
        logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await body(self)
    }
}

/// A peer instances can be retrieved from into a ``StorageLayout`` tree: C-GET (PS3.4 §C.4.3) or WADO-RS
/// (PS3.18 §10.4).
public protocol Retrieving: PeerBackend {
    /// The transaction a retrieval is, as results and errors name it: `C-GET` or `WADO-RS`.
    var retrieveOperation: String { get }

    /// Retrieves one request: for C-GET the matches arrive as C-STORE sub-operations on the same
    /// association (the requestor takes the SCP role, PS3.7 §D.3.3.4). A failure final status is returned in
    /// ``GetResult/status``.
    /// - Throws: ``PXError`` for association and transport failures.
    func get(
        _ request: GetRequest, logger: Logger, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult

    /// Whether a patient can be retrieved whole (a PATIENT-level C-MOVE or C-GET in the Patient Root model,
    /// PS3.4 §C.6.1); `false` when only studies, series and instances can (WADO-RS, PS3.18 §10.4.1.1), so a
    /// patient is retrieved study by study. `true` by default.
    var retrievesWholePatients: Bool { get }

    /// How several requests are retrieved: one after the other in a ``RetrieveSession`` (DIMSE) or side by
    /// side (WADO-RS).
    var retrieval: Retrieval { get }
}

/// How a ``Retrieving`` peer retrieves several requests.
public enum Retrieval: Sendable {
    /// One after the other in a ``RetrieveSession`` (one association where the backend can).
    case inSessions(DIMSEPeer)
    /// Side by side, ``ParallelRetrieving/parallel`` at once.
    case parallel(any ParallelRetrieving)
}

/// A peer that can send instances to a third AE title: C-MOVE (PS3.4 §C.4.2). DICOMweb has no such
/// transaction (PS3.18).
public protocol Moving: PeerBackend {
    /// Runs one C-MOVE, calling `onProgress` for each response.
    ///
    /// A failure final status is returned in ``MoveResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func move(
        _ request: MoveRequest, logger: Logger, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult
}

/// A peer files can be sent to: C-STORE (PS3.4 Annex B) or STOW-RS (PS3.18 §10.5).
public protocol Storing: PeerBackend {
    /// Sends the sendable files of `request` (with C-STORE on ONE association that proposes only the contexts
    /// they need); `onFile` sees each file's result as it is known.
    ///
    /// Per-file failures (unreadable input, no accepted context, failure status) are in the result.
    /// - Throws: ``PXError`` when the association (or the first request) cannot be made or is lost.
    func push(
        _ request: PushRequest, logger: Logger, onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult
}

/// A backend that can receive C-STORE requests (PS3.4 Annex B, the SCP role): it has no peer.
public protocol Receiving: PeerBackend {
    /// Receives C-STORE requests into the ``StorageLayout`` tree until the task is cancelled (then it
    /// returns), calling `onEvent` for each ``ListenEvent``.
    /// - Throws: ``PXError`` when the receiver cannot start or dies.
    func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError)
}

/// A DIMSE backend (PS3.7): the DCMTK tools or the native stack. Its operations take the ``Connection`` to
/// the node (a ``DICOMNode``, the calling AE title, timeouts, TLS, user identity); bound to one, as a
/// ``DIMSEPeer``, it is a peer with every capability. It also receives (``Receiving``) and opens retrieve
/// sessions.
public protocol DICOMBackend: Receiving {
    /// Verifies the node with C-ECHO (PS3.4 Annex A); ``DIMSEPeer/verify(logger:)`` calls it.
    /// - Throws: ``PXError``.
    func echo(connection: Connection, logger: Logger) async throws(PXError) -> EchoResult

    /// One C-FIND (PS3.4 §C.4.1), calling `onResponse` for each pending response. A failure final status is
    /// returned in ``FindResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult

    /// One C-GET (PS3.4 §C.4.3): the matches arrive as C-STORE sub-operations on the same association (the
    /// requestor takes the SCP role, PS3.7 §D.3.3.4). A failure final status is returned in
    /// ``GetResult/status``.
    /// - Throws: ``PXError`` for association and transport failures.
    func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult

    /// One C-MOVE (PS3.4 §C.4.2), calling `onProgress` for each response. A failure final status is returned
    /// in ``MoveResult/status``, not thrown.
    /// - Throws: ``PXError`` for association and transport failures.
    func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult

    /// C-STORE (PS3.4 Annex B) of the sendable files of `request` on ONE association that proposes only the
    /// contexts they need; `onFile` sees each file's result as it is known. Per-file failures are in the result.
    /// - Throws: ``PXError`` when the association (or the first request) cannot be made or is lost.
    func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult

    /// Runs `body` with a ``RetrieveSession`` on `connection`: its C-MOVEs and C-GETs share one association
    /// where the backend can (the native backend; reopened when the peer ended it between requests), or
    /// each runs on its own (the default, ``OneAssociationPerRequest``). The session is closed (its
    /// association released) when `body` returns or throws.
    /// - Throws: ``PXError``: what `body` throws.
    func withRetrieveSession<T>(
        connection: Connection, logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T

    /// Runs `body` with a peer on `connection` for many C-FINDs in a row: one association they share where the
    /// backend can (the native backend), or each on its own (the default: the ``DIMSEPeer``).
    /// - Throws: ``PXError``: what `body` throws, or the failure to open the shared association.
    func withQuerySession<T>(
        connection: Connection, logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T
}

/// A peer that retrieves many requests side by side, ``parallel`` in flight at once (WADO-RS, PS3.18
/// §10.4: no association to share, so px-get's `--parallel` sets how many requests run together).
public protocol ParallelRetrieving: Retrieving {
    /// How many requests are in flight at once.
    var parallel: Int { get set }

    /// Retrieves `requests` into their ``StorageLayout`` trees, ``parallel`` at once, handing each request's
    /// result to `onResult` (with the request's index) as soon as it is complete and keeping none: memory
    /// holds only the requests in flight, however many there are (issue 34).
    /// - Parameters:
    ///   - onProgress: a request's counts as its parts complete, and its final counts.
    ///   - onResult: each request's result, in the order the requests end.
    /// - Throws: ``PXError``: the first failing request stops the others; those done before it have had
    ///   their results.
    func get(
        _ requests: [GetRequest], logger: Logger, onProgress: @Sendable (GetRequest, MoveProgress) async -> Void,
        onResult: (Int, GetResult) async -> Void
    ) async throws(PXError)
}

extension ParallelRetrieving {
    public var retrieval: Retrieval { .parallel(self) }

    /// ``get(_:logger:onProgress:onResult:)`` with every result kept.
    /// - Returns: one result per request, in the requests' order.
    public func get(
        _ requests: [GetRequest], logger: Logger, onProgress: @Sendable (GetRequest, MoveProgress) async -> Void
    ) async throws(PXError) -> [GetResult] {
        var results: [GetResult?] = Array(repeating: nil, count: requests.count)
        try await get(requests, logger: logger, onProgress: onProgress) { index, result in results[index] = result }
        return results.compactMap { $0 }
    }
}

extension Retrieving {
    public var retrievesWholePatients: Bool { true }

    /// The peer as one that retrieves many requests side by side, `nil` when it retrieves them one after
    /// the other (``retrieval``).
    public var parallelRetrieval: (any ParallelRetrieving)? {
        if case .parallel(let backend) = retrieval { return backend }
        return nil
    }
}

extension DICOMBackend {
    /// One association per request: ``OneAssociationPerRequest``.
    public func withRetrieveSession<T>(
        connection: Connection, logger: Logger, _ body: (any RetrieveSession) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await body(OneAssociationPerRequest(backend: self, connection: connection, logger: logger))
    }

    /// One association per C-FIND: the ``DIMSEPeer``.
    public func withQuerySession<T>(
        connection: Connection, logger: Logger, _ body: (any Querying) async throws(PXError) -> T
    ) async throws(PXError) -> T {
        try await body(DIMSEPeer(backend: self, connection: connection))
    }
}

extension Querying {
    /// pypx 3.x's two-phase query: a STUDY-level search (C-FIND or QIDO-RS), then a SERIES-level one under each
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
        keptIfReturned: [Tag] = [], logger: Logger
    ) async throws(PXError) -> (studies: [StudyWithSeries], status: DIMSEStatus) {
        var out: [StudyWithSeries] = []
        let status = try await forEachStudyWithSeries(
            studyKeys: studyKeys, seriesKeys: seriesKeys, model: model, studyLimit: studyLimit,
            maxResponses: maxResponses, keptIfReturned: keptIfReturned, logger: logger
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
        keptIfReturned: [Tag] = [], logger: Logger,
        _ body: (StudyWithSeries) async throws(PXError) -> Void
    ) async throws(PXError) -> DIMSEStatus {
        let spool = try DataSetSpool()
        var studyRequest = FindRequest(
            level: .study, model: model, identifier: studyKeys, limit: studyLimit, maxResponses: maxResponses,
            keepMatches: false)
        studyRequest.keptIfReturned = keptIfReturned
        let studies = try await find(
            studyRequest, logger: logger,
            onResponse: { response in if let study = response.identifier { spool.append(study) } })
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
                seriesRequest, logger: logger, onResponse: { _ in })
            try await body(StudyWithSeries(study: study, series: series.matches, seriesStatus: series.status))
        }
        return studies.status
    }
}
