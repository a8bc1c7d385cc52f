import DICOMData
import DICOMProtocol
import NIOCore
import Testing

@testable import DICOMNetwork

/// The storage contexts a C-GET requestor proposes (issue 20): every syntax px stores unchanged, within the
/// limits of an association and of DCMTK acceptors.
@Suite(.timeLimit(.minutes(1))) struct RetrieveProposalTests {
    static let secondaryCapture = "1.2.840.10008.5.1.4.1.1.7"
    static let mrImage = "1.2.840.10008.5.1.4.1.1.4"

    @Test func defaultProposalFitsOneAssociation() throws {
        let contexts = ProposedPresentationContext.get(.studyRoot)
        #expect(contexts.count <= AssociationRequestParameters.maximumPresentationContexts)
        #expect(contexts[0].abstractSyntax == QueryRetrieveModel.studyRoot.getSOPClass)
        // PS3.8 §9.3.2.2 allows 128 contexts; DCMTK 3.6.7 acceptors drop a context of more than 50 syntaxes.
        #expect(contexts.allSatisfy { $0.transferSyntaxes.count <= 32 })
        let storage = contexts.dropFirst()
        // Every storage context asks for the SCP role (PS3.7 §D.3.3.4), and every common class has one.
        #expect(storage.allSatisfy { $0.roleProposal == .init(scu: false, scp: true) })
        #expect(Set(storage.map(\.abstractSyntax)) == Set(ProposedPresentationContext.commonStorageSOPClasses))
        // The role selection items are one per SOP class, however many contexts it has.
        let rq = try AssociationRequestParameters(
            callingAETitle: "PXSCU", calledAETitle: "PEER", presentationContexts: contexts, maximumPDULength: 16384,
            implementationClassUID: "1.2.3", implementationVersionName: nil
        ).makeAssociateRQ()
        #expect(rq.userInformation.roleSelections.count == ProposedPresentationContext.commonStorageSOPClasses.count)
        // px's own acceptor (px-serve) refuses an A-ASSOCIATE-RQ over 64 KiB.
        var encoded = ByteBuffer()
        try rq.encode(into: &encoded)
        #expect(encoded.readableBytes < 64 * 1024, "\(encoded.readableBytes) bytes")
        // Secondary Capture (among the first classes) gets a context of its own for each common syntax.
        let singles = storage.filter { $0.abstractSyntax == Self.secondaryCapture && $0.transferSyntaxes.count == 1 }
        for syntax in [
            WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian, WellKnownUID.explicitVRBigEndian,
            WellKnownUID.deflatedExplicitVRLittleEndian, "1.2.840.10008.1.2.4.50", "1.2.840.10008.1.2.4.91",
            "1.2.840.10008.1.2.5",
        ] {
            #expect(singles.contains { $0.transferSyntaxes == [syntax] }, "\(syntax)")
        }
        // The first context of each class offers compressed syntaxes first and the uncompressed ones too.
        let first = try #require(storage.first { $0.abstractSyntax == Self.secondaryCapture })
        #expect(first.transferSyntaxes.first == "1.2.840.10008.1.2.4.50")
        #expect(first.transferSyntaxes.contains(WellKnownUID.explicitVRLittleEndian))
    }

    @Test func knownClassesGetEverySyntax() {
        let contexts = ProposedPresentationContext.get(
            .patientRoot, storageSOPClasses: [Self.secondaryCapture, Self.mrImage])
        let singles = Set(contexts.filter { $0.transferSyntaxes.count == 1 }.flatMap(\.transferSyntaxes))
        #expect(singles == Set(TransferSyntaxLists.retrievable))
        #expect(contexts.count <= AssociationRequestParameters.maximumPresentationContexts)
    }

    @Test func storageAcceptsBigEndianLast() {
        #expect(TransferSyntaxLists.storage.last == WellKnownUID.explicitVRBigEndian)
        #expect(TransferSyntaxLists.storage.contains(WellKnownUID.deflatedExplicitVRLittleEndian))
        #expect(Set(TransferSyntaxLists.retrievable) == Set(TransferSyntaxLists.storage))
    }
}
