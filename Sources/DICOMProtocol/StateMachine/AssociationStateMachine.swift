/// The DICOM Upper Layer protocol state machine (PS3.8 §9.2, Table 9-10).
///
/// A value type with no I/O: feed it events (Evt1...Evt19, ``Event``) through ``handle(_:)`` and execute the
/// returned ``Action`` in this order: open the transport, send ``Action/send``, apply ``Action/artim``,
/// deliver ``Action/indication``, close the transport. The transitions are exactly those of PS3.8
/// Table 9-10, including the release-collision states Sta9...Sta12 and the AA-* abort paths.
///
/// Event/state pairs that Table 9-10 leaves blank yield ``ProtocolAction/invalidEvent``: no effect and no
/// state change. Those pairs are either local API misuse (e.g. a P-DATA request before the association is
/// established, which the caller should report as an error) or stale signals (e.g. ARTIM expiring after it
/// was stopped, or a transport-closed indication in Sta1), for which ignoring them is the safe choice.
///
/// The role (requestor or acceptor) is fixed by the first event: Evt1 makes this side the requestor,
/// Evt5 the acceptor. AR-8 uses it to resolve a release collision.
public struct AssociationStateMachine: Sendable {
    /// Which side of the association this machine runs on (PS3.8 §9.2.2, AR-8).
    public enum Role: Sendable, Hashable {
        /// The association-requestor (the side that sent the A-ASSOCIATE-RQ).
        case requestor
        /// The association-acceptor.
        case acceptor
    }

    /// The states of PS3.8 Tables 9-1 to 9-5.
    public enum State: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Sta1: Idle.
        case sta1 = 1
        /// Sta2: Transport connection open (Awaiting A-ASSOCIATE-RQ PDU).
        case sta2
        /// Sta3: Awaiting local A-ASSOCIATE response primitive (from local user).
        case sta3
        /// Sta4: Awaiting transport connection opening to complete (from local transport service).
        case sta4
        /// Sta5: Awaiting A-ASSOCIATE-AC or A-ASSOCIATE-RJ PDU.
        case sta5
        /// Sta6: Association established and ready for data transfer.
        case sta6
        /// Sta7: Awaiting A-RELEASE-RP PDU.
        case sta7
        /// Sta8: Awaiting local A-RELEASE response primitive (from local user).
        case sta8
        /// Sta9: Release collision requestor side; awaiting A-RELEASE response (from local user).
        case sta9
        /// Sta10: Release collision acceptor side; awaiting A-RELEASE-RP PDU.
        case sta10
        /// Sta11: Release collision requestor side; awaiting A-RELEASE-RP PDU.
        case sta11
        /// Sta12: Release collision acceptor side; awaiting A-RELEASE response primitive (from local user).
        case sta12
        /// Sta13: Awaiting Transport Connection Close Indication (Association no longer exists).
        case sta13

        public var description: String { "Sta\(self.rawValue)" }
    }

    /// The events of PS3.8 Table 9-10.
    public enum Event: Sendable, Hashable {
        /// Evt1: A-ASSOCIATE Request (local user).
        case associateRequest(AssociateRQ)
        /// Evt2: Transport Connect Confirmation (local transport service).
        case transportConnectConfirmation
        /// Evt3: A-ASSOCIATE-AC PDU (received on transport connection).
        case associateACReceived(AssociateAC)
        /// Evt4: A-ASSOCIATE-RJ PDU (received on transport connection).
        case associateRJReceived(AssociateRJ)
        /// Evt5: Transport Connection Indication (local transport service).
        case transportConnectionIndication
        /// Evt6: A-ASSOCIATE-RQ PDU (received on transport connection).
        case associateRQReceived(AssociateRQ)
        /// Evt7: A-ASSOCIATE response primitive (accept).
        case associateAcceptResponse(AssociateAC)
        /// Evt8: A-ASSOCIATE response primitive (reject).
        case associateRejectResponse(AssociateRJ)
        /// Evt9: P-DATA request primitive.
        case pDataRequest(DataTF)
        /// Evt10: P-DATA-TF PDU (received on transport connection).
        case pDataTFReceived(DataTF)
        /// Evt11: A-RELEASE Request primitive.
        case releaseRequest
        /// Evt12: A-RELEASE-RQ PDU (received on transport connection).
        case releaseRQReceived
        /// Evt13: A-RELEASE-RP PDU (received on transport connection).
        case releaseRPReceived
        /// Evt14: A-RELEASE Response primitive.
        case releaseResponse
        /// Evt15: A-ABORT Request primitive.
        case abortRequest(Abort)
        /// Evt16: A-ABORT PDU (received on transport connection).
        case abortReceived(Abort)
        /// Evt17: Transport connection closed indication (local transport service).
        case transportClosed
        /// Evt18: ARTIM timer expired (Association reject/release timer).
        case artimExpired
        /// Evt19: Unrecognized or invalid PDU received; the reason goes into the A-ABORT that answers it.
        case invalidPDUReceived(Abort.Reason)

        /// The PS3.8 event number, 1...19.
        public var number: Int {
            switch self {
            case .associateRequest: return 1
            case .transportConnectConfirmation: return 2
            case .associateACReceived: return 3
            case .associateRJReceived: return 4
            case .transportConnectionIndication: return 5
            case .associateRQReceived: return 6
            case .associateAcceptResponse: return 7
            case .associateRejectResponse: return 8
            case .pDataRequest: return 9
            case .pDataTFReceived: return 10
            case .releaseRequest: return 11
            case .releaseRQReceived: return 12
            case .releaseRPReceived: return 13
            case .releaseResponse: return 14
            case .abortRequest: return 15
            case .abortReceived: return 16
            case .transportClosed: return 17
            case .artimExpired: return 18
            case .invalidPDUReceived: return 19
            }
        }
    }

    /// The PS3.8 action that a transition performed (Tables 9-6 to 9-9).
    public enum ProtocolAction: String, Sendable, Hashable, CaseIterable {
        case ae1 = "AE-1"
        case ae2 = "AE-2"
        case ae3 = "AE-3"
        case ae4 = "AE-4"
        case ae5 = "AE-5"
        case ae6 = "AE-6"
        case ae7 = "AE-7"
        case ae8 = "AE-8"
        case dt1 = "DT-1"
        case dt2 = "DT-2"
        case ar1 = "AR-1"
        case ar2 = "AR-2"
        case ar3 = "AR-3"
        case ar4 = "AR-4"
        case ar5 = "AR-5"
        case ar6 = "AR-6"
        case ar7 = "AR-7"
        case ar8 = "AR-8"
        case ar9 = "AR-9"
        case ar10 = "AR-10"
        case aa1 = "AA-1"
        case aa2 = "AA-2"
        case aa3 = "AA-3"
        case aa4 = "AA-4"
        case aa5 = "AA-5"
        case aa6 = "AA-6"
        case aa7 = "AA-7"
        case aa8 = "AA-8"
        /// The event is not defined in the current state (a blank cell of Table 9-10): nothing happens.
        case invalidEvent = "invalid"
    }

    /// What to do with the ARTIM timer (PS3.8 §9.1.5).
    public enum ARTIMChange: Sendable, Hashable {
        /// Leave the timer as it is.
        case unchanged
        /// Start the timer, restarting it if it is already running.
        case start
        /// Stop the timer if it is running.
        case stop
    }

    /// Why the local upper layer provider aborted the association (an A-P-ABORT indication).
    public enum ProviderAbortCause: Sendable, Hashable {
        /// The transport connection closed while an association existed or was being set up (AA-4).
        case transportClosed
        /// The peer violated the protocol; an A-ABORT with this reason was sent (AA-8).
        case protocolError(Abort.Reason)
    }

    /// A service primitive delivered to the local user (PS3.8 §7).
    public enum Indication: Sendable, Hashable {
        /// A-ASSOCIATE indication: a peer asks for an association; answer with Evt7 or Evt8 (AE-6).
        case associateRequest(AssociateRQ)
        /// A-ASSOCIATE confirmation (accept) (AE-3).
        case associateAccepted(AssociateAC)
        /// A-ASSOCIATE confirmation (reject) (AE-4).
        case associateRejected(AssociateRJ)
        /// P-DATA indication (DT-2, AR-6).
        case pData(DataTF)
        /// A-RELEASE indication: answer with Evt14 (AR-2; AR-8 with `collision` set).
        case releaseRequested(collision: Bool)
        /// A-RELEASE confirmation (AR-3, AR-10).
        case releaseConfirmed
        /// A-ABORT (source 0) or A-P-ABORT (source 2) indication for an abort the peer sent (AA-3).
        case aborted(Abort)
        /// A-P-ABORT indication raised locally (AA-4, AA-8).
        case providerAborted(ProviderAbortCause)
    }

    /// The effects of one transition, to be executed in declaration order.
    public struct Action: Sendable, Hashable {
        /// The PS3.8 action performed, or ``ProtocolAction/invalidEvent``.
        public var protocolAction: ProtocolAction
        /// Issue a TRANSPORT CONNECT request (AE-1).
        public var openTransport: Bool
        /// A PDU to send to the peer.
        public var send: PDU?
        /// What to do with the ARTIM timer.
        public var artim: ARTIMChange
        /// A primitive to deliver to the local user.
        public var indication: Indication?
        /// Close the transport connection.
        public var closeTransport: Bool

        /// Creates an action.
        public init(
            _ protocolAction: ProtocolAction,
            openTransport: Bool = false,
            send: PDU? = nil,
            artim: ARTIMChange = .unchanged,
            indication: Indication? = nil,
            closeTransport: Bool = false
        ) {
            self.protocolAction = protocolAction
            self.openTransport = openTransport
            self.send = send
            self.artim = artim
            self.indication = indication
            self.closeTransport = closeTransport
        }

        /// No effect: the event is not defined in the current state.
        public static var invalidEvent: Action { Action(.invalidEvent) }
    }

    /// The current state.
    public private(set) var state: State
    /// This side's role, known once Evt1 or Evt5 has happened.
    public private(set) var role: Role?
    /// The A-ASSOCIATE-RQ to send once the transport connects (between AE-1 and AE-2).
    private var pendingRequest: AssociateRQ?

    /// Creates a machine in Sta1 (Idle).
    public init() {
        self.state = .sta1
        self.role = nil
        self.pendingRequest = nil
    }

    /// Creates a machine in an arbitrary state, for tests and diagnostics.
    init(state: State, role: Role?, pendingRequest: AssociateRQ? = nil) {
        self.state = state
        self.role = role
        self.pendingRequest = pendingRequest
    }

    /// Maps a received PDU to its event (Evt3, 4, 6, 10, 12, 13 or 16) and handles it.
    public mutating func receivedPDU(_ pdu: PDU) -> Action {
        switch pdu {
        case .associateRQ(let rq): return self.handle(.associateRQReceived(rq))
        case .associateAC(let ac): return self.handle(.associateACReceived(ac))
        case .associateRJ(let rj): return self.handle(.associateRJReceived(rj))
        case .dataTF(let data): return self.handle(.pDataTFReceived(data))
        case .releaseRQ: return self.handle(.releaseRQReceived)
        case .releaseRP: return self.handle(.releaseRPReceived)
        case .abort(let abort): return self.handle(.abortReceived(abort))
        }
    }

    /// Handles an unrecognized or invalid PDU (Evt19), answering with the abort reason the error suggests.
    public mutating func receivedInvalidPDU(_ error: PDUError) -> Action {
        self.handle(.invalidPDUReceived(error.abortReason))
    }

    /// Applies one event and returns the effects to execute (PS3.8 Table 9-10).
    public mutating func handle(_ event: Event) -> Action {
        let (action, next) = self.transition(event)
        if let next {
            self.state = next
        }
        return action
    }

    // MARK: - Table 9-10

    // swift-format-ignore: NoBlockComments
    private mutating func transition(_ event: Event) -> (Action, State?) {
        let state = self.state
        switch event {
        case .associateRequest(let rq):  // Evt1
            guard state == .sta1 else { return (.invalidEvent, nil) }
            self.role = .requestor
            self.pendingRequest = rq
            return (Action(.ae1, openTransport: true), .sta4)

        case .transportConnectConfirmation:  // Evt2
            guard state == .sta4, let rq = self.pendingRequest else { return (.invalidEvent, nil) }
            self.pendingRequest = nil
            return (Action(.ae2, send: .associateRQ(rq)), .sta5)

        case .associateACReceived(let ac):  // Evt3
            switch state {
            case .sta2: return self.aa1()
            case .sta5: return (Action(.ae3, indication: .associateAccepted(ac)), .sta6)
            case .sta13: return self.aa6()
            case .sta3, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .associateRJReceived(let rj):  // Evt4
            switch state {
            case .sta2: return self.aa1()
            case .sta5: return (Action(.ae4, indication: .associateRejected(rj), closeTransport: true), .sta1)
            case .sta13: return self.aa6()
            case .sta3, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .transportConnectionIndication:  // Evt5
            guard state == .sta1 else { return (.invalidEvent, nil) }
            self.role = .acceptor
            return (Action(.ae5, artim: .start), .sta2)

        case .associateRQReceived(let rq):  // Evt6
            switch state {
            case .sta2:
                guard rq.supportsProtocolVersion1 else {
                    let rj = AssociateRJ(
                        result: .rejectedPermanent,
                        source: .serviceProviderACSE,
                        reason: .protocolVersionNotSupported
                    )
                    return (Action(.ae6, send: .associateRJ(rj), artim: .start), .sta13)
                }
                return (Action(.ae6, artim: .stop, indication: .associateRequest(rq)), .sta3)
            case .sta13: return self.aa7(.unexpectedPDU)
            case .sta3, .sta5, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .associateAcceptResponse(let ac):  // Evt7
            guard state == .sta3 else { return (.invalidEvent, nil) }
            return (Action(.ae7, send: .associateAC(ac)), .sta6)

        case .associateRejectResponse(let rj):  // Evt8
            guard state == .sta3 else { return (.invalidEvent, nil) }
            return (Action(.ae8, send: .associateRJ(rj), artim: .start), .sta13)

        case .pDataRequest(let data):  // Evt9
            switch state {
            case .sta6: return (Action(.dt1, send: .dataTF(data)), .sta6)
            case .sta8: return (Action(.ar7, send: .dataTF(data)), .sta8)
            default: return (.invalidEvent, nil)
            }

        case .pDataTFReceived(let data):  // Evt10
            switch state {
            case .sta2: return self.aa1()
            case .sta6: return (Action(.dt2, indication: .pData(data)), .sta6)
            case .sta7: return (Action(.ar6, indication: .pData(data)), .sta7)
            case .sta13: return self.aa6()
            case .sta3, .sta5, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .releaseRequest:  // Evt11
            guard state == .sta6 else { return (.invalidEvent, nil) }
            return (Action(.ar1, send: .releaseRQ), .sta7)

        case .releaseRQReceived:  // Evt12
            switch state {
            case .sta2: return self.aa1()
            case .sta6: return (Action(.ar2, indication: .releaseRequested(collision: false)), .sta8)
            case .sta7:
                // AR-8: release collision; the requestor goes to Sta9, the acceptor to Sta10.
                let next: State = self.role == .requestor ? .sta9 : .sta10
                return (Action(.ar8, indication: .releaseRequested(collision: true)), next)
            case .sta13: return self.aa6()
            case .sta3, .sta5, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .releaseRPReceived:  // Evt13
            switch state {
            case .sta2: return self.aa1()
            case .sta7, .sta11:
                return (Action(.ar3, indication: .releaseConfirmed, closeTransport: true), .sta1)
            case .sta10: return (Action(.ar10, indication: .releaseConfirmed), .sta12)
            case .sta13: return self.aa6()
            case .sta3, .sta5, .sta6, .sta8, .sta9, .sta12: return self.aa8(.unexpectedPDU)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .releaseResponse:  // Evt14
            switch state {
            case .sta8, .sta12: return (Action(.ar4, send: .releaseRP, artim: .start), .sta13)
            case .sta9: return (Action(.ar9, send: .releaseRP), .sta11)
            default: return (.invalidEvent, nil)
            }

        case .abortRequest(let abort):  // Evt15
            switch state {
            case .sta3, .sta5, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12:
                return (Action(.aa1, send: .abort(abort), artim: .start), .sta13)
            case .sta4: return self.aa2()
            case .sta1, .sta2, .sta13: return (.invalidEvent, nil)
            }

        case .abortReceived(let abort):  // Evt16
            switch state {
            case .sta2, .sta13: return self.aa2()
            case .sta3, .sta5, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12:
                return (Action(.aa3, indication: .aborted(abort), closeTransport: true), .sta1)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }

        case .transportClosed:  // Evt17
            switch state {
            case .sta2: return (Action(.aa5, artim: .stop), .sta1)
            case .sta13: return (Action(.ar5, artim: .stop), .sta1)
            case .sta3, .sta4, .sta5, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12:
                return (Action(.aa4, indication: .providerAborted(.transportClosed)), .sta1)
            case .sta1: return (.invalidEvent, nil)
            }

        case .artimExpired:  // Evt18
            switch state {
            case .sta2, .sta13: return self.aa2()
            default: return (.invalidEvent, nil)
            }

        case .invalidPDUReceived(let reason):  // Evt19
            switch state {
            case .sta2: return self.aa1()
            case .sta13: return self.aa7(reason)
            case .sta3, .sta5, .sta6, .sta7, .sta8, .sta9, .sta10, .sta11, .sta12: return self.aa8(reason)
            case .sta1, .sta4: return (.invalidEvent, nil)
            }
        }
    }

    /// AA-1: send A-ABORT (service-user source), (re)start ARTIM; next state Sta13.
    private func aa1() -> (Action, State?) {
        (Action(.aa1, send: .abort(Abort(source: .serviceUser, reason: .reasonNotSpecified)), artim: .start), .sta13)
    }

    /// AA-2: stop ARTIM if running, close the transport connection; next state Sta1.
    private func aa2() -> (Action, State?) {
        (Action(.aa2, artim: .stop, closeTransport: true), .sta1)
    }

    /// AA-6: ignore the PDU; stay in Sta13.
    private func aa6() -> (Action, State?) {
        (Action(.aa6), .sta13)
    }

    /// AA-7: send A-ABORT (service-provider source); stay in Sta13.
    private func aa7(_ reason: Abort.Reason) -> (Action, State?) {
        (Action(.aa7, send: .abort(.provider(reason))), .sta13)
    }

    /// AA-8: send A-ABORT (service-provider source), issue an A-P-ABORT indication, start ARTIM; next state Sta13.
    private func aa8(_ reason: Abort.Reason) -> (Action, State?) {
        (
            Action(
                .aa8,
                send: .abort(.provider(reason)),
                artim: .start,
                indication: .providerAborted(.protocolError(reason))
            ), .sta13
        )
    }
}
