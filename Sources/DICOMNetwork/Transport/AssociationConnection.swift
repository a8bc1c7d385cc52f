import DICOMProtocol
import Logging
import NIOCore

/// One association on one channel, driven by ``AssociationStateMachine``: every PDU in or out goes through
/// the machine, and every field of its actions is executed here (PS3.8 §9.2): the PDU to send, the ARTIM
/// timer, the indication (returned to the caller) and closing the transport.
///
/// ARTIM (PS3.8 §9.1.5) runs from the action that starts it (AE-5, AE-8, AR-4, AA-1, AA-8) to the one that
/// stops it (AE-6, AR-5, AA-2, AA-5): while it runs, every read is bounded by its deadline, whoever reads,
/// and its expiry is Evt18. The waits it covers (for the A-ASSOCIATE-RQ in Sta2, for the peer to close in
/// Sta13) take no timeout of their own.
///
/// Owned by a single task (the association task of ``DICOMServer`` or the body of
/// ``DICOMClient/withAssociation(to:proposing:_:)``); never shared.
final class AssociationConnection {
    /// What the DIMSE layer sees next.
    enum Incoming {
        /// A DIMSE event from the assembler.
        case dimse(DIMSEMessageAssembler.Event)
        /// The peer asked to release (A-RELEASE indication); answer with ``respondToRelease()``.
        case releaseRequested
    }

    let channel: any Channel
    private var inbound: NIOAsyncChannelInboundStream<PDUFrame>.AsyncIterator
    private let outbound: NIOAsyncChannelOutboundWriter<PDU>
    private(set) var machine: AssociationStateMachine
    var logger: Logger
    var assembler: DIMSEMessageAssembler
    /// PDVs of the last P-DATA-TF not yet handed to the assembler, in reverse order.
    private var pendingPDVs: [PDV]
    /// The negotiated association, once established.
    var negotiated: NegotiatedAssociation?
    /// An A-ASSOCIATE-RQ the state machine itself answered with an A-ASSOCIATE-RJ (AE-6: a protocol version
    /// without bit 0, PS3.8 §9.3.4), so that the acceptor can report the refusal.
    var rejectedByProtocol: (request: AssociateRQ, rejection: AssociateRJ)?
    /// Whether the inbound stream ended or failed: nothing more can be read.
    private(set) var inboundFinished: Bool
    /// How long ARTIM runs once an action starts it.
    let artimTimeout: TimeAmount
    /// When the running ARTIM expires; `nil` while it is stopped.
    private var artimDeadline: NIODeadline?

    init(
        channel: any Channel,
        inbound: NIOAsyncChannelInboundStream<PDUFrame>,
        outbound: NIOAsyncChannelOutboundWriter<PDU>,
        assembler: DIMSEMessageAssembler,
        artimTimeout: TimeAmount,
        logger: Logger
    ) {
        self.channel = channel
        self.inbound = inbound.makeAsyncIterator()
        self.outbound = outbound
        self.machine = AssociationStateMachine()
        self.assembler = assembler
        self.logger = logger
        self.pendingPDVs = []
        self.negotiated = nil
        self.inboundFinished = false
        self.artimTimeout = artimTimeout
        self.artimDeadline = nil
    }

    var state: AssociationStateMachine.State { self.machine.state }

    // MARK: - Executing the state machine

    /// Applies an event and executes its action; returns the indication for the local user.
    @discardableResult
    func handle(_ event: AssociationStateMachine.Event) async throws -> AssociationStateMachine.Indication? {
        let action = self.machine.handle(event)
        try await self.perform(action)
        return action.indication
    }

    /// Executes one action in PS3.8 order: send, ARTIM, (indication: returned by the caller), close.
    ///
    /// The transport is opened by the caller before Evt1 (``DICOMClient``) or accepted before Evt5
    /// (``DICOMServer``), so ``AssociationStateMachine/Action/openTransport`` has happened already.
    func perform(_ action: AssociationStateMachine.Action) async throws {
        if action.protocolAction != .dt1 && action.protocolAction != .dt2 {
            self.logger.trace(
                "upper layer action",
                metadata: ["dul.action": "\(action.protocolAction.rawValue)", "dul.state": "\(self.machine.state)"]
            )
        }
        if let pdu = action.send {
            try await self.outbound.write(pdu)
        }
        switch action.artim {
        case .start: self.artimDeadline = .now() + self.artimTimeout
        case .stop: self.artimDeadline = nil
        case .unchanged: break
        }
        if action.closeTransport {
            self.close()
        }
    }

    /// Executes Evt19 for an invalid PDU (AA-1 or AA-8: an A-ABORT) and closes the transport. The A-ABORT is
    /// sent as best it can: the server's connection guard may have sent one and closed already, and the error
    /// to report is the invalid PDU.
    private func refuse(_ error: PDUError) async {
        do {
            try await self.perform(self.machine.receivedInvalidPDU(error))
        } catch {
            self.logger.debug("could not send A-ABORT", metadata: ["error": "\(error)"])
        }
        self.close()
    }

    /// Closes the transport (no further PDUs).
    func close() {
        self.channel.close(promise: nil)
    }

    // MARK: - Receiving

    /// Reads the next PDU and feeds it to the machine; returns the indication (nil for ignored PDUs).
    ///
    /// Failures are turned into the PS3.8 events and their actions are executed before throwing:
    /// a timeout is Evt18 in Sta2/Sta13 and an A-ABORT request (Evt15) elsewhere; an undecodable PDU or an
    /// announced length above the cap is Evt19 (A-ABORT to the peer); the end of the stream is Evt17.
    ///
    /// - Returns: The indication, or `nil` when the PDU caused none. Throws when the association is gone.
    func receive(timeout: TimeAmount?, kind: TimeoutSignal.Kind, waitingFor: String) async throws
        -> AssociationStateMachine.Indication?
    {
        guard !self.inboundFinished else {
            throw DICOMNetworkError.connectionClosed("the connection is closed")
        }
        let frame: PDUFrame?
        do {
            frame = try await self.nextFrame(timeout: timeout, kind: kind)
        } catch let signal as TimeoutSignal {
            self.inboundFinished = true
            if self.state == .sta2 || self.state == .sta13 {
                try await self.handle(.artimExpired)  // AA-2: ARTIM stopped, transport closed.
            } else {
                // A DIMSE or idle timeout: this side's user gives up (Evt15, AA-1), and closes at once rather
                // than waiting out ARTIM in Sta13: the reader is gone, and a peer that answers the A-ABORT
                // closes anyway (AA-3). ``abort(_:)`` sends the A-ABORT as best it can, so the error is the
                // timeout even when the peer closed meanwhile.
                await self.abort()
            }
            switch signal.kind {
            case .acse: throw DICOMNetworkError.acseTimeout(waitingFor)
            case .dimse: throw DICOMNetworkError.dimseTimeout(waitingFor)
            case .idle: throw DICOMNetworkError.idleTimeout()
            }
        } catch let error as PDUError {
            self.inboundFinished = true
            self.logger.debug("invalid PDU", metadata: ["error": "\(error)"])
            await self.refuse(error)
            throw DICOMNetworkError.protocolError("invalid PDU from the peer: \(error)")
        } catch {
            self.inboundFinished = true
            try await self.handle(.transportClosed)
            throw DICOMNetworkError.connectionClosed("connection failed: \(error)")
        }
        guard let frame else {
            self.inboundFinished = true
            let indication = try await self.handle(.transportClosed)
            if case .providerAborted = indication {
                throw DICOMNetworkError.connectionClosed("the peer closed the connection while \(waitingFor)")
            }
            return nil
        }
        let pdu: PDU
        do {
            pdu = try PDU(frame: frame)
        } catch let error as PDUError {
            self.logger.debug("undecodable PDU", metadata: ["error": "\(error)"])
            await self.refuse(error)
            throw DICOMNetworkError.protocolError("invalid PDU from the peer: \(error)")
        }
        let action = self.machine.receivedPDU(pdu)
        if case .associateRQ(let request) = pdu, case .associateRJ(let rejection)? = action.send {
            self.rejectedByProtocol = (request, rejection)
        }
        try await self.perform(action)
        return action.indication
    }

    /// The next frame, with a timer that fires a ``TimeoutSignal`` into the pipeline if nothing arrives: the
    /// caller's `timeout`, or what is left of ARTIM while it runs, whichever ends first (ARTIM's is `.acse`).
    private func nextFrame(timeout: TimeAmount?, kind: TimeoutSignal.Kind) async throws -> PDUFrame? {
        var wait = timeout.map { (amount: $0, kind: kind) }
        if let deadline = self.artimDeadline {
            let left = deadline - .now()
            guard left > .zero else { throw TimeoutSignal(kind: .acse) }
            if wait.map({ left < $0.amount }) ?? true { wait = (left, .acse) }
        }
        guard let (timeout, kind) = wait else {
            return try await self.inbound.next()
        }
        // The deadline lives on the event loop (ReadDeadlineHandler): a PDU that arrives disarms it there.
        self.channel.triggerUserOutboundEvent(ReadDeadlineHandler.Command.arm(timeout, kind), promise: nil)
        defer { self.channel.triggerUserOutboundEvent(ReadDeadlineHandler.Command.disarm, promise: nil) }
        return try await self.inbound.next()
    }

    /// The next DIMSE event or release request, reading PDUs as needed.
    ///
    /// - Throws: ``DICOMNetworkError`` with ``DICOMNetworkError/Code/aborted`` when the peer aborts,
    ///   ``DICOMNetworkError/Code/protocolError`` for malformed messages (after sending an A-ABORT),
    ///   timeouts and connection errors.
    func nextIncoming(timeout: TimeAmount?, kind: TimeoutSignal.Kind, waitingFor: String) async throws -> Incoming {
        while true {
            if let pdv = self.pendingPDVs.popLast() {
                let event: DIMSEMessageAssembler.Event?
                do {
                    event = try self.assembler.receive(pdv)
                } catch {
                    self.logger.debug("malformed DIMSE message", metadata: ["error": "\(error)"])
                    try await self.handle(.abortRequest(.provider(.unexpectedPDUParameter)))
                    self.close()
                    throw DICOMNetworkError.protocolError("malformed DIMSE message from the peer: \(error)")
                }
                if let event { return .dimse(event) }
                continue
            }
            let indication = try await self.receive(timeout: timeout, kind: kind, waitingFor: waitingFor)
            switch indication {
            case .pData(let data)?:
                self.pendingPDVs = data.pdvs.reversed()
            case .releaseRequested?:
                return .releaseRequested
            case .aborted(let abort)?:
                self.close()
                throw DICOMNetworkError.aborted(by: abort)
            case .providerAborted(let cause)?:
                self.close()
                throw DICOMNetworkError.protocolError("association aborted by the upper layer provider: \(cause)")
            case nil:
                continue
            case .some(let other):
                self.close()
                throw DICOMNetworkError.protocolError("unexpected \(other) while \(waitingFor)")
            }
        }
    }

    // MARK: - Sending

    /// Sends one DIMSE message (command, then data set) as P-DATA-TF PDUs fragmented to the peer's maximum
    /// length, with a single flush (PS3.8 §9.3.5, Annex E; PS3.7 §9.3.1).
    func send(_ message: DIMSEMessage, presentationContextID: UInt8, dataSet: ByteBuffer?) async throws {
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        let command = message.commandSet.encoded(allocator: self.channel.allocator)
        let fragmenter = try PDataFragmenter(
            presentationContextID: presentationContextID,
            command: command,
            dataset: dataSet,
            peerMaximumPDULength: negotiated.peerMaximumPDULength
        )
        var pdus: [PDU] = []
        pdus.reserveCapacity(1 + (dataSet?.readableBytes ?? 0) / max(fragmenter.fragmentLength, 1))
        for data in fragmenter {
            let action = self.machine.handle(.pDataRequest(data))
            guard action.protocolAction != .invalidEvent else {
                throw DICOMNetworkError.connectionClosed("cannot send \(message.commandField) in \(self.machine.state)")
            }
            if let pdu = action.send { pdus.append(pdu) }
        }
        try await self.outbound.write(contentsOf: pdus)
    }

    /// Passes one outgoing P-DATA-TF through the state machine (Evt9) and returns the PDU to send.
    func admit(_ data: DataTF, sending what: @autoclosure () -> String) throws -> PDU {
        let action = self.machine.handle(.pDataRequest(data))
        guard action.protocolAction != .invalidEvent, let pdu = action.send else {
            throw DICOMNetworkError.connectionClosed("cannot send \(what()) in \(self.machine.state)")
        }
        return pdu
    }

    /// Answers an A-RELEASE indication (Evt14, AR-4), then waits in Sta13 for the peer to close.
    func respondToRelease() async throws {
        try await self.handle(.releaseResponse)
        if self.state == .sta13 {
            try await self.drainUntilClosed()
        }
    }

    /// Sta13 (PS3.8 §9.2): reads and ignores PDUs (AA-6) until the peer closes the transport (Evt17, AR-5) or
    /// the ARTIM timer that the action entering Sta13 started expires (Evt18, AA-2); then closes.
    func drainUntilClosed() async throws {
        while self.state == .sta13 && !self.inboundFinished {
            do {
                _ = try await self.receive(timeout: nil, kind: .acse, waitingFor: "the peer to close the connection")
            } catch let error as DICOMNetworkError where error.code == .acseTimeout || error.code == .connectionClosed {
                break
            }
        }
        self.close()
    }

    /// Sends an A-ABORT (Evt15) if an association exists or is being set up, and closes the transport.
    func abort(_ abort: Abort = Abort(source: .serviceUser, reason: .reasonNotSpecified)) async {
        let action = self.machine.handle(.abortRequest(abort))
        if let pdu = action.send {
            do {
                try await self.outbound.write(pdu)
            } catch {
                self.logger.debug("could not send A-ABORT", metadata: ["error": "\(error)"])
            }
        }
        self.close()
    }
}
