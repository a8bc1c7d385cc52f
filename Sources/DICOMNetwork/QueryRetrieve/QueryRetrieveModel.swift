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
        find(sopClass: model.findSOPClass)
    }

    /// A C-FIND SOP class (a Query/Retrieve model's, or the Modality Worklist's, PS3.4 Annex K).
    public static func find(sopClass: String) -> ProposedPresentationContext {
        ProposedPresentationContext(abstractSyntax: sopClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
    }

    /// The C-MOVE SOP class of a model.
    public static func move(_ model: QueryRetrieveModel) -> ProposedPresentationContext {
        ProposedPresentationContext(
            abstractSyntax: model.moveSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
    }

    /// The C-GET SOP class of a model, plus the storage contexts its C-STORE sub-operations arrive on, with
    /// this side proposed as SCP (SCP/SCU role selection, PS3.7 §D.3.3.4, PS3.4 §C.4.3): one role selection
    /// item per SOP class, however many contexts it has.
    ///
    /// With `transferSyntaxes`, one context per storage SOP class offering those. Without (the default), the
    /// contexts ask for every syntax px stores unchanged (``TransferSyntaxLists/retrievable``), so that a
    /// peer sends each instance as it holds it instead of transcoding it (or failing to):
    /// - first, for each SOP class, one context offering them all, compressed ones first: the peer's own
    ///   preference picks, and a peer that sends every instance of a SOP class on the first context it
    ///   accepted for the class (dcmqrscp) sends what it prefers;
    /// - then, as far as the 128 contexts of an association go (PS3.8 §9.3.2.2; the first classes in
    ///   `storageSOPClasses` first), one context per transfer syntax, so that a peer that looks for a context
    ///   with the instance's own syntax (Orthanc, pynetdicom) finds one.
    public static func get(
        _ model: QueryRetrieveModel,
        storageSOPClasses: [String] = ProposedPresentationContext.commonStorageSOPClasses,
        transferSyntaxes: [String]? = nil
    ) -> [ProposedPresentationContext] {
        var contexts = [
            ProposedPresentationContext(
                abstractSyntax: model.getSOPClass, transferSyntaxes: TransferSyntaxLists.uncompressed)
        ]
        let budget = AssociationRequestParameters.maximumPresentationContexts - 1
        var seen = Set<String>()
        let classes = Array(storageSOPClasses.filter { seen.insert($0).inserted }.prefix(budget))
        let scp = RoleProposal(scu: false, scp: true)
        if let transferSyntaxes {
            for uid in classes {
                contexts.append(
                    ProposedPresentationContext(
                        abstractSyntax: uid, transferSyntaxes: transferSyntaxes, roleProposal: scp))
            }
            return contexts
        }
        let syntaxes = TransferSyntaxLists.retrievable
        let native =
            TransferSyntaxLists.uncompressed + [
                WellKnownUID.explicitVRBigEndian, WellKnownUID.deflatedExplicitVRLittleEndian,
            ]
        let combined =
            Array(
                syntaxes.filter { TransferSyntax(uid: $0).isEncapsulated }.prefix(
                    Self.combinedContextSyntaxes - native.count))
            + native
        for uid in classes {
            contexts.append(
                ProposedPresentationContext(abstractSyntax: uid, transferSyntaxes: combined, roleProposal: scp))
        }
        // One context per syntax, class by class, while the budget lasts; with many classes each gets the common
        // syntaxes only, so that more classes are served.
        var spare = budget - classes.count
        let perClass = min(syntaxes.count, max(Self.commonRetrievableSyntaxCount, spare / max(classes.count, 1)))
        for uid in classes where spare > 0 {
            for syntax in syntaxes.prefix(min(perClass, spare)) {
                contexts.append(
                    ProposedPresentationContext(abstractSyntax: uid, transferSyntaxes: [syntax], roleProposal: scp))
            }
            spare -= min(perClass, spare)
        }
        return contexts
    }

    /// The most transfer syntaxes one context offers: DCMTK 3.6.7 acceptors (dcmqrscp, Orthanc 1.10) drop an
    /// A-ASSOCIATE-RQ with a context of more than 50 (`DICOM_MAXTRANSFERSYNTAXES`) without answering it.
    static let combinedContextSyntaxes = 32

    /// How many of ``TransferSyntaxLists/retrievable`` get a context of their own per SOP class at least
    /// (when the budget allows): the uncompressed ones, JPEG, JPEG-LS, JPEG 2000, RLE, Big Endian, Deflated.
    static let commonRetrievableSyntaxCount = 13

    /// Storage SOP classes most archives hold, for C-GET proposals (PS3.4 §B.5).
    /// The first ones (CT, MR, Secondary Capture, Ultrasound, X-Ray Angiography, CR, DX, MG) are the ones most
    /// often held compressed: they come first for ``get(_:storageSOPClasses:transferSyntaxes:)``'s budget.
    public static let commonStorageSOPClasses: [String] = [
        "1.2.840.10008.5.1.4.1.1.2", "1.2.840.10008.5.1.4.1.1.4", "1.2.840.10008.5.1.4.1.1.7",
        "1.2.840.10008.5.1.4.1.1.3.1", "1.2.840.10008.5.1.4.1.1.6.1", "1.2.840.10008.5.1.4.1.1.12.1",
        "1.2.840.10008.5.1.4.1.1.1", "1.2.840.10008.5.1.4.1.1.1.1", "1.2.840.10008.5.1.4.1.1.1.2",
        "1.2.840.10008.5.1.4.1.1.2.1", "1.2.840.10008.5.1.4.1.1.4.1",
        "1.2.840.10008.5.1.4.1.1.1.1.1", "1.2.840.10008.5.1.4.1.1.1.2.1", "1.2.840.10008.5.1.4.1.1.1.3",
        "1.2.840.10008.5.1.4.1.1.7.1", "1.2.840.10008.5.1.4.1.1.7.2", "1.2.840.10008.5.1.4.1.1.7.3",
        "1.2.840.10008.5.1.4.1.1.7.4", "1.2.840.10008.5.1.4.1.1.12.2", "1.2.840.10008.5.1.4.1.1.20",
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
