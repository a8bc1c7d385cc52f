import DICOMData
import Logging
import NIOHTTP1
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A DICOMweb service (PS3.18) as a peer: its base URL and credentials (``DICOMWebPlace``), the transfer
/// syntax WADO-RS asks for and the timeouts every request runs under. It verifies with a one-match search and
/// queries with QIDO-RS (§10.6), retrieves with WADO-RS (§10.4) and stores with STOW-RS (§10.5), each call
/// over its own HTTP client (``DICOMWebClient``). It has no AE title, no C-ECHO, no C-MOVE and no receiver
/// (no ``Moving``, no ``Receiving``: a command that needs them refuses a DICOMweb peer by type), and its
/// failures name its own transactions (`QIDO-RS`, `WADO-RS`, `STOW-RS`). It returns the same typed results as a
/// DIMSE peer, so the JSON px prints does not say which protocol answered (only `backend` does).
public struct DICOMWebService: Verifying, Querying, ParallelRetrieving, Storing {
    public let place: DICOMWebPlace
    /// The transfer syntax asked for in WADO-RS Accept headers (PS3.18 §8.7.3.5.2); `nil` for the archive's
    /// own (`*`).
    public let transferSyntax: String?
    /// Connect and read (``Timeouts/dimse``: the longest silence) timeouts, each request's deadline and the
    /// minimum transfer rate (``AnswerGuard``).
    public let timeouts: Timeouts
    /// How many WADO-RS requests px-get has in flight at once (``parallelRange``).
    public var parallel: Int = Self.defaultParallel

    /// px-get's `--parallel` default: a few requests at once keep a server busy without flooding it.
    public static let defaultParallel = 4
    /// The values `--parallel` accepts.
    public static let parallelRange = 1...32

    /// `value` when it is in ``parallelRange``.
    /// - Throws: ``PXError/usage(_:)`` otherwise.
    public static func validatedParallel(_ value: Int) throws(PXError) -> Int {
        guard parallelRange.contains(value) else {
            throw .usage(
                "--parallel must be from \(parallelRange.lowerBound) to \(parallelRange.upperBound) (requests at once), not \(value)"
            )
        }
        return value
    }

    public var name: String { "dicomweb" }

    public var queryOperation: String { "QIDO-RS" }
    public var retrieveOperation: String { "WADO-RS" }

    public init(place: DICOMWebPlace, transferSyntax: String? = nil, timeouts: Timeouts = .standard) {
        self.place = place
        self.transferSyntax = transferSyntax
        self.timeouts = timeouts
    }

    /// A search for at most one study (PS3.18 §10.6): the service answers with a success status and a DICOM
    /// JSON array (§F.2) each match of which decodes, and accepts the credentials. The answer is read under
    /// ``timeouts`` and ``DICOMWebClient/maximumMessageBytes``.
    /// - Throws: ``PXError``: `connectionRefused`, `timeout`, `httpFailure` (with the status), `invalidResponse`.
    public func verify(logger: Logger) async throws(PXError) -> Verification {
        let start = ContinuousClock.now
        let (status, contentType, matches) = try await PXError.catching {
            try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) {
                client async throws -> (Int, String?, Int) in
                let answer = try await client.request(
                    .GET, client.url("/studies", query: [("limit", "1")]),
                    headers: [("Accept", "application/dicom+json")])
                let status = Int(answer.status.code)
                let contentType = answer.headers.first(name: "content-type")
                let body = try await client.collect(answer)
                // 204 No Content: nothing matches (an empty archive), no body to read.
                if status == 204 { return (status, contentType, 0) }
                let type = contentType?.lowercased() ?? ""
                guard type.isEmpty || type.contains("json") else {
                    throw PXError.invalidResponse(
                        "QIDO-RS answer of type '\(contentType ?? "")', expected application/dicom+json (PS3.18 §10.6.3)"
                    )
                }
                var reader = JSONArrayReader()
                try body.withUnsafeBytes { raw in
                    try reader.feed(raw) { object in _ = try DICOMWebClient.decodeMatch(object) }
                }
                try reader.finish()
                return (status, contentType, reader.count)
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return .web(
            WebVerification(
                url: place.baseURL, host: place.host, port: place.port, checked: "QIDO-RS",
                request: "GET /studies?limit=1", httpStatus: status, contentType: contentType, matches: matches,
                elapsed: seconds))
    }

    /// WADO-RS resources are studies, series and instances (PS3.18 §10.4.1.1): a patient is retrieved study
    /// by study.
    public var retrievesWholePatients: Bool { false }

    /// QIDO-RS (PS3.18 §10.6), each match shaped as a C-FIND response to the same identifier.
    public func find(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let (matches, count) = try await PXError.catching {
            try await self.search(request, logger: logger, onResponse: onResponse)
        }
        let limited = request.limit.map { count >= $0 } ?? false
        return FindResult(
            request: request, matches: matches,
            status: limited ? DIMSEStatus(code: 0xFE00, service: .find) : .success, count: count)
    }

    /// The matches as C-FIND responses, kept only when ``FindRequest/keepMatches``, and their count.
    private func search(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws -> ([DataSet], Int) {
        if request.level == .patient && request.model == .patientRoot {
            return try await searchPatients(request, logger: logger, onResponse: onResponse)
        }
        return try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
            var shaped: [DataSet] = []
            let count = try await client.forEachMatch(request) { match in
                let response = DICOMWebClient.shapedAsFindResponse(match, request: request)
                if request.keepMatches { shaped.append(response) }
                try await onResponse(FindResponse(status: .pending, identifier: response))
            }
            return (shaped, count)
        }
    }

    /// A Patient Root patient-level query over QIDO-RS, which searches no patients (PS3.18 §10.6.1.1): the
    /// studies whose patient attributes match, one match per Patient ID (in the order of its first study) with
    /// the patient attributes of its first study, and NumberOfPatientRelatedStudies, ...Series and ...Instances
    /// counted over its studies (PS3.4 §C.6.1.1.2), each shaped as the C-FIND response to the same identifier, so
    /// px-find prints the same keys whichever protocol answered. ``FindRequest/limit`` bounds the patients,
    /// ``FindRequest/maxResponses`` the studies read.
    private func searchPatients(
        _ request: FindRequest, logger: Logger, onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws -> ([DataSet], Int) {
        let counted: Set<Tag> = [
            EntityMatching.numberOfPatientRelatedStudies, EntityMatching.numberOfPatientRelatedSeries,
            EntityMatching.numberOfPatientRelatedInstances,
        ]
        var studyKeys = DataSet()
        for element in request.identifier where !counted.contains(element.tag) && element.tag != .queryRetrieveLevel {
            studyKeys.set(element)
        }
        for tag in [
            Tag.patientID, EntityMatching.numberOfStudyRelatedSeries, EntityMatching.numberOfStudyRelatedInstances,
        ]
        where studyKeys[tag] == nil {
            studyKeys.set(DataElement(tag: tag, vr: tag == .patientID ? .LO : .IS, bytes: []))
        }
        let studies = FindRequest(
            level: .study, model: .studyRoot, identifier: studyKeys, maxResponses: request.maxResponses,
            keepMatches: false)
        struct Patient {
            var first: DataSet
            var studies = 0
            var series = 0
            var instances = 0
        }
        var order: [String] = []
        var patients: [String: Patient] = [:]
        try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
            _ = try await client.forEachMatch(studies) { study in
                let id = study.string(.patientID) ?? ""
                if patients[id] == nil {
                    order.append(id)
                    patients[id] = Patient(first: study)
                }
                patients[id]?.studies += 1
                patients[id]?.series += Int(study.string(EntityMatching.numberOfStudyRelatedSeries) ?? "") ?? 0
                patients[id]?.instances += Int(study.string(EntityMatching.numberOfStudyRelatedInstances) ?? "") ?? 0
            }
        }
        var shaped: [DataSet] = []
        var count = 0
        for id in order {
            if let limit = request.limit, count >= limit { break }
            guard let patient = patients[id] else { continue }
            var match = patient.first
            for (tag, number) in [
                (EntityMatching.numberOfPatientRelatedStudies, patient.studies),
                (EntityMatching.numberOfPatientRelatedSeries, patient.series),
                (EntityMatching.numberOfPatientRelatedInstances, patient.instances),
            ] {
                var text = Array(String(number).utf8)
                if text.count % 2 == 1 { text.append(0x20) }
                match.set(DataElement(tag: tag, vr: .IS, bytes: text))
            }
            let response = request.shapedResponse(match)
            if request.keepMatches { shaped.append(response) }
            try await onResponse(FindResponse(status: .pending, identifier: response))
            count += 1
        }
        return (shaped, count)
    }

    /// STOW-RS (PS3.18 §10.5) in batches of ``DICOMWebClient/storeBatchSize`` files.
    public func push(
        _ request: PushRequest, logger: Logger, onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        if request.commitment != nil {
            throw .usage("--commit needs a DIMSE peer: storage commitment (PS3.4 Annex J) has no DICOMweb form")
        }
        return try await PXError.catching {
            try await self.store(request, logger: logger, onFile: onFile)
        }
    }

    private func store(
        _ request: PushRequest, logger: Logger, onFile: @Sendable (PushFileResult) async -> Void
    ) async throws -> PushResult {
        try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
            var byPath: [String: PushFileResult] = [:]
            for file in request.files where file.error != nil {
                let result = PushFileResult(file: file, status: nil, error: file.error)
                byPath[file.path] = result
                await onFile(result)
            }
            let sendable = request.sendable
            var failure: PXError?
            var index = 0
            while index < sendable.count {
                let batch = Array(sendable[index..<min(index + DICOMWebClient.storeBatchSize, sendable.count)])
                index += batch.count
                do {
                    for result in try await client.store(batch, onFile: onFile) { byPath[result.file.path] = result }
                } catch {
                    let error = client.mapped(error)
                    // Nothing stored yet: the request as a whole failed.
                    if byPath.values.allSatisfy({ !$0.succeeded }) && index == batch.count { throw error }
                    failure = error
                    for file in sendable[(index - batch.count)...] {
                        let result = PushFileResult(file: file, status: nil, error: error)
                        byPath[file.path] = result
                        await onFile(result)
                    }
                    break
                }
            }
            return PushResult(files: request.files.compactMap { byPath[$0.path] }, failure: failure)
        }
    }

    /// WADO-RS (PS3.18 §10.4): each instance written to `<root>/.px-incoming` as it arrives and placed
    /// in the ``StorageLayout`` tree once complete; ``parallel`` resources at once (see
    /// ``get(_:logger:onProgress:)-([GetRequest],_,_)``).
    public func get(
        _ request: GetRequest, logger: Logger, onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        let results = try await get([request], logger: logger) { _, progress in
            await onProgress(progress)
        }
        guard let result = results.first else { throw PXError.invalidResponse("WADO-RS retrieval gave no result") }
        return result
    }

    /// WADO-RS of several requests over one HTTP client, ``parallel`` requests in flight at once
    /// (PS3.18 §10.4.1.1: a study, a series or an instance per request).
    ///
    /// The resources are the requests' own (``DICOMWebClient/retrievePaths(_:)``); when there are fewer
    /// of them than ``parallel``, a study is split into its series (found with QIDO-RS, PS3.18
    /// §10.6), so one big study is fetched in parallel too. Each resource streams into its own
    /// temporary files (memory bounded per request, as for one) and each instance is placed atomically
    /// once complete; the first failing resource cancels the others, whose partial files are removed.
    ///
    /// - Parameter onProgress: a request's counts each time one of its resources is complete, and its
    ///   final counts.
    /// - Parameter onResult: each request's result (with its index) as soon as its last resource is in, in
    ///   the order the requests end; none is kept, so a run of any number of requests holds only those being
    ///   retrieved (issue 34). When the retrieval fails, the requests done before it have had theirs.
    public func get(
        _ requests: [GetRequest], logger: Logger, onProgress: @Sendable (GetRequest, MoveProgress) async -> Void,
        onResult: (Int, GetResult) async -> Void
    ) async throws(PXError) {
        try await PXError.catching {
            try await self.retrieve(requests, logger: logger, onProgress: onProgress, onResult: onResult)
        }
    }

    /// One resource to retrieve: which request it serves and its path.
    private struct Resource: Sendable {
        var request: Int
        var path: String
    }

    /// What one resource gave.
    private struct Retrieved: Sendable {
        var request: Int
        var instances: [ReceivedInstance] = []
        var failures: [ListenEvent] = []
    }

    private func retrieve(
        _ requests: [GetRequest], logger: Logger, onProgress: @Sendable (GetRequest, MoveProgress) async -> Void,
        onResult: (Int, GetResult) async -> Void
    ) async throws {
        var placers: [(placer: InstancePlacer, incoming: String)] = []
        defer { for staging in placers { rmdir(staging.incoming) } }
        for request in requests { placers.append(try request.placerAndStagingFolder()) }
        let parallel = self.parallel
        let transferSyntax = self.transferSyntax
        return try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
            var resources: [Resource] = []
            for (index, request) in requests.enumerated() {
                for path in DICOMWebClient.retrievePaths(request) {
                    resources.append(Resource(request: index, path: path))
                }
            }
            if parallel > 1 && resources.count < parallel {
                resources = try await Self.splitStudies(resources, of: requests, client: client, logger: logger)
            }
            // The resources of each request not yet in: its result is complete when none is left.
            var outstanding = Array(repeating: 0, count: requests.count)
            for resource in resources { outstanding[resource.request] += 1 }
            var results = requests.map {
                var result = GetResult(
                    request: $0, status: .success, remaining: 0, completed: 0, failed: 0, warning: 0, responses: 0,
                    instances: [], storeFailures: [])
                result.operation = "WADO-RS"
                return result
            }
            func account(_ retrieved: Retrieved) async {
                let index = retrieved.request
                results[index].instances += retrieved.instances
                results[index].storeFailures += retrieved.failures
                results[index].responses += 1
                outstanding[index] -= 1
                guard outstanding[index] == 0 else {
                    let result = results[index]
                    await onProgress(
                        result.request,
                        MoveProgress(
                            remaining: nil, completed: result.instances.count, failed: result.storeFailures.count,
                            warning: 0, status: .pending))
                    return
                }
                let failed = results[index].storeFailures.count
                results[index].completed = results[index].instances.count
                // WADO-RS has no sub-operation counts of the service's own: the parts px could not place are
                // its store failures, counted once by GetResult.failedCount.
                results[index].failed = 0
                results[index].status = failed == 0 ? .success : DIMSEStatus(code: 0xB000, service: .get)
                await onProgress(
                    results[index].request,
                    MoveProgress(
                        remaining: 0, completed: results[index].completed, failed: failed, warning: 0,
                        status: results[index].status))
                await onResult(index, results[index])
                results[index].instances = []
                results[index].storeFailures = []
            }
            try await withThrowingTaskGroup(of: Retrieved.self) { group in
                var next = 0
                var running = 0
                while next < resources.count || running > 0 {
                    while next < resources.count && running < parallel {
                        let resource = resources[next]
                        let staging = placers[resource.request]
                        let keepsHeaders = requests[resource.request].keepsHeaders
                        group.addTask {
                            var retrieved = Retrieved(request: resource.request)
                            try await client.retrieve(
                                resource.path, transferSyntax: transferSyntax, placer: staging.placer,
                                incoming: staging.incoming, keepingHeaders: keepsHeaders
                            ) { outcome in
                                switch outcome {
                                case .success(let instance): retrieved.instances.append(instance)
                                case .failure(let error):
                                    retrieved.failures.append(
                                        .storeFailed(path: nil, sopInstanceUID: nil, error: error))
                                }
                            }
                            return retrieved
                        }
                        next += 1
                        running += 1
                    }
                    if let retrieved = try await group.next() { await account(retrieved) }
                    running -= 1
                }
            }
        }
    }

    /// `resources` with each whole study replaced by its series (QIDO-RS, PS3.18 §10.6.1.2); a study
    /// whose series cannot be listed stays one resource (its retrieval then says why).
    private static func splitStudies(
        _ resources: [Resource], of requests: [GetRequest], client: DICOMWebClient, logger: Logger
    ) async throws -> [Resource] {
        var out: [Resource] = []
        for resource in resources {
            let request = requests[resource.request]
            guard request.seriesInstanceUID == nil else {
                out.append(resource)
                continue
            }
            var identifier = DataSet()
            identifier.set(.studyInstanceUID, vr: .UI, string: request.studyInstanceUID)
            identifier.set(DataElement(tag: .seriesInstanceUID, vr: .UI, bytes: []))
            let series: [String]
            do {
                series = try await client.search(FindRequest(level: .series, identifier: identifier)) { _ in }
                    .compactMap { $0.string(.seriesInstanceUID) }.filter { !$0.isEmpty }
            } catch {
                logger.debug(
                    "cannot list the series of \(request.studyInstanceUID) (\(error)); retrieving the study whole")
                out.append(resource)
                continue
            }
            if series.count < 2 {
                out.append(resource)
            } else {
                for uid in series {
                    out.append(
                        Resource(
                            request: resource.request,
                            path: resource.path + "/series/" + DICOMWebClient.pathSegment(uid)))
                }
            }
        }
        return out
    }
}
