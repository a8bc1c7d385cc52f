import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-FIND (PS3.4 C.4.1): the identifiers are decoded off the wire and handed to `onResponse` as
    /// they arrive; ``FindRequest/limit`` sends a C-CANCEL after that many matches.
    public func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (PXCore.FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        // The deadline runs the association in a child task, which needs an escaping closure:
        // responses go through a stream and `onResponse` is called here, in order.
        let (stream, continuation) = AsyncThrowingStream<PXCore.FindResponse, any Error>.makeStream()
        async let final: DIMSEStatus = run("C-FIND", connection) {
            do {
                let status = try await client.withAssociation(to: peer, proposing: [.find(request.model.network)]) { association in
                    var last = DIMSEStatus.success
                    let responses = try await association.find(
                        request.identifierWithLevel, model: request.model.network, limit: request.limit)
                    for try await response in responses {
                        if response.status.isPending, let identifier = response.identifier {
                            continuation.yield(PXCore.FindResponse(status: response.status, identifier: identifier))
                        } else if !response.status.isPending {
                            last = response.status
                        }
                    }
                    return last
                }
                continuation.finish()
                return status
            } catch {
                continuation.finish(throwing: error)
                throw error
            }
        }
        var matches: [DataSet] = []
        do {
            for try await response in stream {
                if let identifier = response.identifier { matches.append(identifier) }
                try await onResponse(response)
            }
        } catch {
            // The association task ends with the same failure, already mapped to a PXError.
            do { _ = try await final } catch { throw PXError.from(error) }
            throw PXError.from(error)
        }
        let status: DIMSEStatus
        do { status = try await final } catch { throw PXError.from(error) }
        return FindResult(request: request, matches: matches, status: status)
    }
}
