import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import Synchronization

/// The acceptor side of one association: negotiation (PS3.8 §9.3.3, §9.3.4), then C-ECHO and C-STORE
/// requests (PS3.7 §9.1.5, §9.1.1) until release or abort.
struct ServerAssociationHandler {
    let connection: AssociationConnection
    let configuration: DICOMServer.Configuration
    let handlers: DICOMServer.Handlers
    let counter: ActiveAssociationCounter

    func run() async throws {
        let connection = self.connection
        try await connection.handle(.transportConnectionIndication)  // AE-5: ARTIM runs until the RQ arrives.

        var indication: AssociationStateMachine.Indication?
        while indication == nil {
            // Bounded by the ARTIM that AE-5 started.
            indication = try await connection.receive(timeout: nil, kind: .acse, waitingFor: "an A-ASSOCIATE-RQ")
            if connection.state == .sta1 || connection.state == .sta13 {
                // The peer sent something other than an A-ASSOCIATE-RQ (AA-1) or an unsupported protocol version.
                if let (request, rejection) = connection.rejectedByProtocol {
                    connection.logger.warning("association rejected", metadata: ["dul.rejection": "\(rejection)"])
                    await self.reportRejection(request, rejection)
                }
                try await connection.drainUntilClosed()
                return
            }
        }
        guard case .associateRequest(let request)? = indication else {
            connection.close()
            return
        }
        connection.logger[metadataKey: "peer.aet"] = "\(request.callingAETitle)"

        guard self.counter.acquire(limit: self.configuration.maximumAssociations) else {
            connection.logger.warning("association rejected: too many associations")
            let rejection = AssociateRJ(
                result: .rejectedTransient, source: .serviceProviderPresentation, reason: .localLimitExceeded)
            await self.reportRejection(request, rejection)
            try await connection.handle(.associateRejectResponse(rejection))
            try await connection.drainUntilClosed()
            return
        }
        defer { self.counter.release() }

        switch self.configuration.policy.evaluate(request) {
        case .reject(let rejection):
            connection.logger.warning("association rejected", metadata: ["dul.rejection": "\(rejection)"])
            await self.reportRejection(request, rejection)
            try await connection.handle(.associateRejectResponse(rejection))
            try await connection.drainUntilClosed()
            return
        case .accept(var accept, var negotiated):
            let identity = request.userInformation.userIdentityRequest
            if let check = self.handlers.checkUserIdentity {
                guard await check(identity) else {
                    // PS3.7 §D.3.3.7: an acceptor that requires an identity and does not verify it rejects.
                    let rejection = AssociateRJ(
                        result: .rejectedPermanent, source: .serviceUser, reason: .noReasonGiven)
                    connection.logger.warning(
                        "association rejected: user identity not accepted",
                        metadata: ["identity.type": "\(identity.map { "\($0.identityType.rawValue)" } ?? "none")"])
                    await self.reportRejection(request, rejection)
                    try await connection.handle(.associateRejectResponse(rejection))
                    try await connection.drainUntilClosed()
                    return
                }
                if identity?.positiveResponseRequested == true {
                    accept.userInformation.userIdentityResponse = UserIdentityAC()
                    negotiated.acceptorUserInformation = accept.userInformation
                }
            }
            connection.negotiated = negotiated
            try await connection.handle(.associateAcceptResponse(accept))
            connection.logger.debug(
                "association accepted",
                metadata: [
                    "dul.contexts": "\(negotiated.acceptedContexts.count)",
                    "peer.maxPDU": "\(negotiated.peerMaximumPDULength)",
                ]
            )
        }
        let served = ServedAssociation(
            id: ServedAssociationIDs.next(),
            peerHost: connection.channel.remoteAddress?.ipAddress,
            callingAETitle: request.callingAETitle,
            calledAETitle: request.calledAETitle,
            userIdentity: self.handlers.checkUserIdentity == nil
                ? nil : request.userInformation.userIdentityRequest.map(ServedAssociation.PresentedIdentity.init),
            acceptedPresentationContexts: connection.negotiated?.acceptedContexts.count ?? 0
        )
        connection.logger[metadataKey: "association"] = "\(served.id)"
        if served.acceptedPresentationContexts == 0 {
            connection.logger.warning(
                "association accepted with no presentation context: none proposed is served",
                metadata: ["dul.proposed": "\(request.presentationContexts.map(\.abstractSyntax))"])
        }
        await self.handlers.onAssociationAccepted?(served)
        var undelivered: [StorageCommitment.Report] = []
        do {
            try await self.serveDIMSE(served, undelivered: &undelivered)
        } catch {
            await self.handlers.onAssociationClosed?(served, true)
            await self.deliver(undelivered, to: served)
            throw error
        }
        await self.handlers.onAssociationClosed?(served, connection.state != .sta1)
        await self.deliver(undelivered, to: served)
    }

    /// Hands the storage commitment reports that could not go on the requester's association to
    /// ``DICOMServer/Handlers/deliverStorageCommitmentReport`` (PS3.4 §J.3.3: a new association).
    private func deliver(_ reports: [StorageCommitment.Report], to served: ServedAssociation) async {
        for report in reports {
            if let deliver = self.handlers.deliverStorageCommitmentReport {
                await deliver(report, served)
            } else {
                self.connection.logger.warning(
                    "storage commitment report not delivered: no way to reach the requester",
                    metadata: ["transaction": "\(report.transactionUID)"])
            }
        }
    }

    /// Tells ``DICOMServer/Handlers/onAssociationRejected`` of a refused association.
    private func reportRejection(_ request: AssociateRQ, _ rejection: AssociateRJ) async {
        await self.handlers.onAssociationRejected?(
            RejectedAssociation(
                peerHost: self.connection.channel.remoteAddress?.ipAddress, callingAETitle: request.callingAETitle,
                calledAETitle: request.calledAETitle, rejection: rejection))
    }

    /// Serves requests until the peer releases (A-RELEASE) or the association ends otherwise.
    private func serveDIMSE(_ served: ServedAssociation, undelivered: inout [StorageCommitment.Report]) async throws {
        let connection = self.connection
        while true {
            // The idle timer in the pipeline bounds every wait.
            let incoming = try await connection.nextIncoming(timeout: nil, kind: .idle, waitingFor: "a DIMSE request")
            switch incoming {
            case .releaseRequested:
                connection.logger.debug("association released by the peer")
                try await connection.respondToRelease()
                return

            case .dimse(.message(.cEchoRQ(let echo), let context, _)):
                let response = CEchoRSP(
                    messageIDBeingRespondedTo: echo.messageID,
                    affectedSOPClassUID: echo.affectedSOPClassUID,
                    status: .success
                )
                try await connection.send(.cEchoRSP(response), presentationContextID: context, dataSet: nil)

            case .dimse(.streamStarted(.cStoreRQ(let store), let context)):
                _ = try await connection.receiveInstance(
                    store,
                    presentationContextID: context,
                    directory: self.configuration.temporaryDirectory,
                    storage: HandlerStorage(handlers: self.handlers),
                    peerAETitle: served.callingAETitle,
                    localAETitle: served.calledAETitle,
                    timeout: nil,
                    kind: .idle,
                    associationID: served.id,
                    headerLimits: self.configuration.headerLimits,
                    decodingBudget: self.configuration.decodingBudget
                )

            case .dimse(.message(let message, let context, let dataSet)) where message.isQueryRetrieveRequest:
                try await self.serveQueryRetrieve(
                    message, presentationContextID: context, dataSet: dataSet, served: served)

            case .dimse(.message(.nActionRQ(let action), let context, let dataSet)):
                if let report = try await self.serveStorageCommitment(
                    action, presentationContextID: context, dataSet: dataSet, served: served)
                {
                    undelivered.append(report)
                }

            case .dimse(.message(.nEventReportRQ(let event), let context, let dataSet)):
                try await self.receiveStorageCommitmentReport(
                    event, presentationContextID: context, dataSet: dataSet, served: served)

            case .dimse(.message(.nEventReportRSP(let response), _, _)):
                // The answer to a report sent on this association (serveStorageCommitment).
                connection.logger.debug(
                    "storage commitment report answered", metadata: ["dimse.status": "\(response.status)"])

            case .dimse(.message(let request, let context, _)) where request.unrecognizedOperationResponse != nil:
                // A request this server does not perform (a DIMSE-N request, an unknown Command Field): a failure
                // response, 0x0211 Unrecognized Operation (PS3.7 Annex C), and the association goes on.
                connection.logger.info(
                    "unrecognized DIMSE request", metadata: ["dimse.command": "\(request.commandField)"])
                if let response = request.unrecognizedOperationResponse {
                    try await connection.send(response, presentationContextID: context, dataSet: nil)
                }

            case .dimse(.message(.cCancelRQ, _, _)):
                // Nothing is in progress that could be cancelled (PS3.7 §9.3.2.3 allows ignoring it).
                continue

            case .dimse(let event):
                // A response, or a request of a known kind in a shape PS3.7 does not allow (a C-STORE-RQ without
                // a data set): the peer broke the protocol.
                connection.logger.info("unexpected DIMSE message; aborting", metadata: ["dimse.event": "\(event)"])
                try await connection.handle(.abortRequest(.provider(.unexpectedPDUParameter)))
                connection.close()
                return
            }
        }
    }
}

/// Process-wide association numbers for ``ServedAssociation/id``.
enum ServedAssociationIDs {
    private static let counter = Atomic<UInt64>(0)

    static func next() -> UInt64 {
        counter.add(1, ordering: .relaxed).newValue
    }
}
