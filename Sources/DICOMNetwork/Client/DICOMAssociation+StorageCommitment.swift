import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import Synchronization

extension ProposedPresentationContext {
    /// The Storage Commitment Push Model context (PS3.4 §J.3) in Implicit and Explicit VR Little Endian, this side
    /// proposing both the SCU role (it sends the N-ACTION) and the SCP role (PS3.7 §D.3.3.4), so that an
    /// acceptor that wants to may send the N-EVENT-REPORT on the same association.
    public static var storageCommitmentRequester: ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: StorageCommitment.sopClassUID,
            transferSyntaxes: [WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian],
            roleProposal: .init(scu: true, scp: true))
    }

    /// The Storage Commitment Push Model context for an association that only brings an N-EVENT-REPORT
    /// (PS3.4 §J.3.3: the SCP that opens it proposes no role selection, the default roles serve).
    public static var storageCommitmentReporter: ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: StorageCommitment.sopClassUID,
            transferSyntaxes: [WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian])
    }
}

extension DICOMAssociation {
    /// Whether the acceptor granted this side the SCP role for the Storage Commitment Push Model (PS3.7
    /// §D.3.3.4): then it may send the N-EVENT-REPORT on this association.
    public var acceptsStorageCommitmentReports: Bool {
        self.connection.negotiated?.context(abstractSyntax: StorageCommitment.sopClassUID)?.requestorIsSCP == true
    }

    /// N-ACTION-RQ Request Storage Commitment (PS3.4 §J.3.2): returns the N-ACTION-RSP's status.
    ///
    /// - Throws: ``DICOMNetworkError`` when the acceptor did not accept the Storage Commitment Push Model
    ///   context, for timeouts and protocol errors.
    public func requestStorageCommitment(_ request: StorageCommitment.Request) async throws -> DIMSEStatus {
        let context = try self.context(for: StorageCommitment.sopClassUID, "N-ACTION (storage commitment)")
        let messageID = self.nextMessageID()
        let action = NActionRQ(
            messageID: messageID, requestedSOPClassUID: StorageCommitment.sopClassUID,
            requestedSOPInstanceUID: StorageCommitment.sopInstanceUID,
            actionTypeID: StorageCommitment.requestActionTypeID)
        try await self.connection.send(
            .nActionRQ(action), presentationContextID: context.id,
            dataSet: try self.encode(request.dataSet, in: context))
        let (message, _) = try await self.response(to: messageID, waitingFor: "an N-ACTION-RSP")
        guard case .nActionRSP(let response) = message else {
            throw DICOMNetworkError.protocolError("expected an N-ACTION-RSP, got \(message.commandField)")
        }
        return response.status
    }

    /// Waits on this association for the N-EVENT-REPORT-RQ of `transactionUID` (PS3.4 §J.3.3), answers it with
    /// success, and returns the report. A report of another transaction is answered 0x0110 (processing failure)
    /// and waiting goes on.
    ///
    /// A report `mailbox` receives meanwhile (on another association) ends the wait: the association is then
    /// closed and that report returned.
    ///
    /// - Throws: ``DICOMNetworkError`` with a DIMSE timeout when nothing came within `timeout` (the association
    ///   is then aborted), or when the peer releases or aborts first.
    public func storageCommitmentReport(
        transactionUID: String, timeout: TimeAmount, mailbox: StorageCommitmentMailbox? = nil
    ) async throws -> StorageCommitment.Report {
        if let report = mailbox?.delivered { return report }
        // A report on another association ends the wait at once, as its timeout would: this side gives up the
        // association with an A-ABORT (AssociationConnection.receive), then returns that report.
        let channel = self.connection.channel
        mailbox?.setInterrupt {
            channel.triggerUserOutboundEvent(ReadDeadlineHandler.Command.arm(.zero, .dimse), promise: nil)
        }
        defer { mailbox?.setInterrupt(nil) }
        if let report = mailbox?.delivered { return report }  // delivered before the interrupt was set
        do {
            return try await self.awaitReport(transactionUID: transactionUID, timeout: timeout, mailbox: mailbox)
        } catch {
            if let report = mailbox?.delivered { return report }
            throw error
        }
    }

    private func awaitReport(transactionUID: String, timeout: TimeAmount, mailbox: StorageCommitmentMailbox?)
        async throws -> StorageCommitment.Report
    {
        let connection = self.connection
        let deadline = NIODeadline.now() + timeout
        while true {
            if let report = mailbox?.delivered {
                // Came elsewhere while this side was busy here (the interrupt finds no wait to end then).
                await connection.abort()
                return report
            }
            let left = deadline - .now()
            let incoming = try await connection.nextIncoming(
                timeout: max(left, .milliseconds(1)), kind: .dimse, waitingFor: "the storage commitment N-EVENT-REPORT")
            switch incoming {
            case .dimse(.message(.nEventReportRQ(let event), let contextID, let dataSet)):
                let context = connection.negotiated?.context(id: contextID)
                var report: StorageCommitment.Report?
                var status = DIMSEStatus.success
                if context?.abstractSyntax != StorageCommitment.sopClassUID || dataSet == nil {
                    status = .processingFailure
                } else if let dataSet {
                    do {
                        report = try StorageCommitment.Report(dataSet: try self.decode(dataSet, in: context))
                    } catch {
                        self.logger.warning("undecodable storage commitment report", metadata: ["error": "\(error)"])
                        status = .processingFailure
                    }
                }
                if let found = report, found.transactionUID != transactionUID {
                    self.logger.warning(
                        "storage commitment report of another transaction",
                        metadata: ["transaction": "\(found.transactionUID)"])
                    report = nil
                    status = .processingFailure
                }
                let response = NEventReportRSP(
                    messageIDBeingRespondedTo: event.messageID, affectedSOPClassUID: event.affectedSOPClassUID,
                    affectedSOPInstanceUID: event.affectedSOPInstanceUID, eventTypeID: event.eventTypeID,
                    status: status)
                try await connection.send(.nEventReportRSP(response), presentationContextID: contextID, dataSet: nil)
                if let report { return report }
            case .dimse(.message(let message, let context, _)) where message.unrecognizedOperationResponse != nil:
                if let response = message.unrecognizedOperationResponse {
                    try await connection.send(response, presentationContextID: context, dataSet: nil)
                }
            case .dimse(.message(let message, _, _)) where message.messageIDBeingRespondedTo != nil:
                // A late response to an earlier request: nothing waits for it any more.
                self.logger.debug(
                    "dropping a response while waiting for the report",
                    metadata: ["dimse.command": "\(message.commandField)"])
            case .dimse(let event):
                await connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError(
                    "unexpected \(event) while waiting for the storage commitment report")
            case .releaseRequested:
                try await connection.respondToRelease()
                throw DICOMNetworkError.connectionClosed(
                    "the peer released the association before sending the storage commitment report")
            }
        }
    }

    /// Sends an N-EVENT-REPORT-RQ with a storage commitment report (PS3.4 §J.3.3) and returns the
    /// N-EVENT-REPORT-RSP's status: the SCP's side, on an association it opened to the requester.
    public func reportStorageCommitment(_ report: StorageCommitment.Report) async throws -> DIMSEStatus {
        let context = try self.context(for: StorageCommitment.sopClassUID, "N-EVENT-REPORT (storage commitment)")
        let messageID = self.nextMessageID()
        let event = NEventReportRQ(
            messageID: messageID, affectedSOPClassUID: StorageCommitment.sopClassUID,
            affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, eventTypeID: report.eventTypeID)
        try await self.connection.send(
            .nEventReportRQ(event), presentationContextID: context.id,
            dataSet: try self.encode(report.dataSet, in: context))
        let (message, _) = try await self.response(to: messageID, waitingFor: "an N-EVENT-REPORT-RSP")
        guard case .nEventReportRSP(let response) = message else {
            throw DICOMNetworkError.protocolError("expected an N-EVENT-REPORT-RSP, got \(message.commandField)")
        }
        return response.status
    }
}

/// Where storage commitment reports that arrive on other associations are handed over (PS3.4 §J.3.3: the SCP
/// may open a new association to send the N-EVENT-REPORT): the requester's listener delivers every report
/// here, and the one waiting takes the one of its transaction. Reports of other transactions are refused.
public final class StorageCommitmentMailbox: Sendable {
    /// The transaction waited for.
    public let transactionUID: String
    private struct State {
        var report: StorageCommitment.Report?
        var interrupt: (@Sendable () -> Void)?
    }
    private let state = Mutex(State())
    private let stream: AsyncStream<StorageCommitment.Report>
    private let continuation: AsyncStream<StorageCommitment.Report>.Continuation

    public init(transactionUID: String) {
        self.transactionUID = transactionUID
        (self.stream, self.continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// Hands a report over; `false` (and nothing kept) when it is of another transaction or one was already
    /// delivered.
    public func deliver(_ report: StorageCommitment.Report) -> Bool {
        guard report.transactionUID == self.transactionUID else { return false }
        let interrupt: (@Sendable () -> Void)?? = self.state.withLock { state in
            guard state.report == nil else { return nil }
            state.report = report
            return .some(state.interrupt)
        }
        guard let interrupt else { return false }
        self.continuation.yield(report)
        interrupt?()
        return true
    }

    /// The report delivered, if one was.
    public var delivered: StorageCommitment.Report? { self.state.withLock { $0.report } }

    /// What to do when a report is delivered while the requester waits on its own association: stop that wait.
    func setInterrupt(_ interrupt: (@Sendable () -> Void)?) {
        self.state.withLock { $0.interrupt = interrupt }
    }

    /// The report, or `nil` when none came within `timeout`. Waited on once.
    public func wait(timeout: Duration) async -> StorageCommitment.Report? {
        if let report = self.delivered { return report }
        let stream = self.stream
        return await withTaskGroup(of: StorageCommitment.Report?.self) { group in
            group.addTask {
                for await report in stream { return report }
                return nil
            }
            group.addTask {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    // Cancelled: the report came first.
                }
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
