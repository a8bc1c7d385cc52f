import DICOMData
import DICOMProtocol
import Logging
import NIOCore

extension QueryRetrieveOperation {
    // MARK: - Retrieve

    /// The files to send, or `nil` after a failure response has been sent.
    mutating func filesToRetrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile]? {
        guard let qr = self.configuration.queryRetrieve else { return nil }
        let provider = qr.provider
        do {
            return try await ProviderDeadline.run("retrieve", timeout: qr.providerTimeout) {
                try await provider.retrieve(request)
            }
        } catch let failure as QueryRetrieveFailure {
            try await self.sendFinal(
                failure.status, comment: failure.comment, offendingElement: failure.offendingElement)
        } catch let expired as ProviderDeadline.Expired {
            self.logger.info("retrieve: provider timed out", metadata: ["error": "\(expired)"])
            try await self.sendFinal(.outOfResourcesNumberOfMatches, comment: "\(expired)")
        } catch {
            self.logger.info("retrieve failed", metadata: ["error": "\(error)"])
            try await self.sendFinal(.cannotUnderstand, comment: "unable to process: \(error)")
        }
        return nil
    }

    /// C-MOVE SCP (PS3.4 §C.4.2.2, §C.4.2.3): resolves the destination through the provider, sends the matches
    /// on one sub-association as C-STORE SCU (with Move Originator AE title and Message ID; each file's own
    /// transfer syntax proposed, and its lossless fallbacks, ``StorableFile/presentationContexts(for:)``), reports a pending
    /// response after each sub-operation, and ends with success, 0xB000, 0xA702, 0xA801 or 0xFE00.
    mutating func move(_ request: QueryRetrieveRequest, destination: String) async throws {
        guard let qr = self.configuration.queryRetrieve else { return }
        let provider = qr.provider
        let resolved: DICOMPeer?
        do {
            resolved = try await ProviderDeadline.run("move destination", timeout: qr.providerTimeout) {
                await provider.moveDestination(destination)
            }
        } catch {
            self.logger.info("C-MOVE destination lookup failed", metadata: ["error": "\(error)"])
            resolved = nil
        }
        guard let peer = resolved else {
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
            try await client.withAssociation(to: peer, proposing: StorableFile.presentationContexts(for: files)) {
                association in
                for file in files {
                    if this.isCancelled {
                        cancelled = true
                        return
                    }
                    let result = try await association.storeSubOperation(
                        file, moveOriginatorAETitle: this.served.callingAETitle, moveOriginatorMessageID: this.messageID
                    )
                    if let code = result.notSentCode {
                        await this.fileNotSent(file, code: code, detail: result.error ?? "\(code)")
                    } else if let error = result.error, result.status == nil {
                        this.logger.info(
                            "C-STORE sub-operation not sent",
                            metadata: ["sop.instance": "\(file.sopInstanceUID)", "error": "\(error)"])
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
            this.logger.info(
                "C-MOVE sub-association failed", metadata: ["qr.destination": "\(destination)", "error": "\(error)"])
            this.failRemaining(files[done...])
            self = this
            try await self.sendFinal(self.retrieveStatus, comment: "sub-association to \(destination): \(error)")
            return
        }
        self = this
        if cancelled || self.isCancelled && self.remaining > 0 {
            try await self.sendFinal(.cancel)
        } else {
            try await self.sendFinal(self.retrieveStatus, comment: self.failureComment)
        }
    }

    /// C-GET SCP (PS3.4 §C.4.3.2, §C.4.3.3): the matches go as C-STORE-RQs on this association, each on a
    /// context for its SOP class where the requestor accepted the SCP role (PS3.7 §D.3.3.4), in the file's own
    /// transfer syntax or else a lossless conversion of it (``StorableFile/sendableTransferSyntaxes``; never a
    /// compressed syntax the file is not in); instances with no such context count as failed. A C-CANCEL-RQ
    /// stops after the sub-operation in progress.
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
            guard let negotiated = self.connection.negotiated,
                let context = file.context(in: negotiated, requestorSends: false)
            else {
                self.logger.info(
                    "C-GET sub-operation: no context with the SCP role for the instance",
                    metadata: ["sop.class": "\(file.sopClassUID)", "transfer.syntax": "\(file.transferSyntaxUID)"])
                self.count(nil, file.sopInstanceUID)
                try await self.sendPending()
                continue
            }
            // Opened and checked before the first byte goes out; the data set is read from this descriptor only.
            let opened: StorableFile.Opened
            do {
                opened = try file.open()
            } catch {
                await self.fileNotSent(file, code: error.code, detail: error.detail)
                self.count(nil, file.sopInstanceUID)
                try await self.sendPending()
                continue
            }
            storeMessageID = storeMessageID == UInt16.max ? 1 : storeMessageID + 1
            do {
                defer { opened.close() }
                let store = CStoreRQ(
                    messageID: storeMessageID, affectedSOPClassUID: file.sopClassUID,
                    affectedSOPInstanceUID: file.sopInstanceUID)
                if file.streamsAsIs(opened, in: context.transferSyntax) {
                    try await self.connection.send(
                        .cStoreRQ(store), presentationContextID: context.id, dataSetOf: opened.descriptor,
                        offset: opened.dataSetOffset, length: opened.size - opened.dataSetOffset, path: file.path,
                        timeout: qr.dimseTimeout)
                } else {
                    let bytes: ByteBuffer
                    do {
                        bytes = try file.dataSetBytes(of: opened, in: context.transferSyntax)
                    } catch {
                        self.logger.info(
                            "C-GET sub-operation: cannot read the instance",
                            metadata: ["file": "\(file.path)", "error": "\(error)"])
                        self.count(nil, file.sopInstanceUID)
                        try await self.sendPending()
                        continue
                    }
                    try await self.connection.send(.cStoreRQ(store), presentationContextID: context.id, dataSet: bytes)
                }
            }
            let (status, cancelSeen) = try await self.waitForStoreResponse(storeMessageID, timeout: qr.dimseTimeout)
            cancelled = cancelled || cancelSeen
            self.count(status, file.sopInstanceUID)
            try await self.sendPending()
        }
        if cancelled && self.remaining > 0 {
            try await self.sendFinal(.cancel)
        } else {
            try await self.sendFinal(self.retrieveStatus, comment: self.failureComment)
        }
    }

    /// A sub-operation's file that was not sent because opening it failed: logged with its reason, named in the
    /// final response's Error Comment, and, when it is no longer the file the provider indexed, reported to the
    /// provider so that its index is brought up to date (bounded by the provider timeout).
    mutating func fileNotSent(_ file: StorableFile, code: DICOMNetworkError.Code, detail: String) async {
        self.logger.warning(
            "sub-operation failed: file not sent",
            metadata: [
                "sop.instance": "\(file.sopInstanceUID)", "file": "\(file.path)", "reason": "\(code)",
                "error": "\(detail)",
            ])
        if self.failureComment == nil { self.failureComment = "\(code): \(file.sopInstanceUID)" }
        guard code == .notTheIndexedFile, let qr = self.configuration.queryRetrieve else { return }
        let provider = qr.provider
        do {
            try await ProviderDeadline.run("index refresh", timeout: qr.providerTimeout) {
                await provider.indexedFileChanged(file)
            }
        } catch {
            self.logger.info("index refresh after a changed file failed", metadata: ["error": "\(error)"])
        }
    }

    /// Reads until the C-STORE-RSP for `messageID`; a C-CANCEL-RQ on the way is noted. Anything else aborts.
    func waitForStoreResponse(_ messageID: UInt16, timeout: TimeAmount) async throws -> (DIMSEStatus, Bool) {
        var cancelSeen = false
        while true {
            let incoming = try await self.connection.nextIncoming(
                timeout: timeout, kind: .dimse, waitingFor: "a C-STORE-RSP")
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
