import DICOMData
import DICOMProtocol
import NIOCore

extension DICOMAssociation {
    /// One C-STORE sub-operation of a C-MOVE (PS3.4 §C.4.2.2): like ``store(_:)-(StorableFile)``, with Move
    /// Originator Application Entity Title (0000,1030) and Move Originator Message ID (0000,1031).
    func storeSubOperation(_ file: StorableFile, moveOriginatorAETitle: String, moveOriginatorMessageID: UInt16) async throws -> StoreResult
    {
        var result = StoreResult(
            path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID, status: nil, error: nil)
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        guard let context = file.context(in: negotiated, requestorSends: true) else {
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
