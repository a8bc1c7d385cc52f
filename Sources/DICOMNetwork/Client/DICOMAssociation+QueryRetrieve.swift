import DICOMData
import DICOMProtocol
import Logging
import NIOCore

extension DICOMAssociation {
    /// Sends a C-FIND-RQ (PS3.4 §C.4.1) and returns its responses as they arrive.
    ///
    /// - Parameters:
    ///   - identifier: The query keys; Query/Retrieve Level is set from `level` when given.
    ///   - model: The information model.
    ///   - level: The query level.
    ///   - limit: After this many matches, a C-CANCEL-RQ is sent (PS3.7 §9.3.2.3); later matches are dropped
    ///     and the sequence ends with the peer's final response.
    public func find(
        _ identifier: DataSet,
        model: QueryRetrieveModel,
        level: QueryRetrieveLevel? = nil,
        limit: Int? = nil
    ) async throws -> FindResponses {
        var keys = identifier
        if let level {
            keys.set(.queryRetrieveLevel, vr: .CS, string: level.rawValue)
        }
        return try await self.find(keys, sopClass: model.findSOPClass, limit: limit)
    }

    /// Sends a C-FIND-RQ on the context of any C-FIND SOP class (PS3.4 §C.4.1), e.g. the Modality Worklist
    /// Information Model - FIND (``WellKnownUID/modalityWorklistFind``, PS3.4 Annex K), whose identifier
    /// has no Query/Retrieve Level; `identifier` is sent as it is. `limit` as in
    /// ``find(_:model:level:limit:)``.
    public func find(_ identifier: DataSet, sopClass: String, limit: Int? = nil) async throws -> FindResponses {
        let context = try self.context(for: sopClass, "C-FIND")
        let keys = identifier
        let messageID = self.nextMessageID()
        let request = CFindRQ(messageID: messageID, affectedSOPClassUID: sopClass)
        try await self.connection.send(
            .cFindRQ(request), presentationContextID: context.id, dataSet: try self.encode(keys, in: context))
        return FindResponses(association: self, messageID: messageID, context: context, limit: limit)
    }

    /// C-MOVE (PS3.4 §C.4.2): asks the peer to send the matches to `destination`; `progress` sees every
    /// pending response's sub-operation counts.
    public func move(
        _ identifier: DataSet,
        model: QueryRetrieveModel,
        level: QueryRetrieveLevel? = nil,
        destination: String,
        progress: (SubOperationCounts) -> Void = { _ in }
    ) async throws -> RetrieveResult {
        let context = try self.context(for: model.moveSOPClass, "C-MOVE")
        let messageID = self.nextMessageID()
        let request = CMoveRQ(
            messageID: messageID, affectedSOPClassUID: model.moveSOPClass, moveDestination: destination)
        try await self.connection.send(
            .cMoveRQ(request), presentationContextID: context.id,
            dataSet: try self.encode(Self.keys(identifier, level), in: context))
        while true {
            let (message, dataSet) = try await self.response(to: messageID, waitingFor: "a C-MOVE-RSP")
            guard case .cMoveRSP(let response) = message else {
                throw DICOMNetworkError.protocolError("expected a C-MOVE-RSP, got \(message.commandField)")
            }
            if response.status.isPending {
                progress(response.subOperations)
                continue
            }
            return try self.result(response.status, response.subOperations, response.errorComment, dataSet, context)
        }
    }

    /// C-GET (PS3.4 §C.4.3): the matches arrive as C-STORE sub-operations on this association, are written
    /// to `directory` and handed to `storage` like ``DICOMServer`` does. Propose
    /// ``ProposedPresentationContext/get(_:storageSOPClasses:transferSyntaxes:)`` for it.
    public func get(
        _ identifier: DataSet,
        model: QueryRetrieveModel,
        level: QueryRetrieveLevel? = nil,
        storage: any StorageDelegate,
        directory: String,
        progress: (SubOperationCounts) -> Void = { _ in }
    ) async throws -> RetrieveResult {
        let context = try self.context(for: model.getSOPClass, "C-GET")
        let messageID = self.nextMessageID()
        let request = CGetRQ(messageID: messageID, affectedSOPClassUID: model.getSOPClass)
        try await self.connection.send(
            .cGetRQ(request), presentationContextID: context.id,
            dataSet: try self.encode(Self.keys(identifier, level), in: context))
        let incoming = IncomingStorage(directory: directory, storage: storage)
        while true {
            let (message, dataSet) = try await self.response(
                to: messageID, waitingFor: "a C-GET-RSP", storage: incoming)
            guard case .cGetRSP(let response) = message else {
                throw DICOMNetworkError.protocolError("expected a C-GET-RSP, got \(message.commandField)")
            }
            if response.status.isPending {
                progress(response.subOperations)
                continue
            }
            return try self.result(response.status, response.subOperations, response.errorComment, dataSet, context)
        }
    }

    private static func keys(_ identifier: DataSet, _ level: QueryRetrieveLevel?) -> DataSet {
        var keys = identifier
        if let level {
            keys.set(.queryRetrieveLevel, vr: .CS, string: level.rawValue)
        }
        return keys
    }

    private func result(
        _ status: DIMSEStatus,
        _ counts: SubOperationCounts,
        _ comment: String?,
        _ dataSet: ByteBuffer?,
        _ context: NegotiatedAssociation.Context
    ) throws -> RetrieveResult {
        var failed: [String] = []
        if let dataSet {
            failed = try self.decode(dataSet, in: context).strings(Tag(0x0008, 0x0058)) ?? []
        }
        return RetrieveResult(
            status: status, subOperations: counts, errorComment: comment, failedSOPInstanceUIDs: failed)
    }

    /// Sends one C-CANCEL-RQ (PS3.7 §9.3.2.3).
    func cancel(_ messageID: UInt16, on context: NegotiatedAssociation.Context) async throws {
        try await self.connection.send(
            .cCancelRQ(CCancelRQ(messageIDBeingRespondedTo: messageID)), presentationContextID: context.id, dataSet: nil
        )
    }
}

/// The responses of one C-FIND, read from the association as the sequence is iterated: every pending
/// match, then the final response (PS3.4 §C.4.1.1.4).
public struct FindResponses: AsyncSequence {
    public typealias Element = FindResponse

    let association: DICOMAssociation
    let messageID: UInt16
    let context: NegotiatedAssociation.Context
    let limit: Int?

    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: FindResponses
        private var matches = 0
        private var cancelled = false
        private var finished = false

        init(sequence: FindResponses) {
            self.sequence = sequence
        }

        public mutating func next() async throws -> FindResponse? {
            guard !self.finished else { return nil }
            let association = self.sequence.association
            while true {
                let (message, dataSet) = try await association.response(
                    to: self.sequence.messageID, waitingFor: "a C-FIND-RSP")
                guard case .cFindRSP(let response) = message else {
                    throw DICOMNetworkError.protocolError("expected a C-FIND-RSP, got \(message.commandField)")
                }
                guard response.status.isPending else {
                    self.finished = true
                    return FindResponse(status: response.status, identifier: nil, errorComment: response.errorComment)
                }
                if let limit = self.sequence.limit, self.matches >= limit {
                    continue  // Past the limit: the C-CANCEL is on its way.
                }
                self.matches += 1
                let identifier = try dataSet.map { try association.decode($0, in: self.sequence.context) }
                if let limit = self.sequence.limit, self.matches >= limit, !self.cancelled {
                    self.cancelled = true
                    try await association.cancel(self.sequence.messageID, on: self.sequence.context)
                }
                return FindResponse(
                    status: response.status, identifier: identifier, errorComment: response.errorComment)
            }
        }
    }

    public typealias Iterator = AsyncIterator
}
