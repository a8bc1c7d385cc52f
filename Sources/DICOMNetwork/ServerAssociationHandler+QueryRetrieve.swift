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
            connection.logger.info("query/retrieve request refused", metadata: ["dimse.status": "\(failure.status)", "reason": "\(failure.comment)"])
            try await operation.sendFinal(failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
            return
        }
        connection.logger.debug(
            "query/retrieve request",
            metadata: ["dimse.command": "\(message.commandField)", "qr.level": "\(request.level.rawValue)", "qr.model": "\(request.model)"]
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

/// The state of one C-FIND, C-MOVE or C-GET being served.
struct QueryRetrieveOperation {
    let connection: AssociationConnection
    let configuration: DICOMServer.Configuration
    let served: ServedAssociation
    let presentationContextID: UInt8
    let watcher: CancelRequestWatcher
    let message: DIMSEMessage

    /// Sub-operation counters (C-MOVE, C-GET).
    var remaining = 0
    var completed = 0
    var failed = 0
    var warning = 0
    var failedUIDs: [String] = []

    var logger: Logger { self.connection.logger }

    var messageID: UInt16 {
        switch self.message {
        case .cFindRQ(let m): return m.messageID
        case .cMoveRQ(let m): return m.messageID
        case .cGetRQ(let m): return m.messageID
        default: return 0
        }
    }

    var affectedSOPClassUID: String {
        switch self.message {
        case .cFindRQ(let m): return m.affectedSOPClassUID
        case .cMoveRQ(let m): return m.affectedSOPClassUID
        case .cGetRQ(let m): return m.affectedSOPClassUID
        default: return ""
        }
    }

    var isCancelled: Bool { self.watcher.isCancelled(self.messageID) }

    /// The negotiated context of the request.
    var context: NegotiatedAssociation.Context? { self.connection.negotiated?.context(id: self.presentationContextID) }

    // MARK: - Request

    /// Checks the SOP class and decodes the identifier and its level (PS3.4 §C.4.1.1.3.1, §C.6).
    func decodeRequest(_ dataSet: ByteBuffer?) -> Result<QueryRetrieveRequest, QueryRetrieveFailure> {
        guard let qr = self.configuration.queryRetrieve,
            let model = QueryRetrieveModel(sopClassUID: self.affectedSOPClassUID), qr.models.contains(model),
            let context = self.context, context.abstractSyntax == self.affectedSOPClassUID
        else {
            return .failure(QueryRetrieveFailure(status: .sopClassNotSupported, comment: "SOP class not supported on this context"))
        }
        guard let dataSet, dataSet.readableBytes > 0 else {
            return .failure(QueryRetrieveFailure(status: .dataSetDoesNotMatchSOPClass, comment: "no identifier"))
        }
        let identifier: DataSet
        do {
            identifier = try DataSetReader.read(
                Array(dataSet.readableBytesView), transferSyntax: TransferSyntax(uid: context.transferSyntax)
            ).dataSet
        } catch {
            return .failure(QueryRetrieveFailure(status: .dataSetDoesNotMatchSOPClass, comment: Self.comment("identifier does not decode: \(error)")))
        }
        guard let levelText = identifier.string(.queryRetrieveLevel) else {
            return .failure(
                QueryRetrieveFailure(status: .dataSetDoesNotMatchSOPClass, comment: "no Query/Retrieve Level", offendingElement: .queryRetrieveLevel))
        }
        guard let level = QueryRetrieveLevel(rawValue: levelText), model.levels.contains(level) else {
            return .failure(
                QueryRetrieveFailure(
                    status: .dataSetDoesNotMatchSOPClass, comment: Self.comment("invalid Query/Retrieve Level \(levelText)"),
                    offendingElement: .queryRetrieveLevel))
        }
        return .success(
            QueryRetrieveRequest(
                model: model, level: level, identifier: identifier, callingAETitle: self.served.callingAETitle,
                calledAETitle: self.served.calledAETitle))
    }

    static func comment(_ text: String) -> String {
        String(text.prefix(64))
    }

    // MARK: - Responses

    /// The final response of any of the three operations, with sub-operation counts for C-MOVE and C-GET and the
    /// Failed SOP Instance UID List (0008,0058) when there are failures.
    func sendFinal(_ status: DIMSEStatus, comment: String? = nil, offendingElement: Tag? = nil) async throws {
        let messageID = self.messageID
        let sopClass = self.affectedSOPClassUID
        let comment = comment.map(Self.comment)
        switch self.message {
        case .cMoveRQ, .cGetRQ:
            var failedList: ByteBuffer?
            if !self.failedUIDs.isEmpty, status != .success {
                var list = DataSet()
                list.set(Tag(0x0008, 0x0058), vr: .UI, strings: self.failedUIDs)
                failedList = try self.encode(list)
            }
            let counts = SubOperationCounts(
                remaining: status == .cancel ? UInt16(clamping: self.remaining) : nil,
                completed: UInt16(clamping: self.completed), failed: UInt16(clamping: self.failed), warning: UInt16(clamping: self.warning))
            let message: DIMSEMessage
            if case .cMoveRQ = self.message {
                message = .cMoveRSP(
                    CMoveRSP(
                        messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status, subOperations: counts,
                        hasDataSet: failedList != nil, offendingElement: offendingElement?.rawValue, errorComment: comment))
            } else {
                message = .cGetRSP(
                    CGetRSP(
                        messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status, subOperations: counts,
                        hasDataSet: failedList != nil, offendingElement: offendingElement?.rawValue, errorComment: comment))
            }
            try await self.connection.send(message, presentationContextID: self.presentationContextID, dataSet: failedList)
        default:
            let response = CFindRSP(
                messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status, hasDataSet: false,
                offendingElement: offendingElement?.rawValue, errorComment: comment)
            try await self.connection.send(.cFindRSP(response), presentationContextID: self.presentationContextID, dataSet: nil)
        }
        self.logger.debug(
            "query/retrieve final response",
            metadata: [
                "dimse.status": "\(status)", "completed": "\(self.completed)", "failed": "\(self.failed)", "warning": "\(self.warning)",
            ])
    }

    /// A pending C-MOVE-RSP or C-GET-RSP with the current counts (PS3.4 §C.4.2.1.5, §C.4.3.1.5).
    func sendPending() async throws {
        let counts = SubOperationCounts(
            remaining: UInt16(clamping: self.remaining), completed: UInt16(clamping: self.completed),
            failed: UInt16(clamping: self.failed), warning: UInt16(clamping: self.warning))
        let message: DIMSEMessage
        if case .cMoveRQ = self.message {
            message = .cMoveRSP(
                CMoveRSP(
                    messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID, status: .pending,
                    subOperations: counts))
        } else {
            message = .cGetRSP(
                CGetRSP(
                    messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID, status: .pending,
                    subOperations: counts))
        }
        try await self.connection.send(message, presentationContextID: self.presentationContextID, dataSet: nil)
    }

    /// Encodes a data set in the request's transfer syntax.
    func encode(_ dataSet: DataSet) throws -> ByteBuffer {
        let syntax = TransferSyntax(uid: self.context?.transferSyntax ?? WellKnownUID.implicitVRLittleEndian)
        return ByteBuffer(bytes: try DataSetWriter.encode(dataSet, transferSyntax: syntax))
    }

    /// The final status of a retrieve from its counts (PS3.4 §C.4.2.1.5): success, 0xB000 when some
    /// sub-operations failed or warned, 0xA702 when every one failed.
    var retrieveStatus: DIMSEStatus {
        if self.failed == 0 && self.warning == 0 { return .success }
        if self.completed == 0 && self.warning == 0 { return .outOfResourcesSubOperations }
        return .coercionOfDataElements  // 0xB000: sub-operations complete, one or more failures or warnings
    }

    /// Counts one sub-operation's outcome.
    mutating func count(_ status: DIMSEStatus?, _ sopInstanceUID: String) {
        self.remaining -= 1
        switch status?.category {
        case .success?: self.completed += 1
        case .warning?: self.warning += 1
        default:
            self.failed += 1
            self.failedUIDs.append(sopInstanceUID)
        }
    }

    /// Counts every sub-operation not yet done as failed (the sub-association broke).
    mutating func failRemaining(_ files: ArraySlice<StorableFile>) {
        for file in files {
            self.failed += 1
            self.failedUIDs.append(file.sopInstanceUID)
        }
        self.remaining = 0
    }

    // MARK: - C-FIND

    /// C-FIND SCP (PS3.4 §C.4.1.2, §C.4.1.3): one pending response (0xFF00) per match, then success; a
    /// C-CANCEL-RQ ends the sequence with 0xFE00.
    mutating func find(_ request: QueryRetrieveRequest) async throws {
        guard let provider = self.configuration.queryRetrieve?.provider else { return }
        var matches = 0
        do {
            for try await match in try await provider.find(request) {
                if self.isCancelled { break }
                let response = CFindRSP(
                    messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID, status: .pending,
                    hasDataSet: true)
                try await self.connection.send(.cFindRSP(response), presentationContextID: self.presentationContextID, dataSet: try self.encode(match))
                matches += 1
            }
        } catch let failure as QueryRetrieveFailure {
            try await self.sendFinal(failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
            return
        } catch let error as DICOMNetworkError {
            throw error
        } catch {
            self.logger.info("C-FIND failed", metadata: ["error": "\(error)"])
            try await self.sendFinal(.cannotUnderstand, comment: "unable to process: \(error)")
            return
        }
        if self.isCancelled {
            self.logger.debug("C-FIND cancelled", metadata: ["matches": "\(matches)"])
            try await self.sendFinal(.cancel)
        } else {
            try await self.sendFinal(.success)
        }
    }

    // MARK: - Retrieve

    /// The files to send, or `nil` after a failure response has been sent.
    mutating func filesToRetrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile]? {
        guard let provider = self.configuration.queryRetrieve?.provider else { return nil }
        do {
            return try await provider.retrieve(request)
        } catch let failure as QueryRetrieveFailure {
            try await self.sendFinal(failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
        } catch {
            self.logger.info("retrieve failed", metadata: ["error": "\(error)"])
            try await self.sendFinal(.cannotUnderstand, comment: "unable to process: \(error)")
        }
        return nil
    }

    /// C-MOVE SCP (PS3.4 §C.4.2.2, §C.4.2.3): resolves the destination through the provider, sends the matches
    /// on one sub-association as C-STORE SCU (with Move Originator AE title and Message ID), reports a pending
    /// response after each sub-operation, and ends with success, 0xB000, 0xA702, 0xA801 or 0xFE00.
    mutating func move(_ request: QueryRetrieveRequest, destination: String) async throws {
        guard let qr = self.configuration.queryRetrieve else { return }
        guard let peer = await qr.provider.moveDestination(destination) else {
            self.logger.info("C-MOVE destination unknown", metadata: ["qr.destination": "\(destination)"])
            try await self.sendFinal(.moveDestinationUnknown, comment: "move destination \(destination) unknown")
            return
        }
        guard let files = try await self.filesToRetrieve(request) else { return }
        self.remaining = files.count
        guard !files.isEmpty else {
            try await self.sendFinal(.success)
            return
        }
        let client = DICOMClient(
            configuration: DICOMClient.Configuration(
                callingAETitle: self.served.calledAETitle,
                connectTimeout: qr.connectTimeout,
                acseTimeout: qr.acseTimeout,
                dimseTimeout: qr.dimseTimeout,
                implementationClassUID: self.configuration.implementationClassUID,
                implementationVersionName: self.configuration.implementationVersionName
            ),
            logger: self.logger
        )
        var done = 0
        var cancelled = false
        var this = self
        do {
            try await client.withAssociation(to: peer, proposing: StorableFile.presentationContexts(for: files)) { association in
                for file in files {
                    if this.isCancelled {
                        cancelled = true
                        return
                    }
                    let result = try await association.storeSubOperation(
                        file, moveOriginatorAETitle: this.served.callingAETitle, moveOriginatorMessageID: this.messageID)
                    if let error = result.error, result.status == nil {
                        this.logger.info("C-STORE sub-operation not sent", metadata: ["sop.instance": "\(file.sopInstanceUID)", "error": "\(error)"])
                    }
                    this.count(result.status, file.sopInstanceUID)
                    done += 1
                    do {
                        try await this.sendPending()
                    } catch {
                        throw RequestorLost(error: error)
                    }
                }
            }
        } catch let lost as RequestorLost {
            throw lost.error
        } catch {
            this.logger.info("C-MOVE sub-association failed", metadata: ["qr.destination": "\(destination)", "error": "\(error)"])
            this.failRemaining(files[done...])
            self = this
            try await self.sendFinal(self.retrieveStatus, comment: "sub-association to \(destination): \(error)")
            return
        }
        self = this
        if cancelled || self.isCancelled && self.remaining > 0 {
            try await self.sendFinal(.cancel)
        } else {
            try await self.sendFinal(self.retrieveStatus)
        }
    }

    /// C-GET SCP (PS3.4 §C.4.3.2, §C.4.3.3): the matches go as C-STORE-RQs on this association, each on a
    /// context for its SOP class where the requestor accepted the SCP role (PS3.7 §D.3.3.4) and whose transfer
    /// syntax is the file's (or an uncompressed one a native file can be re-encoded to); instances with no such
    /// context count as failed. A C-CANCEL-RQ stops after the sub-operation in progress.
    mutating func get(_ request: QueryRetrieveRequest) async throws {
        guard let qr = self.configuration.queryRetrieve else { return }
        guard let files = try await self.filesToRetrieve(request) else { return }
        self.remaining = files.count
        var storeMessageID: UInt16 = 0
        var cancelled = false
        for file in files {
            if cancelled || self.isCancelled {
                cancelled = true
                break
            }
            guard let context = self.storageContext(for: file) else {
                self.logger.info(
                    "C-GET sub-operation: no context with the SCP role for the instance",
                    metadata: ["sop.class": "\(file.sopClassUID)", "transfer.syntax": "\(file.transferSyntaxUID)"])
                self.count(nil, file.sopInstanceUID)
                try await self.sendPending()
                continue
            }
            let bytes: ByteBuffer
            do {
                bytes = try DICOMAssociation.dataSetBytes(of: file, in: context.transferSyntax)
            } catch {
                self.logger.info("C-GET sub-operation: cannot read the instance", metadata: ["file": "\(file.path)", "error": "\(error)"])
                self.count(nil, file.sopInstanceUID)
                try await self.sendPending()
                continue
            }
            storeMessageID = storeMessageID == UInt16.max ? 1 : storeMessageID + 1
            let store = CStoreRQ(messageID: storeMessageID, affectedSOPClassUID: file.sopClassUID, affectedSOPInstanceUID: file.sopInstanceUID)
            try await self.connection.send(.cStoreRQ(store), presentationContextID: context.id, dataSet: bytes)
            let (status, cancelSeen) = try await self.waitForStoreResponse(storeMessageID, timeout: qr.dimseTimeout)
            cancelled = cancelled || cancelSeen
            self.count(status, file.sopInstanceUID)
            try await self.sendPending()
        }
        if cancelled && self.remaining > 0 {
            try await self.sendFinal(.cancel)
        } else {
            try await self.sendFinal(self.retrieveStatus)
        }
    }

    /// The context to send `file` on for C-GET: its SOP class with the requestor as SCP, the file's own transfer
    /// syntax first, then (native files only) an uncompressed one.
    func storageContext(for file: StorableFile) -> NegotiatedAssociation.Context? {
        guard let negotiated = self.connection.negotiated else { return nil }
        let candidates = negotiated.acceptedContexts.filter { $0.abstractSyntax == file.sopClassUID && $0.requestorIsSCP }
        if let exact = candidates.first(where: { $0.transferSyntax == file.transferSyntaxUID }) { return exact }
        guard !TransferSyntax(uid: file.transferSyntaxUID).isEncapsulated else { return nil }
        return candidates.first { TransferSyntaxLists.uncompressed.contains($0.transferSyntax) }
    }

    /// Reads until the C-STORE-RSP for `messageID`; a C-CANCEL-RQ on the way is noted. Anything else aborts.
    func waitForStoreResponse(_ messageID: UInt16, timeout: TimeAmount) async throws -> (DIMSEStatus, Bool) {
        var cancelSeen = false
        while true {
            let incoming = try await self.connection.nextIncoming(timeout: timeout, kind: .dimse, waitingFor: "a C-STORE-RSP")
            switch incoming {
            case .dimse(.message(.cStoreRSP(let response), _, _)) where response.messageIDBeingRespondedTo == messageID:
                return (response.status, cancelSeen)
            case .dimse(.message(.cCancelRQ(let cancel), _, _)):
                cancelSeen = cancelSeen || cancel.messageIDBeingRespondedTo == self.messageID
            default:
                self.logger.info("unexpected message during C-GET; aborting", metadata: ["dimse.event": "\(incoming)"])
                await self.connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError("unexpected \(incoming) while waiting for a C-STORE-RSP")
            }
        }
    }
}

/// The C-MOVE requestor's association failed while a sub-association was open: not a sub-operation failure.
private struct RequestorLost: Error {
    var error: any Error
}

extension DICOMAssociation {
    /// One C-STORE sub-operation of a C-MOVE (PS3.4 §C.4.2.2): like ``store(_:)-(StorableFile)``, with Move
    /// Originator Application Entity Title (0000,1030) and Move Originator Message ID (0000,1031).
    func storeSubOperation(_ file: StorableFile, moveOriginatorAETitle: String, moveOriginatorMessageID: UInt16) async throws -> StoreResult {
        var result = StoreResult(path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID, status: nil, error: nil)
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        let candidates = negotiated.acceptedContexts.filter { $0.abstractSyntax == file.sopClassUID && $0.requestorIsSCU }
        guard
            let context = candidates.first(where: { $0.transferSyntax == file.transferSyntaxUID })
                ?? candidates.first(where: { !TransferSyntax(uid: $0.transferSyntax).isEncapsulated })
                .flatMap({ TransferSyntax(uid: file.transferSyntaxUID).isEncapsulated ? nil : $0 })
        else {
            result.error = "no accepted presentation context for \(file.sopClassUID) in \(file.transferSyntaxUID)"
            return result
        }
        let dataSet: ByteBuffer
        do {
            dataSet = try Self.dataSetBytes(of: file, in: context.transferSyntax)
        } catch {
            result.error = "\(error)"
            return result
        }
        let messageID = self.nextMessageID()
        let request = CStoreRQ(
            messageID: messageID, affectedSOPClassUID: file.sopClassUID, affectedSOPInstanceUID: file.sopInstanceUID,
            moveOriginatorAETitle: moveOriginatorAETitle, moveOriginatorMessageID: moveOriginatorMessageID)
        try await self.connection.send(.cStoreRQ(request), presentationContextID: context.id, dataSet: dataSet)
        let (message, _) = try await self.response(to: messageID, waitingFor: "a C-STORE-RSP")
        guard case .cStoreRSP(let response) = message else {
            throw DICOMNetworkError.protocolError("expected a C-STORE-RSP, got \(message.commandField)")
        }
        result.status = response.status
        result.error = response.errorComment
        return result
    }
}
