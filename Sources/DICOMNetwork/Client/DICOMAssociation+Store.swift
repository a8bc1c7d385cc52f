import DICOMData
import DICOMProtocol
import Logging
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension DICOMAssociation {
    /// C-STORE (PS3.4 §B.2) of one Part 10 file.
    ///
    /// The data set is sent as it is in the file when the accepted context has the file's transfer syntax
    /// (byte-identical), and re-encoded otherwise, only to a syntax it converts to without loss (Big Endian,
    /// Deflated or Implicit VR to Explicit VR Little Endian and the like; never a compressed file:
    /// ``StorableFile/sendableTransferSyntaxes`` chooses the context). A file that no accepted
    /// context can carry, or that cannot be read, is reported in the result without sending anything.
    public func store(_ file: StorableFile) async throws -> StoreResult {
        try await self.storeOne(file, moveOriginator: nil)
    }

    /// One C-STORE sub-operation of a C-MOVE (PS3.4 §C.4.2.2): like ``store(_:)-(StorableFile)``, with Move
    /// Originator Application Entity Title (0000,1030) and Move Originator Message ID (0000,1031).
    func storeSubOperation(_ file: StorableFile, moveOriginatorAETitle: String, moveOriginatorMessageID: UInt16)
        async throws
        -> StoreResult
    {
        try await self.storeOne(file, moveOriginator: (moveOriginatorAETitle, moveOriginatorMessageID))
    }

    /// Who asked for a C-STORE sub-operation: Move Originator AE Title and Message ID.
    typealias MoveOriginator = (aeTitle: String, messageID: UInt16)

    private func storeOne(_ file: StorableFile, moveOriginator: MoveOriginator?) async throws -> StoreResult {
        var stored = StoreResult(
            path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID, status: nil, error: nil
        )
        try await self.store([file], moveOriginator: moveOriginator) { _, result in stored = result }
        return stored
    }

    /// C-STORE of several files, each as ``store(_:)-(StorableFile)`` does it, with as many requests
    /// outstanding as the negotiated asynchronous operations window allows (PS3.7 §D.3.3.3): the next data
    /// set goes out while the acceptor is still storing the previous ones, so neither side waits for the
    /// other between files. Responses are matched through Message ID Being Responded To, in whatever order
    /// they come; `onResult` gets each file's index and result as its response arrives (a file not sent
    /// at once). Every wait for a response is bounded by the DIMSE timeout. `onSent` gets each file's index
    /// as its first byte goes out (a caller that outlives an abort knows which files were on the wire).
    public func store(
        _ files: some Collection<StorableFile>, onSent: (Int) async -> Void = { _ in },
        onResult: (Int, StoreResult) async throws -> Void
    ) async throws {
        try await self.store(files, moveOriginator: nil, onSent: onSent, onResult: onResult)
    }

    private func store(
        _ files: some Collection<StorableFile>, moveOriginator: MoveOriginator?, onSent: (Int) async -> Void = { _ in },
        onResult: (Int, StoreResult) async throws -> Void
    ) async throws {
        let window = max(1, self.negotiated?.maximumOutstandingRequests ?? 1)
        var outstanding: [UInt16: (index: Int, result: StoreResult)] = [:]
        outstanding.reserveCapacity(min(window, files.count))
        for (index, file) in files.enumerated() {
            try Task.checkCancellation()
            while outstanding.count >= window {
                try await self.completeStore(&outstanding, onResult: onResult)
            }
            let (messageID, result) = try await self.sendStore(file, moveOriginator: moveOriginator) {
                await onSent(index)
            }
            if let messageID {
                outstanding[messageID] = (index, result)
            } else {
                try await onResult(index, result)
            }
        }
        while !outstanding.isEmpty {
            try await self.completeStore(&outstanding, onResult: onResult)
        }
    }

    /// Sends one C-STORE-RQ and its data set; returns its message ID, or `nil` with the reason in the
    /// result when nothing could be sent.
    private func sendStore(
        _ file: StorableFile, moveOriginator: MoveOriginator?, goingOut: () async -> Void = {}
    ) async throws -> (UInt16?, StoreResult) {
        var result = StoreResult(
            path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID, status: nil, error: nil
        )
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        guard let context = file.context(in: negotiated, requestorSends: true) else {
            result.error = "no accepted presentation context for \(file.sopClassUID) in \(file.transferSyntaxUID)"
            return (nil, result)
        }
        let messageID = self.nextMessageID()
        let request = CStoreRQ(
            messageID: messageID, affectedSOPClassUID: file.sopClassUID, affectedSOPInstanceUID: file.sopInstanceUID,
            moveOriginatorAETitle: moveOriginator?.aeTitle, moveOriginatorMessageID: moveOriginator?.messageID)
        // Opened and checked once, before the first byte goes out; everything sent is read from this descriptor.
        let source: StorableFile.Opened
        do {
            source = try file.open()
        } catch {
            result.error = "\(error)"
            result.notSentCode = error.code
            return (nil, result)
        }
        defer { source.close() }
        if file.streamsAsIs(source, in: context.transferSyntax) {
            // The file's own encoding: its data set goes out byte for byte, streamed from disk.
            await goingOut()
            try await self.connection.send(
                .cStoreRQ(request), presentationContextID: context.id, dataSetOf: source.descriptor,
                offset: source.dataSetOffset,
                length: source.size - source.dataSetOffset, path: file.path, timeout: self.configuration.dimseTimeout)
        } else {
            let dataSet: ByteBuffer
            do {
                dataSet = try file.dataSetBytes(of: source, in: context.transferSyntax)
            } catch {
                result.error = "\(error)"
                return (nil, result)
            }
            await goingOut()
            try await self.connection.send(.cStoreRQ(request), presentationContextID: context.id, dataSet: dataSet)
        }
        return (messageID, result)
    }

    /// Waits for the C-STORE-RSP to one of the `outstanding` requests and reports it.
    private func completeStore(
        _ outstanding: inout [UInt16: (index: Int, result: StoreResult)],
        onResult: (Int, StoreResult) async throws -> Void
    ) async throws {
        let (message, _) = try await self.response(waitingFor: "a C-STORE-RSP") { outstanding[$0] != nil }
        guard case .cStoreRSP(let response) = message,
            var entry = outstanding.removeValue(forKey: response.messageIDBeingRespondedTo)
        else {
            await self.connection.abort(.provider(.unexpectedPDU))
            throw DICOMNetworkError.protocolError("expected a C-STORE-RSP, got \(message.commandField)")
        }
        entry.result.status = response.status
        entry.result.error = response.errorComment
        try await onResult(entry.index, entry.result)
    }

    /// Stores a file by path (see ``store(_:)-(StorableFile)``).
    public func store(path: String) async throws -> StoreResult {
        try await self.store(StorableFile(readingHeaderOf: path))
    }
}
