import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-FIND (PS3.4 C.4.1) on the request's model (a Query/Retrieve one, or the Modality Worklist, PS3.4
    /// Annex K): the identifiers are decoded off the wire and handed to `onResponse` as
    /// they arrive, on the association's own task, so a peer can send no faster than they are consumed
    /// (no queue grows between the two). ``FindRequest/limit`` sends a C-CANCEL after that many matches;
    /// more than ``FindRequest/maxResponses`` send one too and fail with ``PXError/tooManyResponses(limit:)``. A peer
    /// that goes on sending past ``FindRequest/responsesAfterCancel`` matches after the C-CANCEL is aborted: the
    /// result then has the Cancel status (0xFE00), or the bound's error.
    /// Identifiers are kept in the result only when ``FindRequest/keepMatches``; each is shaped to the keys
    /// asked (``FindRequest/shapedResponse(_:)``).
    public func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        // The deadline runs the association in a child task, which takes an escaping closure; `run`
        // waits for that task before it returns, so `onResponse` does not outlive this call.
        let (result, exceeded) = try await PXError.catching {
            try await withoutActuallyEscaping(onResponse) { onResponse in
                try await run("C-FIND", connection) {
                    try await client.withAssociation(
                        to: peer, proposing: [.find(sopClass: request.model.findSOPClass)]
                    ) { association in
                        try await Self.find(request, on: association, logger: logger, onResponse: onResponse)
                    }
                }
            }
        }
        if exceeded, let bound = request.maxResponses { throw PXError.tooManyResponses(limit: bound) }
        return result
    }

    /// One C-FIND on an open association (``find(_:connection:logger:onResponse:)`` and the cohort's
    /// ``NativeQuerySession``).
    /// - Returns: the result, and whether more than ``FindRequest/maxResponses`` matches came.
    static func find(
        _ request: FindRequest, on association: DICOMAssociation, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws -> (FindResult, Bool) {
        var matches: [DataSet] = []
        var count = 0
        var exceeded = false
        var last = DIMSEStatus.success
        let responses = try await association.find(
            request.identifierWithLevel, sopClass: request.model.findSOPClass, limit: request.cancelAfter,
            responsesAfterCancel: FindRequest.responsesAfterCancel)
        do {
            for try await response in responses {
                guard response.status.isPending else {
                    last = response.status
                    continue
                }
                guard let returned = response.identifier else { continue }
                let identifier = request.shapedResponse(returned)
                if let bound = request.maxResponses, count >= bound {
                    exceeded = true  // the C-CANCEL went out with this response
                    continue
                }
                count += 1
                if request.keepMatches { matches.append(identifier) }
                try await onResponse(FindResponse(status: response.status, identifier: identifier))
            }
        } catch let ignored as FindResponses.CancelIgnored {
            // What was asked for has come (the limit, or proof the bound was passed): stop
            // reading and abort rather than take what the peer goes on sending.
            logger.warning("\(ignored); association aborted")
            await association.abort()
            last = DIMSEStatus(code: 0xFE00, service: .find)
        } catch let foreign as FindResponses.ForeignSOPClass {
            throw PXError.invalidResponse(foreign.description)
        }
        return (FindResult(request: request, matches: matches, status: last, count: count), exceeded)
    }
}
