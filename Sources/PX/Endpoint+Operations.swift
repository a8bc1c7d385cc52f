import DICOMData
import DICOMWeb
import Logging
import PXCore
import PXPlaces

/// What a newcomer does with a place (``PX/place(_:config:backend:logger:)``): echo it, query it, retrieve a
/// study from it, store files into it. Each result encodes (``PX/json(_:pretty:)``) to the `data` the matching command
/// prints: px-echo's, px-find's, px-sync's, px-push's.
extension Endpoint {
    /// Is the peer there, and does it accept us: C-ECHO for a node (PS3.7 §9.1.5), a one-study QIDO-RS search
    /// for a DICOMweb service (PS3.18 §10.6). The result encodes to px-echo's `data`.
    /// - Throws: `PXError`: the peer's failure; `PXError.usage(_:)` for a folder or a zip
    ///   folder, which have nothing to answer.
    public func echo() async throws(PXError) -> Verification {
        guard let verifier else {
            throw .usage("\(label) is a \(kind) place: only a node or a DICOMweb service answers an echo")
        }
        return try await verifier.verify()
    }

    /// The matches of one C-FIND (or QIDO-RS search) at `level`, each as it arrives.
    ///
    /// ```swift
    /// for try await study in pacs.find(.study, ["PatientID": "P1"]) {
    ///     print(study.string(.studyInstanceUID) ?? "")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - level: patient, study, series or image (in the Study Root model; patient in the Patient Root one).
    ///   - keys: matching keys by keyword or tag (`"PatientName": "Doe*"`, `"(0010,0020)": "P1"`), several values
    ///     separated by `\`.
    ///   - returning: the return keys; `nil` for px-find's keys at that level.
    /// - Returns: a stream of the matches (shaped as the answer to the query: the keys asked, in tag order); it
    ///   throws `PXError` for an unknown key, a failure, a failure status, or more than
    ///   `FindRequest.defaultMaxResponses` matches. Stopping the loop cancels the query.
    public func find(_ level: QueryLevel, _ keys: [String: String] = [:], returning: [String]? = nil)
        -> AsyncThrowingStream<DataSet, any Error>
    {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    _ = try await query(level, keys, returning: returning, keep: false) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `find(_:_:returning:)` with every match collected: the result encodes to px-find's `data` for
    /// `--level LEVEL` (pypx's entries).
    /// - Throws: `PXError`.
    public func findAll(_ level: QueryLevel, _ keys: [String: String] = [:], returning: [String]? = nil)
        async throws(PXError) -> FindResult
    {
        try await query(level, keys, returning: returning, keep: true) { _ in }
    }

    /// The matches of many queries at `level`, one per row of `rows` (a cohort, as px-find `--queries` runs
    /// it), each with the index of its row, as they arrive. A node on the native backend answers every row on
    /// one association (PS3.7 §9.1.2); otherwise each row is a query of its own.
    ///
    /// ```swift
    /// let rows = accessionNumbers.map { ["AccessionNumber": $0] }
    /// for try await (row, study) in pacs.findEach(.study, rows) {
    ///     print(accessionNumbers[row], study.string(.studyInstanceUID) ?? "")
    /// }
    /// ```
    ///
    /// - Returns: a stream of (row index, match); the first row that fails (an unknown key, a failure status,
    ///   too many matches, the peer's failure) ends it with its `PXError`. Stopping the loop cancels the rest.
    public func findEach(_ level: QueryLevel, _ rows: [[String: String]], returning: [String]? = nil)
        -> AsyncThrowingStream<(row: Int, match: DataSet), any Error>
    {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    let peer = try querying()
                    try await peer.querying.withQuerySession(logger: peer.logger) { session throws(PXError) in
                        for (index, keys) in rows.enumerated() {
                            _ = try await Self.query(
                                session, logger: peer.logger, level, keys, returning: returning, keep: false
                            ) { continuation.yield((index, $0)) }
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// One query through the place's querying backend; a failure status or too many matches is thrown.
    func query(
        _ level: QueryLevel, _ keys: [String: String], returning: [String]?, keep: Bool,
        onMatch: @escaping @Sendable (DataSet) -> Void
    ) async throws(PXError) -> FindResult {
        let peer = try querying()
        return try await Self.query(
            peer.querying, logger: peer.logger, level, keys, returning: returning, keep: keep, onMatch: onMatch)
    }

    /// One query on `querying`; a failure status or too many matches is thrown.
    static func query(
        _ querying: any Querying, logger: Logger, _ level: QueryLevel, _ keys: [String: String], returning: [String]?,
        keep: Bool, onMatch: @escaping @Sendable (DataSet) -> Void
    ) async throws(PXError) -> FindResult {
        let identifier = try QueryKey.identifier(
            returning: returning ?? QueryDefaults.returnKeys(for: level), matching: try QueryKey.matching(keys))
        let limit = FindRequest.defaultMaxResponses
        let request = FindRequest(level: level, identifier: identifier, maxResponses: limit, keepMatches: keep)
        let result = try await querying.find(request, logger: logger) { response throws(PXError) in
            if let match = response.identifier { onMatch(match) }
        }
        if result.status.isFailure {
            throw .dimseFailure(result.status, operation: "\(querying.queryOperation) (\(level.dicomValue))")
        }
        if result.count > limit { throw .tooManyResponses(limit: limit) }
        return result
    }

    /// The peer that queries the place (a node bound to its connection, or the DICOMweb service).
    func querying() throws(PXError) -> (querying: any Querying, logger: Logger) {
        switch self {
        case .node(let node): return (node.peer, node.logger)
        case .web(let web): return (web.service, web.logger)
        case .folder, .zip:
            throw .usage("\(label) is a \(kind) place: query a node or a DICOMweb service (px-ls lists a folder)")
        }
    }

    /// Makes sure `destination` holds the study: what it lacks is retrieved the best way the pair allows
    /// (C-GET for a node, C-MOVE to a node destination, WADO-RS for a DICOMweb service, files copied from a
    /// folder or a zip folder) and every file arrives as the source stores it: nothing is transcoded. What
    /// the destination holds already is not transferred again.
    ///
    /// ```swift
    /// let got = try await pacs.retrieve(study: uid, into: try await PX.place("/data/in"))
    /// ```
    ///
    /// - Parameters:
    ///   - studyInstanceUID: the study.
    ///   - destination: where it goes: a folder or a zip folder (``PX/destination(_:config:backend:logger:)``),
    ///     a node, a DICOMweb service.
    ///   - logger: the run's; ``PX/logger`` when `nil`.
    /// - Returns: the run's summary, which encodes to px-sync's `data`.
    /// - Throws: `PXError`: `PXError.usage(_:)` when the source has no such study, the study's
    ///   failure when it failed (`SyncSummary.failure`), or what stopped the run.
    @discardableResult
    public func retrieve(study studyInstanceUID: String, into destination: Endpoint, logger: Logger? = nil)
        async throws(PXError) -> SyncSummary
    {
        let engine = SyncEngine(sources: [self], destination: destination, logger: logger ?? PX.logger)
        let summary = try await engine.run(.studies([studyInstanceUID]))
        if summary.found == 0 { throw .usage("\(label) has no study \(studyInstanceUID)") }
        if let failure = summary.failure { throw failure }
        return summary
    }

    /// Sends DICOM files (folders are walked) to a node with C-STORE on one association, or to a DICOMweb
    /// service with STOW-RS: what px-push does. A file that could not be stored is in the result, not thrown.
    /// - Returns: one result per file; it encodes to px-push's `data`.
    /// - Throws: `PXError` when nothing could be sent (no such file, the peer refused the
    ///   association); `PXError.usage(_:)` for a folder or a zip folder (sync into those,
    ///   ``PX/sync(from:to:where:options:logger:)``).
    public func store(_ paths: [String]) async throws(PXError) -> PushResult {
        let request = try PushRequest(paths: paths)
        switch self {
        case .node(let node):
            return try await node.peer.push(request, logger: node.logger) { _ in }
        case .web(let web):
            return try await web.service.push(request, logger: web.logger) { _ in }
        case .folder, .zip:
            throw .usage("\(label) is a \(kind) place: store into a node or a DICOMweb service, or sync into it")
        }
    }
}
