import DICOMProtocol
import Logging
import NIOCore

/// One association on one channel, driven by ``AssociationStateMachine``: every PDU in or out goes through
/// the machine, and its actions (send, close, indications) are executed here (PS3.8 §9.2).
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
    /// Whether the inbound stream ended or failed: nothing more can be read.
    private(set) var inboundFinished: Bool

    init(
        channel: any Channel,
        inbound: NIOAsyncChannelInboundStream<PDUFrame>,
        outbound: NIOAsyncChannelOutboundWriter<PDU>,
        assembler: DIMSEMessageAssembler,
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
    /// ARTIM is realised by the waits that follow (``receive(timeout:kind:waitingFor:)`` in Sta2 and Sta13),
    /// so only the transport effects happen here.
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
        if action.closeTransport {
            self.close()
        }
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
                try await self.handle(.artimExpired)
            } else {
                try await self.handle(.abortRequest(Abort(source: .serviceUser, reason: .reasonNotSpecified)))
            }
            self.close()
            switch signal.kind {
            case .acse: throw DICOMNetworkError.acseTimeout(waitingFor)
            case .dimse: throw DICOMNetworkError.dimseTimeout(waitingFor)
            case .idle: throw DICOMNetworkError.idleTimeout()
            }
        } catch let error as PDUError {
            self.inboundFinished = true
            self.logger.debug("invalid PDU", metadata: ["error": "\(error)"])
            try await self.perform(self.machine.receivedInvalidPDU(error))
            self.close()
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
            try await self.perform(self.machine.receivedInvalidPDU(error))
            self.close()
            throw DICOMNetworkError.protocolError("invalid PDU from the peer: \(error)")
        }
        return try await self.handle(self.machine.receivedPDUEvent(pdu))
    }

    /// The next frame, with a timer that fires a ``TimeoutSignal`` into the pipeline if nothing arrives.
    private func nextFrame(timeout: TimeAmount?, kind: TimeoutSignal.Kind) async throws -> PDUFrame? {
        guard let timeout else {
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

    /// Answers an A-RELEASE indication (Evt14), then waits up to `timeout` for the peer to close (Sta13, ARTIM).
    func respondToRelease(timeout: TimeAmount) async throws {
        try await self.handle(.releaseResponse)
        if self.state == .sta13 {
            try await self.drainUntilClosed(timeout: timeout)
        }
    }

    /// In Sta13, reads (and ignores) until the peer closes or ARTIM expires, then closes.
    func drainUntilClosed(timeout: TimeAmount) async throws {
        while self.state == .sta13 && !self.inboundFinished {
            do {
                _ = try await self.receive(timeout: timeout, kind: .acse, waitingFor: "the peer to close the connection")
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

extension AssociationStateMachine {
    /// The event for a received PDU (Evt3, 4, 6, 10, 12, 13 or 16).
    func receivedPDUEvent(_ pdu: PDU) -> Event {
        switch pdu {
        case .associateRQ(let rq): return .associateRQReceived(rq)
        case .associateAC(let ac): return .associateACReceived(ac)
        case .associateRJ(let rj): return .associateRJReceived(rj)
        case .dataTF(let data): return .pDataTFReceived(data)
        case .releaseRQ: return .releaseRQReceived
        case .releaseRP: return .releaseRPReceived
        case .abort(let abort): return .abortReceived(abort)
        }
    }
}
