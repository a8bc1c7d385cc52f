import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import Synchronization

extension ServerAssociationHandler {
    /// Serves an N-ACTION-RQ (PS3.4 §J.3.2, Storage Commitment Push Model SCP): answers it, then sends the
    /// report on this association when the requester took the SCP role (PS3.7 §D.3.3.4); returns the report
    /// when it must go on a new association instead (after this one ends), `nil` otherwise.
    func serveStorageCommitment(
        _ action: NActionRQ, presentationContextID contextID: UInt8, dataSet: ByteBuffer?, served: ServedAssociation
    ) async throws -> StorageCommitment.Report? {
        let connection = self.connection
        let context = connection.negotiated?.context(id: contextID)
        func respond(_ status: DIMSEStatus, _ comment: String? = nil) async throws {
            let response = NActionRSP(
                messageIDBeingRespondedTo: action.messageID, affectedSOPClassUID: action.requestedSOPClassUID,
                affectedSOPInstanceUID: action.requestedSOPInstanceUID,
                actionTypeID: status == .success ? action.actionTypeID : nil, status: status, errorComment: comment)
            try await connection.send(.nActionRSP(response), presentationContextID: contextID, dataSet: nil)
        }
        guard let handler = self.handlers.onStorageCommitment, context?.abstractSyntax == StorageCommitment.sopClassUID,
            action.requestedSOPClassUID == StorageCommitment.sopClassUID
        else {
            connection.logger.info(
                "N-ACTION not served here", metadata: ["sop.class": "\(action.requestedSOPClassUID)"])
            try await respond(.unrecognizedOperation)
            return nil
        }
        guard action.actionTypeID == StorageCommitment.requestActionTypeID else {
            try await respond(DIMSEStatus(code: 0x0123), "no such action type")  // No such action (PS3.7 Annex C)
            return nil
        }
        guard action.requestedSOPInstanceUID == StorageCommitment.sopInstanceUID else {
            try await respond(DIMSEStatus(code: 0x0112), "not the well-known instance")  // No such object instance
            return nil
        }
        let request: StorageCommitment.Request
        do {
            guard let dataSet else { throw DIMSEError.missingDataSet(for: "N-ACTION-RQ") }
            let syntax = TransferSyntax(uid: context?.transferSyntax ?? WellKnownUID.implicitVRLittleEndian)
            request = try StorageCommitment.Request(
                dataSet: try DataSetReader.read(Array(dataSet.readableBytesView), transferSyntax: syntax).dataSet)
        } catch {
            connection.logger.warning("undecodable storage commitment request", metadata: ["error": "\(error)"])
            try await respond(.processingFailure, "undecodable action information")
            return nil
        }
        let report = await handler(request, served)
        try await respond(.success)
        guard context?.requestorIsSCP == true else { return report }
        // The requester takes reports on this association: send it now; the N-EVENT-REPORT-RSP comes back
        // to the serving loop.
        let event = NEventReportRQ(
            messageID: ReportMessageIDs.next(), affectedSOPClassUID: StorageCommitment.sopClassUID,
            affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, eventTypeID: report.eventTypeID)
        let syntax = TransferSyntax(uid: context?.transferSyntax ?? WellKnownUID.implicitVRLittleEndian)
        let bytes = try DataSetWriter.encode(report.dataSet, transferSyntax: syntax)
        try await connection.send(
            .nEventReportRQ(event), presentationContextID: contextID, dataSet: ByteBuffer(bytes: bytes))
        return nil
    }

    /// Receives an N-EVENT-REPORT-RQ with a storage commitment report (PS3.4 §J.3.3) and answers it.
    func receiveStorageCommitmentReport(
        _ event: NEventReportRQ, presentationContextID contextID: UInt8, dataSet: ByteBuffer?, served: ServedAssociation
    ) async throws {
        let connection = self.connection
        let context = connection.negotiated?.context(id: contextID)
        var status = DIMSEStatus.unrecognizedOperation
        if let handler = self.handlers.onStorageCommitmentReport,
            context?.abstractSyntax == StorageCommitment.sopClassUID, let dataSet
        {
            do {
                let syntax = TransferSyntax(uid: context?.transferSyntax ?? WellKnownUID.implicitVRLittleEndian)
                let report = try StorageCommitment.Report(
                    dataSet: try DataSetReader.read(Array(dataSet.readableBytesView), transferSyntax: syntax).dataSet)
                status = await handler(report, served) ? .success : .processingFailure
            } catch {
                connection.logger.warning("undecodable storage commitment report", metadata: ["error": "\(error)"])
                status = .processingFailure
            }
        }
        let response = NEventReportRSP(
            messageIDBeingRespondedTo: event.messageID, affectedSOPClassUID: event.affectedSOPClassUID,
            affectedSOPInstanceUID: event.affectedSOPInstanceUID,
            eventTypeID: status == .success ? event.eventTypeID : nil, status: status)
        try await connection.send(.nEventReportRSP(response), presentationContextID: contextID, dataSet: nil)
    }
}

/// Message IDs of the N-EVENT-REPORT-RQs a server sends on its requesters' associations (PS3.7 §9.1.1.1: unique
/// among this side's outstanding requests): one counter for the process, so two reports on one association never
/// share one.
enum ReportMessageIDs {
    private static let counter = Atomic<UInt16>(0)

    static func next() -> UInt16 {
        let value = counter.wrappingAdd(1, ordering: .relaxed).newValue
        return value == 0 ? counter.wrappingAdd(1, ordering: .relaxed).newValue : value
    }
}
