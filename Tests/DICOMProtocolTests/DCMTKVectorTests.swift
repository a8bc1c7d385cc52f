import NIOCore
import Testing

@testable import DICOMProtocol

@Suite("Vectors captured from DCMTK 3.6.7 storescp", .timeLimit(.minutes(2)))
struct DCMTKVectorTests {
    static let ct = "1.2.840.10008.5.1.4.1.1.2"
    static let implicitLE = "1.2.840.10008.1.2"
    static let explicitLE = "1.2.840.10008.1.2.1"

    static func parameters(_ contexts: [ProposedPresentationContext], window: AsynchronousOperationsWindow? = nil)
        -> AssociationRequestParameters
    {
        AssociationRequestParameters(
            callingAETitle: "PXSCU",
            calledAETitle: "STORESCP",
            presentationContexts: contexts,
            maximumPDULength: 16384,
            implementationClassUID: "1.2.826.0.1.3680043.10.1",
            implementationVersionName: "PX_CAPTURE",
            asynchronousOperationsWindow: window
        )
    }

    static let mixedProposals = [
        ProposedPresentationContext(abstractSyntax: "1.2.840.10008.1.1", transferSyntaxes: [implicitLE]),
        ProposedPresentationContext(
            abstractSyntax: ct, transferSyntaxes: [explicitLE, implicitLE], roleProposal: .init(scu: false, scp: true)),
        ProposedPresentationContext(abstractSyntax: "1.2.3.4.5.6.7", transferSyntaxes: [implicitLE]),
        ProposedPresentationContext(abstractSyntax: ct, transferSyntaxes: ["1.2.840.10008.1.2.4.999"]),
    ]

    @Test("Our request builder reproduces the captured RQs byte for byte")
    func builderMatchesCapturedRQ() throws {
        var verification = ByteBuffer()
        try Self.parameters([
            ProposedPresentationContext(abstractSyntax: "1.2.840.10008.1.1", transferSyntaxes: [Self.implicitLE])
        ])
        .makeAssociateRQ().encode(into: &verification)
        #expect(hex(verification) == capturedVerificationRQ)

        var mixed = ByteBuffer()
        try Self.parameters(
            Self.mixedProposals,
            window: AsynchronousOperationsWindow(maximumOperationsInvoked: 5, maximumOperationsPerformed: 5)
        )
        .makeAssociateRQ().encode(into: &mixed)
        #expect(hex(mixed) == capturedMixedRQ)
    }

    @Test("storescp's verification AC decodes, re-encodes byte for byte and negotiates")
    func verificationAC() throws {
        var input = buffer(hex: storescpVerificationAC)
        let ac = try AssociateAC(from: &input)
        var out = ByteBuffer()
        try ac.encode(into: &out)
        #expect(hex(out) == storescpVerificationAC)
        #expect(ac.calledAETitle == "STORESCP")
        #expect(ac.userInformation.implementationVersionName == "OFFIS_DCMTK_367")

        var rqBytes = buffer(hex: capturedVerificationRQ)
        let rq = try AssociateRQ(from: &rqBytes)
        let negotiated = try NegotiatedAssociation(request: rq, accept: ac)
        #expect(
            negotiated.acceptedContexts == [
                .init(
                    id: 1, abstractSyntax: "1.2.840.10008.1.1", transferSyntax: Self.implicitLE, requestorIsSCU: true,
                    requestorIsSCP: false)
            ])
        #expect(negotiated.peerMaximumPDULength == 16384)
    }

    @Test("storescp's mixed AC: results 0, 0, 3, 4; no role answer means default roles")
    func mixedAC() throws {
        var input = buffer(hex: storescpMixedAC)
        let ac = try AssociateAC(from: &input)
        var out = ByteBuffer()
        try ac.encode(into: &out)
        #expect(hex(out) == storescpMixedAC)
        #expect(
            ac.presentationContexts.map(\.result) == [
                .acceptance, .acceptance, .abstractSyntaxNotSupported, .transferSyntaxesNotSupported,
            ])
        #expect(
            ac.presentationContexts.map(\.transferSyntax) == [
                Self.implicitLE, Self.explicitLE, Self.implicitLE, Self.implicitLE,
            ])
        #expect(ac.userInformation.roleSelections.isEmpty)
        #expect(ac.userInformation.asynchronousOperationsWindow == nil)

        var rqBytes = buffer(hex: capturedMixedRQ)
        let rq = try AssociateRQ(from: &rqBytes)
        let negotiated = try NegotiatedAssociation(request: rq, accept: ac)
        #expect(negotiated.acceptedContexts.map(\.id) == [1, 3])
        #expect(
            negotiated.rejectedContexts.map(\.result) == [.abstractSyntaxNotSupported, .transferSyntaxesNotSupported])
        let ctContext = try #require(negotiated.context(abstractSyntax: Self.ct))
        #expect(ctContext.transferSyntax == Self.explicitLE)
        #expect(ctContext.requestorIsSCU && !ctContext.requestorIsSCP)
    }

    @Test("storescp's A-RELEASE-RP and A-ABORT decode")
    func releaseAndAbort() throws {
        var rp = buffer(hex: storescpReleaseRP)
        #expect(try PDU(from: &rp) == .releaseRP)
        var abort = buffer(hex: storescpAbortAfterGarbage)
        #expect(try PDU(from: &abort) == .abort(Abort(source: .serviceUser, reason: .reasonNotSpecified)))
    }

    @Test("Captured PDUs go through the frame decoder in one stream")
    func framedStream() throws {
        var stream = buffer(hex: storescpVerificationAC + storescpReleaseRP)
        var decoder = PDUFrameDecoder(maximumDataPDULength: 16384)
        let first = try #require(try decoder.decode(buffer: &stream))
        let second = try #require(try decoder.decode(buffer: &stream))
        #expect(try PDU(frame: first).type == .associateAC)
        #expect(try PDU(frame: second) == .releaseRP)
        #expect(try decoder.decode(buffer: &stream) == nil)
    }
}
