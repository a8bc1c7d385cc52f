import NIOCore
import Testing

@testable import DICOMProtocol

typealias FSM = AssociationStateMachine

/// Fixtures for the state machine tests.
enum FSMFixtures {
    static let userInformation = UserInformation(maximumLength: 16384, implementationClassUID: "1.2.3")
    static let rq = AssociateRQ(
        calledAETitle: "SCP",
        callingAETitle: "SCU",
        presentationContexts: [
            PresentationContextRQ(id: 1, abstractSyntax: "1.2.840.10008.1.1", transferSyntaxes: ["1.2.840.10008.1.2"])
        ],
        userInformation: userInformation
    )
    static let ac = AssociateAC(
        calledAETitle: "SCP",
        callingAETitle: "SCU",
        presentationContexts: [PresentationContextAC(id: 1, result: .acceptance, transferSyntax: "1.2.840.10008.1.2")],
        userInformation: userInformation
    )
    static let rj = AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .calledAETitleNotRecognized)
    static let data = DataTF(
        PDV(presentationContextID: 1, messageControlHeader: .commandLast, data: ByteBuffer(bytes: [1, 2])))
    static let userAbort = Abort(source: .serviceUser, reason: .reasonNotSpecified)
    static let peerAbort = Abort(source: .serviceProvider, reason: .unexpectedPDU)
    static let invalidReason = Abort.Reason.invalidPDUParameterValue

    /// One event per PS3.8 event number.
    static func event(_ number: Int) -> FSM.Event {
        switch number {
        case 1: return .associateRequest(rq)
        case 2: return .transportConnectConfirmation
        case 3: return .associateACReceived(ac)
        case 4: return .associateRJReceived(rj)
        case 5: return .transportConnectionIndication
        case 6: return .associateRQReceived(rq)
        case 7: return .associateAcceptResponse(ac)
        case 8: return .associateRejectResponse(rj)
        case 9: return .pDataRequest(data)
        case 10: return .pDataTFReceived(data)
        case 11: return .releaseRequest
        case 12: return .releaseRQReceived
        case 13: return .releaseRPReceived
        case 14: return .releaseResponse
        case 15: return .abortRequest(userAbort)
        case 16: return .abortReceived(peerAbort)
        case 17: return .transportClosed
        case 18: return .artimExpired
        default: return .invalidPDUReceived(invalidReason)
        }
    }
}

@Suite("Association state machine (PS3.8 §9.2, Table 9-10)", .timeLimit(.minutes(2)))
struct AssociationStateMachineTests {
    /// PS3.8 Table 9-10, transcribed row by row (event) and column by column (Sta1...Sta13). Blank = undefined.
    static let table: [Int: [String]] = [
        1: ["AE-1", "", "", "", "", "", "", "", "", "", "", "", ""],
        2: ["", "", "", "AE-2", "", "", "", "", "", "", "", "", ""],
        3: ["", "AA-1", "AA-8", "", "AE-3", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-6"],
        4: ["", "AA-1", "AA-8", "", "AE-4", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-6"],
        5: ["AE-5", "", "", "", "", "", "", "", "", "", "", "", ""],
        6: ["", "AE-6", "AA-8", "", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-7"],
        7: ["", "", "AE-7", "", "", "", "", "", "", "", "", "", ""],
        8: ["", "", "AE-8", "", "", "", "", "", "", "", "", "", ""],
        9: ["", "", "", "", "", "DT-1", "", "AR-7", "", "", "", "", ""],
        10: ["", "AA-1", "AA-8", "", "AA-8", "DT-2", "AR-6", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-6"],
        11: ["", "", "", "", "", "AR-1", "", "", "", "", "", "", ""],
        12: ["", "AA-1", "AA-8", "", "AA-8", "AR-2", "AR-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-6"],
        13: ["", "AA-1", "AA-8", "", "AA-8", "AA-8", "AR-3", "AA-8", "AA-8", "AR-10", "AR-3", "AA-8", "AA-6"],
        14: ["", "", "", "", "", "", "", "AR-4", "AR-9", "", "", "AR-4", ""],
        15: ["", "", "AA-1", "AA-2", "AA-1", "AA-1", "AA-1", "AA-1", "AA-1", "AA-1", "AA-1", "AA-1", ""],
        16: ["", "AA-2", "AA-3", "", "AA-3", "AA-3", "AA-3", "AA-3", "AA-3", "AA-3", "AA-3", "AA-3", "AA-2"],
        17: ["", "AA-5", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AA-4", "AR-5"],
        18: ["", "AA-2", "", "", "", "", "", "", "", "", "", "", "AA-2"],
        19: ["", "AA-1", "AA-8", "", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-8", "AA-7"],
    ]

    /// The next state of each action (PS3.8 Tables 9-6 to 9-9); AR-8 depends on the role.
    static func nextState(_ action: String, role: FSM.Role, current: FSM.State) -> FSM.State {
        switch action {
        case "AE-1": return .sta4
        case "AE-2": return .sta5
        case "AE-3", "AE-7", "DT-1", "DT-2": return .sta6
        case "AE-4", "AR-3", "AR-5", "AA-2", "AA-3", "AA-4", "AA-5": return .sta1
        case "AE-5": return .sta2
        case "AE-6": return .sta3  // with an acceptable RQ
        case "AE-8", "AR-4", "AA-1", "AA-6", "AA-7", "AA-8": return .sta13
        case "AR-1", "AR-6": return .sta7
        case "AR-2", "AR-7": return .sta8
        case "AR-8": return role == .requestor ? .sta9 : .sta10
        case "AR-9": return .sta11
        case "AR-10": return .sta12
        default: return current
        }
    }

    /// The effects each action must have for the fixture event `event`.
    static func expectedAction(_ action: String, event: Int) -> FSM.Action {
        let reason: Abort.Reason = event == 19 ? FSMFixtures.invalidReason : .unexpectedPDU
        switch action {
        case "AE-1": return FSM.Action(.ae1, openTransport: true)
        case "AE-2": return FSM.Action(.ae2, send: .associateRQ(FSMFixtures.rq))
        case "AE-3": return FSM.Action(.ae3, indication: .associateAccepted(FSMFixtures.ac))
        case "AE-4": return FSM.Action(.ae4, indication: .associateRejected(FSMFixtures.rj), closeTransport: true)
        case "AE-5": return FSM.Action(.ae5, artim: .start)
        case "AE-6": return FSM.Action(.ae6, artim: .stop, indication: .associateRequest(FSMFixtures.rq))
        case "AE-7": return FSM.Action(.ae7, send: .associateAC(FSMFixtures.ac))
        case "AE-8": return FSM.Action(.ae8, send: .associateRJ(FSMFixtures.rj), artim: .start)
        case "DT-1": return FSM.Action(.dt1, send: .dataTF(FSMFixtures.data))
        case "DT-2": return FSM.Action(.dt2, indication: .pData(FSMFixtures.data))
        case "AR-1": return FSM.Action(.ar1, send: .releaseRQ)
        case "AR-2": return FSM.Action(.ar2, indication: .releaseRequested(collision: false))
        case "AR-3": return FSM.Action(.ar3, indication: .releaseConfirmed, closeTransport: true)
        case "AR-4": return FSM.Action(.ar4, send: .releaseRP, artim: .start)
        case "AR-5": return FSM.Action(.ar5, artim: .stop)
        case "AR-6": return FSM.Action(.ar6, indication: .pData(FSMFixtures.data))
        case "AR-7": return FSM.Action(.ar7, send: .dataTF(FSMFixtures.data))
        case "AR-8": return FSM.Action(.ar8, indication: .releaseRequested(collision: true))
        case "AR-9": return FSM.Action(.ar9, send: .releaseRP)
        case "AR-10": return FSM.Action(.ar10, indication: .releaseConfirmed)
        case "AA-1":
            // Evt15 sends the user's abort; otherwise PS3.8 AA-1 says "service-user source".
            return FSM.Action(.aa1, send: .abort(FSMFixtures.userAbort), artim: .start)
        case "AA-2": return FSM.Action(.aa2, artim: .stop, closeTransport: true)
        case "AA-3": return FSM.Action(.aa3, indication: .aborted(FSMFixtures.peerAbort), closeTransport: true)
        case "AA-4": return FSM.Action(.aa4, indication: .providerAborted(.transportClosed))
        case "AA-5": return FSM.Action(.aa5, artim: .stop)
        case "AA-6": return FSM.Action(.aa6)
        case "AA-7": return FSM.Action(.aa7, send: .abort(.provider(reason)))
        case "AA-8":
            return FSM.Action(
                .aa8,
                send: .abort(.provider(reason)),
                artim: .start,
                indication: .providerAborted(.protocolError(reason))
            )
        default: return .invalidEvent
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var state: FSM.State
        var event: Int
        var role: FSM.Role
        var testDescription: String { "Sta\(self.state.rawValue) Evt\(self.event) \(self.role)" }
    }

    static let allCases: [Case] = FSM.State.allCases.flatMap { state in
        (1...19).flatMap { event in [FSM.Role.requestor, .acceptor].map { Case(state: state, event: event, role: $0) } }
    }

    @Test("Table 9-10 is transcribed with its 123 defined cells")
    func tableShape() {
        #expect(Self.table.count == 19)
        #expect(Self.table.values.allSatisfy { $0.count == 13 })
        #expect(Self.table.values.reduce(0) { $0 + $1.filter { !$0.isEmpty }.count } == 123)
    }

    @Test("Every (state, event, role) follows Table 9-10", arguments: allCases)
    func transition(_ testCase: Case) throws {
        let row = try #require(Self.table[testCase.event])
        let cell = row[testCase.state.rawValue - 1]
        var machine = FSM(state: testCase.state, role: testCase.role, pendingRequest: FSMFixtures.rq)
        let action = machine.handle(FSMFixtures.event(testCase.event))

        let expectedName = cell.isEmpty ? "invalid" : cell
        #expect(action.protocolAction.rawValue == expectedName)
        #expect(action == Self.expectedAction(expectedName, event: testCase.event))
        #expect(machine.state == Self.nextState(expectedName, role: testCase.role, current: testCase.state))
    }

    @Test("AE-6 rejects an RQ without protocol version 1 with an RJ from the ACSE provider")
    func ae6RejectsProtocolVersion() {
        var machine = FSM()
        #expect(machine.handle(.transportConnectionIndication).protocolAction == .ae5)
        var rq = FSMFixtures.rq
        rq.protocolVersion = 2
        let action = machine.handle(.associateRQReceived(rq))
        #expect(action.protocolAction == .ae6)
        #expect(
            action.send
                == .associateRJ(
                    AssociateRJ(
                        result: .rejectedPermanent, source: .serviceProviderACSE, reason: .protocolVersionNotSupported))
        )
        #expect(action.artim == .start)
        #expect(action.indication == nil)
        #expect(machine.state == .sta13)
    }

    @Test("Requestor lifecycle: associate, data, release")
    func requestorLifecycle() {
        var machine = FSM()
        #expect(machine.handle(.associateRequest(FSMFixtures.rq)).openTransport)
        #expect(machine.role == .requestor)
        #expect(machine.handle(.transportConnectConfirmation).send == .associateRQ(FSMFixtures.rq))
        #expect(machine.receivedPDU(.associateAC(FSMFixtures.ac)).indication == .associateAccepted(FSMFixtures.ac))
        #expect(machine.handle(.pDataRequest(FSMFixtures.data)).send == .dataTF(FSMFixtures.data))
        #expect(machine.receivedPDU(.dataTF(FSMFixtures.data)).indication == .pData(FSMFixtures.data))
        #expect(machine.handle(.releaseRequest).send == .releaseRQ)
        #expect(machine.state == .sta7)
        #expect(machine.receivedPDU(.dataTF(FSMFixtures.data)).protocolAction == .ar6)
        let done = machine.receivedPDU(.releaseRP)
        #expect(done.indication == .releaseConfirmed && done.closeTransport)
        #expect(machine.state == .sta1)
    }

    @Test("Acceptor lifecycle: indication, accept, release, transport close")
    func acceptorLifecycle() {
        var machine = FSM()
        #expect(machine.handle(.transportConnectionIndication).artim == .start)
        #expect(machine.role == .acceptor)
        #expect(machine.receivedPDU(.associateRQ(FSMFixtures.rq)).indication == .associateRequest(FSMFixtures.rq))
        #expect(machine.handle(.associateAcceptResponse(FSMFixtures.ac)).send == .associateAC(FSMFixtures.ac))
        #expect(machine.receivedPDU(.releaseRQ).indication == .releaseRequested(collision: false))
        #expect(machine.handle(.pDataRequest(FSMFixtures.data)).protocolAction == .ar7)
        let rp = machine.handle(.releaseResponse)
        #expect(rp.send == .releaseRP && rp.artim == .start)
        #expect(machine.handle(.transportClosed).protocolAction == .ar5)
        #expect(machine.state == .sta1)
    }

    @Test("Release collision, requestor side: Sta7 -> Sta9 -> Sta11 -> Sta1")
    func collisionRequestor() {
        var machine = FSM(state: .sta6, role: .requestor)
        _ = machine.handle(.releaseRequest)
        #expect(machine.receivedPDU(.releaseRQ).indication == .releaseRequested(collision: true))
        #expect(machine.state == .sta9)
        #expect(machine.handle(.releaseResponse).send == .releaseRP)
        #expect(machine.state == .sta11)
        #expect(machine.receivedPDU(.releaseRP).closeTransport)
        #expect(machine.state == .sta1)
    }

    @Test("Release collision, acceptor side: Sta7 -> Sta10 -> Sta12 -> Sta13")
    func collisionAcceptor() {
        var machine = FSM(state: .sta6, role: .acceptor)
        _ = machine.handle(.releaseRequest)
        _ = machine.receivedPDU(.releaseRQ)
        #expect(machine.state == .sta10)
        #expect(machine.receivedPDU(.releaseRP).indication == .releaseConfirmed)
        #expect(machine.state == .sta12)
        let rp = machine.handle(.releaseResponse)
        #expect(rp.send == .releaseRP && rp.artim == .start)
        #expect(machine.state == .sta13)
        #expect(machine.handle(.artimExpired).closeTransport)
        #expect(machine.state == .sta1)
    }

    @Test("An invalid PDU in Sta6 aborts with the reason of the decoding error")
    func invalidPDUReason() {
        var machine = FSM(state: .sta6, role: .acceptor)
        let action = machine.receivedInvalidPDU(.unrecognizedPDUType(0x09))
        #expect(action.send == .abort(.provider(.unrecognizedPDU)))
        #expect(action.indication == .providerAborted(.protocolError(.unrecognizedPDU)))
        #expect(machine.state == .sta13)
    }

    @Test("Undefined events leave the state unchanged and do nothing")
    func undefinedEvents() {
        var machine = FSM()
        #expect(machine.handle(.pDataRequest(FSMFixtures.data)) == .invalidEvent)
        #expect(machine.handle(.releaseRequest) == .invalidEvent)
        #expect(machine.handle(.artimExpired) == .invalidEvent)
        #expect(machine.state == .sta1)
        #expect(machine.role == nil)
        #expect(FSMFixtures.event(7).number == 7)
    }
}
