import DICOMData
import DICOMProtocol
import Logging
import NIOCore

extension DIMSEMessage {
    /// Whether the message is a C-FIND-RQ, C-MOVE-RQ or C-GET-RQ, served by the Query/Retrieve SCP.
    var isQueryRetrieveRequest: Bool {
        switch self {
        case .cFindRQ, .cMoveRQ, .cGetRQ: return true
        default: return false
        }
    }
}

extension ServerAssociationHandler {
    /// Serves one C-FIND-RQ, C-MOVE-RQ or C-GET-RQ to its final response (PS3.4 §C.4.1, §C.4.2, §C.4.3).
    ///
    /// Requests the server cannot serve (no provider, a SOP class that is not a Query/Retrieve one) are answered
    /// with 0x0122 (SOP class not supported); an identifier that does not decode or has no valid Query/Retrieve
    /// Level is answered with 0xA900. Only failures of the association itself are thrown.
    func serveQueryRetrieve(
        _ message: DIMSEMessage, presentationContextID: UInt8, dataSet: ByteBuffer?, served: ServedAssociation
    ) async throws {
        let connection = self.connection
        let watcher = try await connection.cancelWatcher()
        watcher.begin()
        defer { watcher.end() }
        var operation = QueryRetrieveOperation(
            connection: connection,
            configuration: self.configuration,
            served: served,
            presentationContextID: presentationContextID,
            watcher: watcher,
            message: message
        )
        let request: QueryRetrieveRequest
        switch operation.decodeRequest(dataSet) {
        case .success(let decoded):
            request = decoded
        case .failure(let failure):
            connection.logger.info(
                "query/retrieve request refused",
                metadata: ["dimse.status": "\(failure.status)", "reason": "\(failure.comment)"])
            try await operation.sendFinal(
                failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
            return
        }
        connection.logger.debug(
            "query/retrieve request",
            metadata: [
                "dimse.command": "\(message.commandField)", "qr.level": "\(request.level.rawValue)",
                "qr.model": "\(request.model)",
            ]
        )
        switch message {
        case .cFindRQ:
            try await operation.find(request)
        case .cMoveRQ(let move):
            try await operation.move(request, destination: move.moveDestination)
        case .cGetRQ:
            try await operation.get(request)
        default:
            try await operation.sendFinal(.sopClassNotSupported, comment: "not a query/retrieve request")
        }
    }
}
