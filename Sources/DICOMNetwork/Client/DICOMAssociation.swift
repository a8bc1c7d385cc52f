import DICOMData
import DICOMProtocol
import Logging
import NIOCore

/// An established association on the requestor side, handed to the body of
/// ``DICOMClient/withAssociation(to:proposing:_:)`` (PS3.8 §7.1, PS3.7 §9).
///
/// Operations are synchronous (one outstanding request), except C-STORE of several files, which keeps as
/// many requests outstanding as the negotiated asynchronous operations window allows; each response is
/// matched to its request through Message ID Being Responded To, and every wait is bounded by the DIMSE
/// timeout. Use it from the task that runs the body only.
public final class DICOMAssociation {
    let connection: AssociationConnection
    let configuration: DICOMClient.Configuration
    /// The acceptor.
    public let peer: DICOMPeer
    private var lastMessageID: UInt16

    init(connection: AssociationConnection, configuration: DICOMClient.Configuration, peer: DICOMPeer) {
        self.connection = connection
        self.configuration = configuration
        self.peer = peer
        self.lastMessageID = 0
    }

    /// The negotiated presentation contexts, roles and maximum lengths.
    public var negotiated: NegotiatedAssociation? { self.connection.negotiated }

    /// The acceptor's User Identity sub-item (0x59, PS3.7 §D.3.3.7.2): sent only when the request asked for a
    /// positive response and the acceptor verified the identity; `nil` otherwise.
    public var userIdentityResponse: UserIdentityAC? {
        self.connection.negotiated?.acceptorUserInformation.userIdentityResponse
    }

    /// Whether the association is established (Sta6).
    public var isEstablished: Bool { self.connection.state == .sta6 }

    var logger: Logger { self.connection.logger }

    // MARK: - Establishment and release

    /// AE-1 to AE-3: sends the A-ASSOCIATE-RQ and waits for the AC or RJ (PS3.8 §9.2).
    func open(_ request: AssociateRQ) async throws {
        let connection = self.connection
        try await connection.handle(.associateRequest(request))  // AE-1: the transport is already open.
        try await connection.handle(.transportConnectConfirmation)  // AE-2: send the RQ.
        while true {
            let indication = try await connection.receive(
                timeout: self.configuration.acseTimeout, kind: .acse, waitingFor: "an A-ASSOCIATE-AC")
            switch indication {
            case .associateAccepted(let accept)?:
                let negotiated: NegotiatedAssociation
                do {
                    negotiated = try NegotiatedAssociation(request: request, accept: accept, localRole: .requestor)
                } catch {
                    await connection.abort(.provider(.invalidPDUParameterValue))
                    throw DICOMNetworkError.protocolError("invalid A-ASSOCIATE-AC: \(error)")
                }
                connection.negotiated = negotiated
                self.logger.debug(
                    "association accepted", metadata: ["dul.contexts": "\(negotiated.acceptedContexts.count)"])
                return
            case .associateRejected(let rejection)?:
                throw DICOMNetworkError.associationRejected(rejection)
            case .aborted(let abort)?:
                throw DICOMNetworkError.aborted(by: abort)
            case .providerAborted(let cause)?:
                throw DICOMNetworkError.protocolError("association aborted by the upper layer provider: \(cause)")
            case nil:
                continue
            case .some(let other):
                await connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError("unexpected \(other) while waiting for an A-ASSOCIATE-AC")
            }
        }
    }

    /// Releases the association (A-RELEASE, PS3.8 §7.2) and waits for the A-RELEASE-RP.
    public func release() async throws {
        let connection = self.connection
        guard connection.state == .sta6 else { return }
        try await connection.handle(.releaseRequest)  // AR-1
        while connection.state != .sta1 {
            let indication = try await connection.receive(
                timeout: self.configuration.acseTimeout, kind: .acse, waitingFor: "an A-RELEASE-RP")
            switch indication {
            case .releaseConfirmed?:
                return  // AR-3 closed the transport.
            case .releaseRequested(collision: true)?:
                try await connection.handle(.releaseResponse)  // AR-9, then wait for the RP in Sta11.
            case .pData?, nil:
                continue  // AR-6: late data is dropped.
            case .aborted(let abort)?:
                throw DICOMNetworkError.aborted(by: abort)
            case .some(let other):
                await connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError("unexpected \(other) while waiting for an A-RELEASE-RP")
            }
        }
    }

    /// Aborts the association (A-ABORT, PS3.8 §7.3) and closes the connection.
    public func abort() async {
        await self.connection.abort()
    }

    // MARK: - Helpers

    func nextMessageID() -> UInt16 {
        self.lastMessageID = self.lastMessageID == UInt16.max ? 1 : self.lastMessageID + 1
        return self.lastMessageID
    }

    /// The accepted context for an abstract syntax.
    func context(for abstractSyntax: String, _ operation: String) throws -> NegotiatedAssociation.Context {
        guard let context = self.connection.negotiated?.context(abstractSyntax: abstractSyntax) else {
            throw DICOMNetworkError.noAcceptablePresentationContext("\(operation) (\(abstractSyntax))")
        }
        return context
    }

    /// Where C-STORE sub-operations of a C-GET go.
    struct IncomingStorage {
        var directory: String
        var storage: any StorageDelegate
    }

    /// Waits for the response to `messageID`; serves C-STORE-RQs on the way when `storage` is given (C-GET).
    func response(to messageID: UInt16, waitingFor: String, storage: IncomingStorage? = nil) async throws
        -> (DIMSEMessage, ByteBuffer?)
    {
        try await self.response(waitingFor: waitingFor, storage: storage) { $0 == messageID }
    }

    /// Waits for a response whose Message ID Being Responded To is `expected`; others are dropped.
    func response(waitingFor: String, storage: IncomingStorage? = nil, expected: (UInt16) -> Bool) async throws
        -> (DIMSEMessage, ByteBuffer?)
    {
        let connection = self.connection
        while true {
            let incoming = try await connection.nextIncoming(
                timeout: self.configuration.dimseTimeout, kind: .dimse, waitingFor: waitingFor)
            switch incoming {
            case .dimse(.message(let message, let context, _)) where message.unrecognizedOperationResponse != nil:
                // A request this side does not perform: 0x0211 Unrecognized Operation (PS3.7 Annex C).
                if let response = message.unrecognizedOperationResponse {
                    try await connection.send(response, presentationContextID: context, dataSet: nil)
                }
            case .dimse(.message(let message, _, let dataSet)):
                guard let responded = message.messageIDBeingRespondedTo, expected(responded) else {
                    self.logger.debug(
                        "dropping a message for another request", metadata: ["dimse.command": "\(message.commandField)"]
                    )
                    continue
                }
                return (message, dataSet)
            case .dimse(.streamStarted(.cStoreRQ(let request), let context)):
                guard let storage, connection.negotiated?.context(id: context)?.requestorIsSCP == true else {
                    await connection.abort(.provider(.unexpectedPDU))
                    throw DICOMNetworkError.protocolError(
                        "C-STORE-RQ on context \(context), where this side is not an SCP")
                }
                _ = try await connection.receiveInstance(
                    request,
                    presentationContextID: context,
                    directory: storage.directory,
                    storage: storage.storage,
                    peerAETitle: self.peer.aeTitle,
                    localAETitle: self.configuration.callingAETitle,
                    timeout: self.configuration.dimseTimeout,
                    kind: .dimse
                )
            case .dimse(let event):
                await connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError("unexpected \(event) while waiting for \(waitingFor)")
            case .releaseRequested:
                await connection.abort(.provider(.unexpectedPDU))
                throw DICOMNetworkError.protocolError("the peer asked to release while \(waitingFor) was pending")
            }
        }
    }

    /// Encodes an identifier in a context's transfer syntax.
    func encode(_ identifier: DataSet, in context: NegotiatedAssociation.Context) throws -> ByteBuffer {
        let bytes = try DataSetWriter.encode(identifier, transferSyntax: TransferSyntax(uid: context.transferSyntax))
        return ByteBuffer(bytes: bytes)
    }

    /// Decodes an identifier received in a context's transfer syntax.
    func decode(_ buffer: ByteBuffer, in context: NegotiatedAssociation.Context?) throws -> DataSet {
        let syntax = TransferSyntax(uid: context?.transferSyntax ?? WellKnownUID.implicitVRLittleEndian)
        return try DataSetReader.read(Array(buffer.readableBytesView), transferSyntax: syntax).dataSet
    }

    // MARK: - C-ECHO

    /// C-ECHO (PS3.7 §9.1.5): returns the peer's status.
    public func echo() async throws -> DIMSEStatus {
        let context = try self.context(for: WellKnownUID.verificationSOPClass, "C-ECHO")
        let messageID = self.nextMessageID()
        try await self.connection.send(
            .cEchoRQ(CEchoRQ(messageID: messageID)), presentationContextID: context.id, dataSet: nil)
        let (message, _) = try await self.response(to: messageID, waitingFor: "a C-ECHO-RSP")
        guard case .cEchoRSP(let response) = message else {
            throw DICOMNetworkError.protocolError("expected a C-ECHO-RSP, got \(message.commandField)")
        }
        return response.status
    }
}
