import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import Synchronization

extension DICOMAssociation {
    /// Sends a C-FIND-RQ (PS3.4 §C.4.1) and returns its responses as they arrive.
    ///
    /// - Parameters:
    ///   - identifier: The query keys; Query/Retrieve Level is set from `level` when given.
    ///   - model: The information model.
    ///   - level: The query level.
    ///   - limit: After this many matches, a C-CANCEL-RQ is sent (PS3.7 §9.3.2.3); later matches are dropped
    ///     and the sequence ends with the peer's final response, or with ``FindResponses/CancelIgnored`` when
    ///     the peer sends more than `responsesAfterCancel` matches after it.
    ///   - responsesAfterCancel: how many matches a peer may still send after the C-CANCEL (those in flight
    ///     when it arrived) before it is taken to ignore it.
    public func find(
        _ identifier: DataSet,
        model: QueryRetrieveModel,
        level: QueryRetrieveLevel? = nil,
        limit: Int? = nil,
        responsesAfterCancel: Int = FindResponses.defaultResponsesAfterCancel
    ) async throws -> FindResponses {
        var keys = identifier
        if let level {
            keys.set(.queryRetrieveLevel, vr: .CS, string: level.rawValue)
        }
        return try await self.find(
            keys, sopClass: model.findSOPClass, limit: limit, responsesAfterCancel: responsesAfterCancel)
    }

    /// Sends a C-FIND-RQ on the context of any C-FIND SOP class (PS3.4 §C.4.1), e.g. the Modality Worklist
    /// Information Model - FIND (``WellKnownUID/modalityWorklistFind``, PS3.4 Annex K), whose identifier
    /// has no Query/Retrieve Level; `identifier` is sent as it is. `limit` and `responsesAfterCancel` as in
    /// ``find(_:model:level:limit:responsesAfterCancel:)``.
    public func find(
        _ identifier: DataSet, sopClass: String, limit: Int? = nil,
        responsesAfterCancel: Int = FindResponses.defaultResponsesAfterCancel
    ) async throws -> FindResponses {
        let context = try self.context(for: sopClass, "C-FIND")
        let keys = identifier
        let messageID = self.nextMessageID()
        let request = CFindRQ(messageID: messageID, affectedSOPClassUID: sopClass)
        try await self.connection.send(
            .cFindRQ(request), presentationContextID: context.id, dataSet: try self.encode(keys, in: context))
        return FindResponses(
            association: self, messageID: messageID, context: context, limit: limit,
            responsesAfterCancel: responsesAfterCancel)
    }

    /// C-MOVE (PS3.4 §C.4.2): asks the peer to send the matches to `destination`; `progress` sees every
    /// pending response's sub-operation counts.
    public func move(
        _ identifier: DataSet,
        model: QueryRetrieveModel,
        level: QueryRetrieveLevel? = nil,
        destination: String,
        progress: (SubOperationCounts) -> Void = { _ in },
        cancelling: (RetrieveCanceller) -> Void = { _ in }
    ) async throws -> RetrieveResult {
        let context = try self.context(for: model.moveSOPClass, "C-MOVE")
        let messageID = self.nextMessageID()
        let request = CMoveRQ(
            messageID: messageID, affectedSOPClassUID: model.moveSOPClass, moveDestination: destination)
        try await self.connection.send(
            .cMoveRQ(request), presentationContextID: context.id,
            dataSet: try self.encode(Self.keys(identifier, level), in: context))
        let canceller = try self.canceller(messageID, on: context)
        defer { canceller.disarm() }
        cancelling(canceller)
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
        progress: (SubOperationCounts) -> Void = { _ in },
        cancelling: (RetrieveCanceller) -> Void = { _ in }
    ) async throws -> RetrieveResult {
        let context = try self.context(for: model.getSOPClass, "C-GET")
        let messageID = self.nextMessageID()
        let request = CGetRQ(messageID: messageID, affectedSOPClassUID: model.getSOPClass)
        try await self.connection.send(
            .cGetRQ(request), presentationContextID: context.id,
            dataSet: try self.encode(Self.keys(identifier, level), in: context))
        let canceller = try self.canceller(messageID, on: context)
        defer { canceller.disarm() }
        cancelling(canceller)
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

    /// The canceller of the request `messageID`: its C-CANCEL-RQ encoded now, for one P-DATA-TF.
    private func canceller(_ messageID: UInt16, on context: NegotiatedAssociation.Context) throws -> RetrieveCanceller {
        let connection = self.connection
        let command = DIMSEMessage.cCancelRQ(CCancelRQ(messageIDBeingRespondedTo: messageID)).commandSet.encoded(
            allocator: connection.channel.allocator)
        let fragments = try PDataFragmenter(
            presentationContextID: context.id, command: command, dataset: nil,
            peerMaximumPDULength: connection.negotiated?.peerMaximumPDULength ?? 0)
        return RetrieveCanceller(channel: connection.channel, pdus: fragments.map { PDU.dataTF($0) })
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
///
/// A response that names another SOP class than the request's (its Affected SOP Class UID, PS3.7 §9.1.2.1:
/// the response's equals the request's) is a protocol error: a Modality Worklist query never takes a
/// Query/Retrieve match for a worklist item.
public struct FindResponses: AsyncSequence {
    public typealias Element = FindResponse

    /// The peer sent more matches after the C-CANCEL-RQ than it could have had in flight: it ignores the
    /// cancel (PS3.7 §9.3.2.3 asks it to stop), and reading on would take whatever it sends. The caller aborts
    /// the association.
    public struct CancelIgnored: Error, CustomStringConvertible {
        /// The matches that came after the C-CANCEL-RQ.
        public var responsesAfterCancel: Int
        public var description: String {
            "the peer sent \(responsesAfterCancel) more matches after the C-CANCEL-RQ: it ignores C-CANCEL"
        }
    }

    /// A C-FIND-RSP named another SOP class than its request's. The caller aborts the association.
    public struct ForeignSOPClass: Error, CustomStringConvertible {
        public var asked: String
        public var answered: String
        public var description: String {
            "a C-FIND-RSP of SOP class \(answered) answered a C-FIND-RQ of SOP class \(asked)"
        }
    }

    /// Matches a peer may still send after a C-CANCEL-RQ: those already on their way when it arrived.
    public static let defaultResponsesAfterCancel = 1000

    let association: DICOMAssociation
    let messageID: UInt16
    let context: NegotiatedAssociation.Context
    let limit: Int?
    let responsesAfterCancel: Int

    public func makeAsyncIterator() -> Iterator {
        Iterator(sequence: self)
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: FindResponses
        private var matches = 0
        private var afterCancel = 0
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
                let asked = self.sequence.context.abstractSyntax
                if let answered = response.affectedSOPClassUID, !answered.isEmpty, answered != asked {
                    throw ForeignSOPClass(asked: asked, answered: answered)
                }
                guard response.status.isPending else {
                    self.finished = true
                    return FindResponse(status: response.status, identifier: nil, errorComment: response.errorComment)
                }
                if let limit = self.sequence.limit, self.matches >= limit {
                    // Past the limit: the C-CANCEL is on its way, or the peer ignores it.
                    self.afterCancel += 1
                    if self.afterCancel > self.sequence.responsesAfterCancel {
                        throw CancelIgnored(responsesAfterCancel: self.afterCancel)
                    }
                    continue
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

/// Cancels one C-MOVE or C-GET in progress from any task (PS3.7 §9.3.2.3, §9.3.3.3): ``cancel()`` sends its
/// C-CANCEL-RQ while the task that holds the association goes on reading the responses, the last of which
/// has status Cancel (0xFE00) and the sub-operation counts so far. Handed out by
/// ``DICOMAssociation/move(_:model:level:destination:progress:cancelling:)`` and
/// ``DICOMAssociation/get(_:model:level:storage:directory:progress:cancelling:)``; disarmed when the final response
/// has come (or the request failed), so a late ``cancel()`` sends nothing.
///
/// The P-DATA-TF goes straight to the channel: in Sta6 a P-DATA request changes no state (DT-1, PS3.8 §9.2), and
/// the channel's writes are ordered on its event loop, so it never lands after the A-RELEASE-RQ that follows the
/// final response (``disarm()`` comes first, under the same lock).
public final class RetrieveCanceller: Sendable {
    private let armed = Mutex(true)
    private let channel: any Channel
    private let pdus: [PDU]

    init(channel: any Channel, pdus: [PDU]) {
        self.channel = channel
        self.pdus = pdus
    }

    /// Sends the C-CANCEL-RQ, once, if the request is still waiting for its final response.
    /// - Returns: whether it was sent now.
    @discardableResult
    public func cancel() -> Bool {
        armed.withLock { armed in
            guard armed else { return false }
            armed = false
            for pdu in pdus { channel.write(pdu, promise: nil) }
            channel.flush()
            return true
        }
    }

    func disarm() {
        armed.withLock { $0 = false }
    }
}
