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

/// The backend for a DICOMweb place (PS3.18): find is QIDO-RS, get is WADO-RS, push is STOW-RS, and
/// echo a one-match search. It returns the same typed results as the DIMSE backends, so the JSON px
/// prints does not say which protocol answered (only `backend` does).
///
/// The ``Connection`` passed to each call gives the timeouts (connect, read = `dimse`, and the
/// deadline of each request) and the AE titles echoed in results; the place is the service.
public struct DICOMWebBackend: DICOMBackend {
    public let place: DICOMWebPlace
    /// The transfer syntax asked for in WADO-RS Accept headers; `nil` for the archive's own (`*`).
    public let transferSyntax: String?

    public var name: String { "dicomweb" }

    public init(place: DICOMWebPlace, transferSyntax: String? = nil) {
        self.place = place
        self.transferSyntax = transferSyntax
    }

    /// The ``Connection`` px's results name for a place: its host and port, with the AE titles given.
    public static func connection(
        for place: DICOMWebPlace, calledAETitle: String = "DICOMWEB", local: LocalAE, timeouts: Timeouts
    ) throws(PXError) -> Connection {
        Connection(
            node: try DICOMNode(host: place.host, port: place.port, calledAETitle: calledAETitle), local: local,
            timeouts: timeouts)
    }

    /// A search for at most one study (PS3.18 §10.6): the service answers and accepts the credentials.
    public func echo(connection: Connection, logger: Logger) async throws(PXError) -> EchoResult {
        let start = ContinuousClock.now
        try await PXError.catching {
            try await DICOMWebClient.with(place, timeouts: connection.timeouts, logger: logger) { client in
                let response = try await client.send(
                    .GET, client.url("/studies", query: [("limit", "1")]),
                    headers: [("Accept", "application/dicom+json")])
                _ = try await client.collect(response)
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return EchoResult(
            node: connection.node, callingAETitle: connection.local.aeTitle, status: .success, elapsed: seconds)
    }

    /// QIDO-RS (PS3.18 §10.6), each match shaped as a C-FIND response to the same identifier.
    public func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let matches = try await PXError.catching {
            try await self.search(request, connection: connection, logger: logger, onResponse: onResponse)
        }
        let limited = request.limit.map { matches.count >= $0 } ?? false
        return FindResult(
            request: request, matches: matches, status: limited ? DIMSEStatus(code: 0xFE00, service: .find) : .success)
    }

    private func search(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws -> [DataSet] {
        try await DICOMWebClient.with(place, timeouts: connection.timeouts, logger: logger) { client in
            var shaped: [DataSet] = []
            _ = try await client.search(request) { match in
                let response = DICOMWebClient.shapedAsFindResponse(match, request: request)
                shaped.append(response)
                try await onResponse(FindResponse(status: .pending, identifier: response))
            }
            return shaped
        }
    }

    /// Not a DICOMweb transaction.
    public func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        throw PXError.usage("C-MOVE is not supported for a DICOMweb peer: use px-get, which retrieves with WADO-RS")
    }

    /// STOW-RS (PS3.18 §10.5) in batches of ``DICOMWebClient/storeBatchSize`` files.
    public func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        try await PXError.catching {
            try await self.store(request, connection: connection, logger: logger, onFile: onFile)
        }
    }

    private func store(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws -> PushResult {
        try await DICOMWebClient.with(place, timeouts: connection.timeouts, logger: logger) { client in
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
    /// in the ``StorageLayout`` tree once complete.
    public func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try await PXError.catching {
            try await self.retrieve(request, connection: connection, logger: logger, onProgress: onProgress)
        }
    }

    private func retrieve(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws -> GetResult {
        let (placer, incoming) = try request.placerAndStagingFolder()
        defer { rmdir(incoming) }
        let paths = DICOMWebClient.retrievePaths(request)
        let (instances, failures) = try await DICOMWebClient.with(place, timeouts: connection.timeouts, logger: logger)
        { client in
            var instances: [ReceivedInstance] = []
            var failures: [ListenEvent] = []
            for path in paths {
                try await client.retrieve(path, transferSyntax: transferSyntax, placer: placer, incoming: incoming) {
                    outcome in
                    switch outcome {
                    case .success(let instance): instances.append(instance)
                    case .failure(let error):
                        failures.append(.storeFailed(path: nil, sopInstanceUID: nil, error: error))
                    }
                    await onProgress(
                        MoveProgress(
                            remaining: nil, completed: instances.count, failed: failures.count, warning: 0,
                            status: .pending))
                }
            }
            return (instances, failures)
        }
        let status = failures.isEmpty ? DIMSEStatus.success : DIMSEStatus(code: 0xB000, service: .get)
        await onProgress(
            MoveProgress(remaining: 0, completed: instances.count, failed: failures.count, warning: 0, status: status))
        return GetResult(
            request: request, status: status, remaining: 0, completed: instances.count, failed: failures.count,
            warning: 0,
            responses: paths.count, instances: instances, storeFailures: failures)
    }

    /// Not a DICOMweb transaction.
    public func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError) {
        throw PXError.usage("px-listen is not supported for a DICOMweb peer: it receives DIMSE C-STORE only")
    }
}
