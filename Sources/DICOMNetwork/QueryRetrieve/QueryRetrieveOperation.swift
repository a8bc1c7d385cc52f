import AsyncAlgorithms
import DICOMData
import DICOMProtocol
import Logging
import NIOCore

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
    /// Why the first failed sub-operation failed, when this side knows (a file not sent): the final response's
    /// Error Comment (0000,0902).
    var failureComment: String?

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
            return .failure(
                QueryRetrieveFailure(status: .sopClassNotSupported, comment: "SOP class not supported on this context"))
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
            return .failure(
                QueryRetrieveFailure(
                    status: .dataSetDoesNotMatchSOPClass, comment: Self.comment("identifier does not decode: \(error)"))
            )
        }
        guard let levelText = identifier.string(.queryRetrieveLevel) else {
            return .failure(
                QueryRetrieveFailure(
                    status: .dataSetDoesNotMatchSOPClass, comment: "no Query/Retrieve Level",
                    offendingElement: .queryRetrieveLevel))
        }
        guard let level = QueryRetrieveLevel(rawValue: levelText), model.levels.contains(level) else {
            return .failure(
                QueryRetrieveFailure(
                    status: .dataSetDoesNotMatchSOPClass,
                    comment: Self.comment("invalid Query/Retrieve Level \(levelText)"),
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
                completed: UInt16(clamping: self.completed), failed: UInt16(clamping: self.failed),
                warning: UInt16(clamping: self.warning))
            let message: DIMSEMessage
            if case .cMoveRQ = self.message {
                message = .cMoveRSP(
                    CMoveRSP(
                        messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status,
                        subOperations: counts,
                        hasDataSet: failedList != nil, offendingElement: offendingElement?.rawValue,
                        errorComment: comment))
            } else {
                message = .cGetRSP(
                    CGetRSP(
                        messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status,
                        subOperations: counts,
                        hasDataSet: failedList != nil, offendingElement: offendingElement?.rawValue,
                        errorComment: comment))
            }
            try await self.connection.send(
                message, presentationContextID: self.presentationContextID, dataSet: failedList)
        default:
            let response = CFindRSP(
                messageIDBeingRespondedTo: messageID, affectedSOPClassUID: sopClass, status: status, hasDataSet: false,
                offendingElement: offendingElement?.rawValue, errorComment: comment)
            try await self.connection.send(
                .cFindRSP(response), presentationContextID: self.presentationContextID, dataSet: nil)
        }
        self.logger.debug(
            "query/retrieve final response",
            metadata: [
                "dimse.status": "\(status)", "completed": "\(self.completed)", "failed": "\(self.failed)",
                "warning": "\(self.warning)",
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
                    messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID,
                    status: .pending,
                    subOperations: counts))
        } else {
            message = .cGetRSP(
                CGetRSP(
                    messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID,
                    status: .pending,
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
        guard let qr = self.configuration.queryRetrieve else { return }
        let provider = qr.provider
        var matches = 0
        do {
            let source: @Sendable () async throws -> AsyncThrowingStream<DataSet, any Error> = {
                try await provider.find(request)
            }
            try await ProviderDeadline.relay("C-FIND", timeout: qr.providerTimeout, source) { relayed in
                for try await match in relayed {
                    if self.isCancelled { break }
                    let response = CFindRSP(
                        messageIDBeingRespondedTo: self.messageID, affectedSOPClassUID: self.affectedSOPClassUID,
                        status: .pending,
                        hasDataSet: true)
                    let identifier: ByteBuffer
                    do {
                        identifier = try self.encode(match)
                    } catch {
                        throw QueryRetrieveFailure(
                            status: .cannotUnderstand, comment: "cannot encode a match: \(error)")
                    }
                    do {
                        try await self.connection.send(
                            .cFindRSP(response), presentationContextID: self.presentationContextID, dataSet: identifier)
                    } catch {
                        throw RequestorLost(error: error)
                    }
                    matches += 1
                }
            }
        } catch let failure as QueryRetrieveFailure {
            try await self.sendFinal(
                failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
            return
        } catch let lost as RequestorLost {
            throw lost.error
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
}

/// Sending to the requestor failed (its association is gone): thrown through the provider's and the
/// sub-association's error handling, which would otherwise answer it with a status.
struct RequestorLost: Error {
    var error: any Error
}
