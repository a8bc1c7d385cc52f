import DICOMData
import DICOMProtocol

/// A Query/Retrieve information model and its FIND, MOVE and GET SOP classes (PS3.4 §C.6).
public enum QueryRetrieveModel: String, Sendable, Hashable, CaseIterable {
    /// Patient Root (PS3.4 §C.6.1).
    case patientRoot
    /// Study Root (PS3.4 §C.6.2).
    case studyRoot

    /// The C-FIND SOP class.
    public var findSOPClass: String {
        self == .patientRoot ? WellKnownUID.patientRootQueryRetrieveFind : WellKnownUID.studyRootQueryRetrieveFind
    }
    /// The C-MOVE SOP class.
    public var moveSOPClass: String {
        self == .patientRoot ? WellKnownUID.patientRootQueryRetrieveMove : WellKnownUID.studyRootQueryRetrieveMove
    }
    /// The C-GET SOP class.
    public var getSOPClass: String {
        self == .patientRoot ? WellKnownUID.patientRootQueryRetrieveGet : WellKnownUID.studyRootQueryRetrieveGet
    }
}

/// Query/Retrieve Level (0008,0052) (PS3.4 §C.2.1.1).
public enum QueryRetrieveLevel: String, Sendable, Hashable, CaseIterable {
    case patient = "PATIENT"
    case study = "STUDY"
    case series = "SERIES"
    case image = "IMAGE"
}

extension ProposedPresentationContext {
    /// The Verification SOP class with the uncompressed transfer syntaxes.
    public static var verification: ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: WellKnownUID.verificationSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
    }

    /// The C-FIND SOP class of a model.
    public static func find(_ model: QueryRetrieveModel) -> ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: model.findSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
    }

    /// The C-MOVE SOP class of a model.
    public static func move(_ model: QueryRetrieveModel) -> ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: model.moveSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
    }

    /// The C-GET SOP class of a model, plus one context per storage SOP class with this side proposed as
    /// SCP (role selection, PS3.7 Annex D.3.3.4) so that the C-STORE sub-operations can arrive on the association.
    ///
    /// At most 127 storage SOP classes fit next to the GET context.
    public static func get(
        _ model: QueryRetrieveModel,
        storageSOPClasses: [String] = ProposedPresentationContext.commonStorageSOPClasses,
        transferSyntaxes: [String] = TransferSyntaxLists.uncompressed
    ) -> [ProposedPresentationContext] {
        var contexts = [
            ProposedPresentationContext(
                abstractSyntax: model.getSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
        ]
        for uid in storageSOPClasses.prefix(AssociationRequestParameters.maximumPresentationContexts - 1) {
            contexts.append(
                ProposedPresentationContext(
                    abstractSyntax: uid,
                    transferSyntaxes: transferSyntaxes,
                    roleProposal: .init(scu: false, scp: true)
                )
            )
        }
        return contexts
    }

    /// Storage SOP classes most archives hold, for C-GET proposals (PS3.4 §B.5).
    public static let commonStorageSOPClasses: [String] = [
        "1.2.840.10008.5.1.4.1.1.2", "1.2.840.10008.5.1.4.1.1.2.1", "1.2.840.10008.5.1.4.1.1.4",
        "1.2.840.10008.5.1.4.1.1.4.1",
        "1.2.840.10008.5.1.4.1.1.1", "1.2.840.10008.5.1.4.1.1.1.1", "1.2.840.10008.5.1.4.1.1.1.1.1",
        "1.2.840.10008.5.1.4.1.1.1.2",
        "1.2.840.10008.5.1.4.1.1.1.2.1", "1.2.840.10008.5.1.4.1.1.1.3", "1.2.840.10008.5.1.4.1.1.6.1",
        "1.2.840.10008.5.1.4.1.1.3.1",
        "1.2.840.10008.5.1.4.1.1.7", "1.2.840.10008.5.1.4.1.1.7.1", "1.2.840.10008.5.1.4.1.1.7.2",
        "1.2.840.10008.5.1.4.1.1.7.3",
        "1.2.840.10008.5.1.4.1.1.7.4", "1.2.840.10008.5.1.4.1.1.12.1", "1.2.840.10008.5.1.4.1.1.12.2",
        "1.2.840.10008.5.1.4.1.1.20",
        "1.2.840.10008.5.1.4.1.1.128", "1.2.840.10008.5.1.4.1.1.130", "1.2.840.10008.5.1.4.1.1.481.1",
        "1.2.840.10008.5.1.4.1.1.481.2",
        "1.2.840.10008.5.1.4.1.1.481.3", "1.2.840.10008.5.1.4.1.1.481.5", "1.2.840.10008.5.1.4.1.1.88.11",
        "1.2.840.10008.5.1.4.1.1.88.22",
        "1.2.840.10008.5.1.4.1.1.88.33", "1.2.840.10008.5.1.4.1.1.88.59", "1.2.840.10008.5.1.4.1.1.104.1",
        "1.2.840.10008.5.1.4.1.1.11.1",
        "1.2.840.10008.5.1.4.1.1.66.4", "1.2.840.10008.5.1.4.1.1.77.1.4", "1.2.840.10008.5.1.4.1.1.13.1.3",
        "1.2.840.10008.5.1.4.1.1.6.2",
    ]
}
