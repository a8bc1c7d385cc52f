import DICOMData
import DICOMProtocol
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension AssociationConnection {
    /// Serves one incoming C-STORE-RQ whose data set is being streamed: writes it to a temporary Part 10 file
    /// fragment by fragment, hands the complete file to `storage`, and sends the C-STORE-RSP with the
    /// delegate's status (PS3.4 §B.2.3; PS3.7 §9.1.1).
    ///
    /// A file that cannot be written is answered with 0xA700 (Refused: Out of Resources) after the rest of the
    /// data set has been read and dropped.
    ///
    /// - Returns: The status sent.
    func receiveInstance(
        _ request: CStoreRQ,
        presentationContextID: UInt8,
        directory: String,
        storage: any StorageDelegate,
        peerAETitle: String,
        localAETitle: String,
        timeout: TimeAmount?,
        kind: TimeoutSignal.Kind,
        associationID: UInt64 = 0,
        headerLimits: HeaderLimits = HeaderLimits(),
        decodingBudget: DecodingBudget? = nil
    ) async throws -> DIMSEStatus {
        guard let context = self.negotiated?.context(id: presentationContextID) else {
            try await self.handle(.abortRequest(.provider(.unexpectedPDUParameter)))
            self.close()
            throw DICOMNetworkError.protocolError(
                "C-STORE-RQ on presentation context \(presentationContextID), which was not accepted")
        }
        var writer: InstanceFileWriter?
        do {
            writer = try InstanceFileWriter(
                directory: directory,
                request: request,
                transferSyntaxUID: context.transferSyntax,
                sourceAETitle: peerAETitle
            )
        } catch {
            self.logger.info(
                "cannot store instance",
                metadata: ["error": "\(error)", "sop.instance": "\(request.affectedSOPInstanceUID)"])
        }

        var done = false
        while !done {
            let incoming: Incoming
            do {
                incoming = try await self.nextIncoming(timeout: timeout, kind: kind, waitingFor: "the C-STORE data set")
            } catch {
                writer?.discard()
                throw error
            }
            guard case .dimse(.datasetFragment(let fragment, let isLast)) = incoming else {
                writer?.discard()
                try await self.handle(.abortRequest(.provider(.unexpectedPDU)))
                self.close()
                throw DICOMNetworkError.protocolError("expected the C-STORE data set, got \(incoming)")
            }
            writer?.append(fragment)
            done = isLast
        }

        var status = DIMSEStatus.outOfResources
        var comment: String?
        if writer == nil {
            await storage.didFailToStore(
                sopInstanceUID: request.affectedSOPInstanceUID, associationID: associationID,
                reason: "cannot create the temporary file")
        }
        if let writer {
            do {
                try writer.finish()
                var instance = IncomingInstance(
                    path: writer.path,
                    sopClassUID: request.affectedSOPClassUID,
                    sopInstanceUID: request.affectedSOPInstanceUID,
                    transferSyntaxUID: context.transferSyntax,
                    callingAETitle: peerAETitle,
                    calledAETitle: localAETitle,
                    dataSetLength: writer.dataSetLength,
                    fileLength: writer.fileLength,
                    moveOriginatorAETitle: request.moveOriginatorAETitle,
                    associationID: associationID
                )
                instance.filePrefix = writer.prefix
                instance.headerLimits = headerLimits
                instance.decodingBudget = decodingBudget
                status = try await storage.didReceive(instance)
            } catch let error as DICOMNetworkError {
                // The file could not be written completely (disk full, I/O error): the delegate never saw it.
                self.logger.info(
                    "cannot store instance",
                    metadata: ["error": "\(error)", "sop.instance": "\(request.affectedSOPInstanceUID)"])
                await storage.didFailToStore(
                    sopInstanceUID: request.affectedSOPInstanceUID, associationID: associationID, reason: "\(error)")
                unlink(writer.path)
                status = .outOfResources
                comment = "\(error)".prefix(64).description
            } catch {
                self.logger.info(
                    "cannot store instance",
                    metadata: ["error": "\(error)", "sop.instance": "\(request.affectedSOPInstanceUID)"])
                unlink(writer.path)
                status = .outOfResources
                comment = "\(error)".prefix(64).description
            }
        }
        self.logger.debug(
            "C-STORE received",
            metadata: [
                "sop.instance": "\(request.affectedSOPInstanceUID)",
                "dimse.status": "\(status)",
                "bytes": "\(writer?.dataSetLength ?? 0)",
            ]
        )
        let response = CStoreRSP(
            messageIDBeingRespondedTo: request.messageID,
            affectedSOPClassUID: request.affectedSOPClassUID,
            affectedSOPInstanceUID: request.affectedSOPInstanceUID,
            status: status,
            errorComment: comment
        )
        try await self.send(.cStoreRSP(response), presentationContextID: presentationContextID, dataSet: nil)
        return status
    }
}
