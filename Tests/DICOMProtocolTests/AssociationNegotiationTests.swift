import NIOCore
import Testing

@testable import DICOMProtocol

@Suite("Association negotiation (PS3.8 §9.3.2-§9.3.4, PS3.7 Annex D.3.3)", .timeLimit(.minutes(2)))
struct AssociationNegotiationTests {
    static let verification = "1.2.840.10008.1.1"
    static let ctImageStorage = "1.2.840.10008.5.1.4.1.1.2"
    static let studyRootGet = "1.2.840.10008.5.1.4.1.2.2.3"
    static let implicitLE = "1.2.840.10008.1.2"
    static let explicitLE = "1.2.840.10008.1.2.1"
    static let jpegBaseline = "1.2.840.10008.1.2.4.50"

    static func parameters(_ contexts: [ProposedPresentationContext]) -> AssociationRequestParameters {
        AssociationRequestParameters(
            callingAETitle: "PXSCU",
            calledAETitle: "PXSCP",
            presentationContexts: contexts,
            maximumPDULength: 32768,
            implementationClassUID: "1.2.826.0.1.3680043.10.1",
            implementationVersionName: "PX_0"
        )
    }

    static let policy = AssociationAcceptorPolicy(
        aeTitle: "PXSCP",
        acceptedCalledAETitles: ["PXSCP"],
        supportedAbstractSyntaxes: [
            verification: .init(transferSyntaxes: [implicitLE]),
            ctImageStorage: .init(transferSyntaxes: [explicitLE, implicitLE], allowsRequestorSCP: true),
            studyRootGet: .init(transferSyntaxes: [implicitLE, explicitLE]),
        ],
        maximumPDULength: 65536,
        implementationClassUID: "1.2.826.0.1.3680043.10.2",
        implementationVersionName: "PX_SCP"
    )

    @Test("Presentation context IDs are odd and allocated per association: 1, 3, 5")
    func oddIDs() throws {
        let contexts = (0..<3).map {
            ProposedPresentationContext(abstractSyntax: "1.2.\($0)", transferSyntaxes: [Self.implicitLE])
        }
        let rq = try Self.parameters(contexts).makeAssociateRQ()
        #expect(rq.presentationContexts.map(\.id) == [1, 3, 5])
        // A second association starts again at 1.
        let again = try Self.parameters(contexts).makeAssociateRQ()
        #expect(again.presentationContexts.map(\.id) == [1, 3, 5])
        #expect(rq.userInformation.maximumLength == 32768)
        #expect(rq.userInformation.implementationVersionName == "PX_0")
    }

    @Test("128 contexts use IDs up to 255; 129 throw tooManyPresentationContexts")
    func contextLimit() throws {
        let proposal = ProposedPresentationContext(
            abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        let rq = try Self.parameters(Array(repeating: proposal, count: 128)).makeAssociateRQ()
        #expect(rq.presentationContexts.last?.id == 255)
        let error = #expect(throws: PDUError.self) {
            try Self.parameters(Array(repeating: proposal, count: 129)).makeAssociateRQ()
        }
        #expect(error?.code == .tooManyPresentationContexts)
        #expect(throws: PDUError.self) { try Self.parameters([]).makeAssociateRQ() }
        #expect(throws: PDUError.self) {
            try Self.parameters([ProposedPresentationContext(abstractSyntax: "1.2", transferSyntaxes: [])])
                .makeAssociateRQ()
        }
    }

    @Test("Acceptor picks the first transfer syntax of ITS order that the requestor offered; results 0, 3, 4")
    func contextResults() throws {
        let rq = try Self.parameters([
            ProposedPresentationContext(
                abstractSyntax: Self.ctImageStorage, transferSyntaxes: [Self.implicitLE, Self.explicitLE]),
            ProposedPresentationContext(abstractSyntax: "1.2.3.4.5.6", transferSyntaxes: [Self.implicitLE]),
            ProposedPresentationContext(abstractSyntax: Self.ctImageStorage, transferSyntaxes: [Self.jpegBaseline]),
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE]),
        ]).makeAssociateRQ()
        guard case .accept(let ac, let negotiated) = Self.policy.evaluate(rq) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(
            ac.presentationContexts.map(\.result) == [
                .acceptance, .abstractSyntaxNotSupported, .transferSyntaxesNotSupported, .acceptance,
            ])
        #expect(ac.presentationContexts[0].transferSyntax == Self.explicitLE)
        #expect(ac.calledAETitle == "PXSCP" && ac.callingAETitle == "PXSCU")
        #expect(negotiated.localRole == .acceptor)
        #expect(negotiated.acceptedContexts.map(\.id) == [1, 7])
        #expect(negotiated.rejectedContexts.map(\.id) == [3, 5])
        #expect(negotiated.context(id: 1)?.transferSyntax == Self.explicitLE)
        #expect(negotiated.context(abstractSyntax: Self.verification)?.id == 7)
        #expect(negotiated.peerMaximumPDULength == 32768)
        #expect(negotiated.localMaximumPDULength == 65536)
        #expect(negotiated.peerImplementationVersionName == "PX_0")

        // The AC survives the wire, and the requestor derives the same contexts from it.
        var wire = ByteBuffer()
        try ac.encode(into: &wire)
        let decoded = try AssociateAC(from: &wire)
        #expect(decoded == ac)
        let requestorView = try NegotiatedAssociation(request: rq, accept: decoded)
        #expect(requestorView.acceptedContexts == negotiated.acceptedContexts)
        #expect(requestorView.peerMaximumPDULength == 65536)
        #expect(requestorView.peerImplementationClassUID == "1.2.826.0.1.3680043.10.2")
    }

    @Test(
        "Rejections: protocol version, application context, called AE, calling AE",
        arguments: [
            (
                "protocol version",
                AssociateRJ(
                    result: .rejectedPermanent, source: .serviceProviderACSE, reason: .protocolVersionNotSupported)
            ),
            (
                "application context",
                AssociateRJ(
                    result: .rejectedPermanent, source: .serviceUser, reason: .applicationContextNameNotSupported)
            ),
            (
                "called AE",
                AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .calledAETitleNotRecognized)
            ),
            (
                "calling AE",
                AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .callingAETitleNotRecognized)
            ),
        ]
    )
    func rejections(what: String, expected: AssociateRJ) throws {
        var rq = try Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        .makeAssociateRQ()
        var policy = Self.policy
        switch what {
        case "protocol version": rq.protocolVersion = 0x0002
        case "application context": rq.applicationContextName = "1.2.3"
        case "called AE": rq.calledAETitle = "OTHER"
        default: policy.acceptedCallingAETitles = ["TRUSTED"]
        }
        #expect(policy.evaluate(rq) == .reject(expected))
    }

    @Test("Any called AE title is accepted when the policy has no list")
    func anyCalledAE() throws {
        var policy = Self.policy
        policy.acceptedCalledAETitles = nil
        var rq = try Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        .makeAssociateRQ()
        rq.calledAETitle = "WHATEVER"
        guard case .accept = policy.evaluate(rq) else {
            Issue.record("expected acceptance")
            return
        }
    }

    @Test("C-GET: the requestor proposes the SCP role for storage; roles are negotiated per SOP class")
    func roleSelection() throws {
        let rq = try Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.studyRootGet, transferSyntaxes: [Self.implicitLE]),
            ProposedPresentationContext(
                abstractSyntax: Self.ctImageStorage,
                transferSyntaxes: [Self.implicitLE],
                roleProposal: .init(scu: false, scp: true)
            ),
            ProposedPresentationContext(
                abstractSyntax: Self.ctImageStorage,
                transferSyntaxes: [Self.explicitLE],
                roleProposal: .init(scu: true, scp: true)
            ),
            ProposedPresentationContext(
                abstractSyntax: Self.verification,
                transferSyntaxes: [Self.implicitLE],
                roleProposal: .init(scu: true, scp: true)
            ),
        ]).makeAssociateRQ()
        // One 0x54 per SOP class; the first proposal wins.
        #expect(
            rq.userInformation.roleSelections == [
                RoleSelection(sopClassUID: Self.ctImageStorage, scuRole: false, scpRole: true),
                RoleSelection(sopClassUID: Self.verification, scuRole: true, scpRole: true),
            ])
        guard case .accept(let ac, let negotiated) = Self.policy.evaluate(rq) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(
            ac.userInformation.roleSelections == [
                RoleSelection(sopClassUID: Self.ctImageStorage, scuRole: false, scpRole: true),
                // Verification does not allow the requestor as SCP.
                RoleSelection(sopClassUID: Self.verification, scuRole: true, scpRole: false),
            ])
        let get = try #require(negotiated.context(abstractSyntax: Self.studyRootGet))
        #expect(get.requestorIsSCU && !get.requestorIsSCP)
        let ct = try #require(negotiated.context(abstractSyntax: Self.ctImageStorage))
        #expect(!ct.requestorIsSCU && ct.requestorIsSCP)
        let echo = try #require(negotiated.context(abstractSyntax: Self.verification))
        #expect(echo.requestorIsSCU && !echo.requestorIsSCP)

        // Without a 0x54 in the AC, default roles apply: the requestor is SCU only.
        var plainAC = ac
        plainAC.userInformation.roleSelections = []
        let defaults = try NegotiatedAssociation(request: rq, accept: plainAC)
        let ctDefault = try #require(defaults.context(abstractSyntax: Self.ctImageStorage))
        #expect(ctDefault.requestorIsSCU && !ctDefault.requestorIsSCP)
    }

    @Test("A storage context the requestor takes only as SCP (C-GET) gets the sending preference (issue 20)")
    func sendingPreferenceForRequestorSCP() throws {
        var policy = Self.policy
        // Receiving, a compressed syntax first (no transcoding); sending, what every uncompressed file can go in.
        policy.supportedAbstractSyntaxes[Self.ctImageStorage] = .init(
            transferSyntaxes: [Self.jpegBaseline, Self.explicitLE, Self.implicitLE], allowsRequestorSCP: true)
        policy.supportedAbstractSyntaxes[Self.ctImageStorage]?.transferSyntaxesAsSender = [
            Self.explicitLE, Self.implicitLE, Self.jpegBaseline,
        ]
        func chosen(_ role: ProposedPresentationContext.RoleProposal?) throws -> String? {
            let rq = try Self.parameters([
                ProposedPresentationContext(abstractSyntax: Self.studyRootGet, transferSyntaxes: [Self.implicitLE]),
                ProposedPresentationContext(
                    abstractSyntax: Self.ctImageStorage, transferSyntaxes: [Self.jpegBaseline, Self.explicitLE],
                    roleProposal: role),
            ]).makeAssociateRQ()
            guard case .accept(_, let negotiated) = policy.evaluate(rq) else { return nil }
            return negotiated.context(abstractSyntax: Self.ctImageStorage)?.transferSyntax
        }
        #expect(try chosen(.init(scu: false, scp: true)) == Self.explicitLE)
        // The requestor may also send on it, or takes the default role: the receiving preference.
        #expect(try chosen(.init(scu: true, scp: true)) == Self.jpegBaseline)
        #expect(try chosen(nil) == Self.jpegBaseline)
    }

    @Test("Asynchronous operations window is answered 1/1 only when proposed")
    func asyncWindow() throws {
        var parameters = Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        guard case .accept(let plain, _) = Self.policy.evaluate(try parameters.makeAssociateRQ()) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(plain.userInformation.asynchronousOperationsWindow == nil)
        parameters.asynchronousOperationsWindow = AsynchronousOperationsWindow(
            maximumOperationsInvoked: 5, maximumOperationsPerformed: 0)
        guard case .accept(let ac, let negotiated) = Self.policy.evaluate(try parameters.makeAssociateRQ()) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(
            ac.userInformation.asynchronousOperationsWindow
                == AsynchronousOperationsWindow(maximumOperationsInvoked: 1, maximumOperationsPerformed: 1))
        #expect(negotiated.asynchronousOperationsWindow == AsynchronousOperationsWindow())
        #expect(negotiated.maximumOutstandingRequests == 1)
    }

    @Test("An acceptor with a window grants the smaller of the requestor's invoked and its own performed")
    func asyncWindowGranted() throws {
        var policy = Self.policy
        policy.maximumOperationsPerformed = 16
        var parameters = Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        // (requestor invoked, requestor performed) -> acceptor's performed in the AC
        for (invoked, performed, granted) in [(5, 1, 5), (40, 1, 16), (0, 0, 16), (1, 1, 1)]
            as [(UInt16, UInt16, UInt16)]
        {
            parameters.asynchronousOperationsWindow = AsynchronousOperationsWindow(
                maximumOperationsInvoked: invoked, maximumOperationsPerformed: performed)
            let rq = try parameters.makeAssociateRQ()
            guard case .accept(let ac, let acceptorView) = policy.evaluate(rq) else {
                Issue.record("expected acceptance")
                return
            }
            #expect(
                ac.userInformation.asynchronousOperationsWindow
                    == AsynchronousOperationsWindow(
                        maximumOperationsInvoked: 1, maximumOperationsPerformed: granted))
            // The requestor may have `granted` outstanding; the acceptor invokes one at a time.
            let requestorView = try NegotiatedAssociation(request: rq, accept: ac, localRole: .requestor)
            #expect(requestorView.maximumOutstandingRequests == Int(granted))
            #expect(requestorView.asynchronousOperationsWindow.maximumOperationsPerformed == 1)
            #expect(
                acceptorView.asynchronousOperationsWindow
                    == AsynchronousOperationsWindow(
                        maximumOperationsInvoked: 1, maximumOperationsPerformed: granted))
            #expect(acceptorView.maximumOutstandingRequests == 1)
        }
    }

    @Test("The requestor holds an acceptor's answer to what it proposed; no answer means synchronous")
    func asyncWindowBoundedByRequest() throws {
        var parameters = Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        parameters.asynchronousOperationsWindow = AsynchronousOperationsWindow(
            maximumOperationsInvoked: 4, maximumOperationsPerformed: 1)
        let rq = try parameters.makeAssociateRQ()
        guard case .accept(var ac, _) = Self.policy.evaluate(rq) else {
            Issue.record("expected acceptance")
            return
        }
        // An acceptor that grants more than was asked (here: unlimited both ways) is held to the request.
        ac.userInformation.asynchronousOperationsWindow = AsynchronousOperationsWindow(
            maximumOperationsInvoked: 0, maximumOperationsPerformed: 0)
        let generous = try NegotiatedAssociation(request: rq, accept: ac, localRole: .requestor)
        #expect(
            generous.asynchronousOperationsWindow
                == AsynchronousOperationsWindow(maximumOperationsInvoked: 4, maximumOperationsPerformed: 1))
        #expect(generous.maximumOutstandingRequests == 4)
        // DCMTK answers without the sub-item: synchronous.
        ac.userInformation.asynchronousOperationsWindow = nil
        let silent = try NegotiatedAssociation(request: rq, accept: ac, localRole: .requestor)
        #expect(silent.maximumOutstandingRequests == 1)
        // Both unlimited: no bound at all.
        parameters.asynchronousOperationsWindow = AsynchronousOperationsWindow(
            maximumOperationsInvoked: 0, maximumOperationsPerformed: 0)
        let unlimitedRQ = try parameters.makeAssociateRQ()
        ac.userInformation.asynchronousOperationsWindow = AsynchronousOperationsWindow(
            maximumOperationsInvoked: 0, maximumOperationsPerformed: 0)
        let unlimited = try NegotiatedAssociation(request: unlimitedRQ, accept: ac, localRole: .requestor)
        #expect(unlimited.maximumOutstandingRequests == Int.max)
    }

    @Test("User identity is carried to the acceptor")
    func userIdentity() throws {
        var parameters = Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        parameters.userIdentity = UserIdentityRQ(
            identityType: .username, positiveResponseRequested: false, primaryField: ascii("alice"))
        let rq = try parameters.makeAssociateRQ()
        var wire = ByteBuffer()
        try rq.encode(into: &wire)
        let decoded = try AssociateRQ(from: &wire)
        guard case .accept(_, let negotiated) = Self.policy.evaluate(decoded) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(negotiated.peerUserInformation.userIdentityRequest?.primaryField == ascii("alice"))
    }

    @Test("Requestor rejects an AC that answers an unproposed ID or an unoffered transfer syntax")
    func malformedAC() throws {
        let rq = try Self.parameters([
            ProposedPresentationContext(abstractSyntax: Self.verification, transferSyntaxes: [Self.implicitLE])
        ])
        .makeAssociateRQ()
        let info = UserInformation(maximumLength: 0, implementationClassUID: "1.2")
        let unknownID = AssociateAC(
            calledAETitle: "PXSCP",
            callingAETitle: "PXSCU",
            presentationContexts: [PresentationContextAC(id: 3, result: .acceptance, transferSyntax: Self.implicitLE)],
            userInformation: info
        )
        #expect(throws: PDUError.self) { try NegotiatedAssociation(request: rq, accept: unknownID) }
        let wrongSyntax = AssociateAC(
            calledAETitle: "PXSCP",
            callingAETitle: "PXSCU",
            presentationContexts: [PresentationContextAC(id: 1, result: .acceptance, transferSyntax: Self.explicitLE)],
            userInformation: info
        )
        #expect(throws: PDUError.self) { try NegotiatedAssociation(request: rq, accept: wrongSyntax) }
        let unlimited = try NegotiatedAssociation(
            request: rq,
            accept: AssociateAC(
                calledAETitle: "PXSCP",
                callingAETitle: "PXSCU",
                presentationContexts: [
                    PresentationContextAC(id: 1, result: .acceptance, transferSyntax: Self.implicitLE)
                ],
                userInformation: info
            )
        )
        #expect(unlimited.peerMaximumPDULength == 0)
    }

    @Test("The DCMTK echoscu RQ is accepted by a verification policy")
    func dcmtkRQ() throws {
        var bytes = buffer(hex: dcmtkEchoAssociateRQ)
        let rq = try AssociateRQ(from: &bytes)
        var policy = Self.policy
        policy.acceptedCalledAETitles = ["ANY-SCP"]
        guard case .accept(let ac, let negotiated) = policy.evaluate(rq) else {
            Issue.record("expected acceptance")
            return
        }
        #expect(
            ac.presentationContexts == [
                PresentationContextAC(id: 1, result: .acceptance, transferSyntax: Self.implicitLE)
            ])
        #expect(negotiated.peerMaximumPDULength == 16384)
        #expect(negotiated.peerImplementationClassUID == "1.2.276.0.7230010.3.0.3.6.7")
    }
}
