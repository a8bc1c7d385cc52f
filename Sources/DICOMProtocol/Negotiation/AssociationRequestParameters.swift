/// What an association-requestor asks for; turns into an A-ASSOCIATE-RQ (PS3.8 §9.3.2, PS3.7 Annex D.3.3).
public struct AssociationRequestParameters: Sendable, Hashable {
    /// This side's AE title.
    public var callingAETitle: String
    /// The peer's AE title.
    public var calledAETitle: String
    /// The contexts to propose, in order; at most 128.
    public var presentationContexts: [ProposedPresentationContext]
    /// The largest P-DATA-TF variable field this side accepts (sub-item 0x51); `0` means unlimited.
    public var maximumPDULength: UInt32
    /// This implementation's class UID (sub-item 0x52).
    public var implementationClassUID: String
    /// This implementation's version name (sub-item 0x55), at most 16 characters.
    public var implementationVersionName: String?
    /// An asynchronous operations window to propose (sub-item 0x53); `nil` means synchronous, the default.
    public var asynchronousOperationsWindow: AsynchronousOperationsWindow?
    /// A user identity to present (sub-item 0x58).
    public var userIdentity: UserIdentityRQ?
    /// SOP class extended negotiation sub-items (0x56) to send verbatim.
    public var extendedNegotiations: [SOPClassExtendedNegotiation]
    /// The application context name; the DICOM one by default.
    public var applicationContextName: String

    /// Creates request parameters.
    public init(
        callingAETitle: String,
        calledAETitle: String,
        presentationContexts: [ProposedPresentationContext],
        maximumPDULength: UInt32 = 16384,
        implementationClassUID: String,
        implementationVersionName: String? = nil,
        asynchronousOperationsWindow: AsynchronousOperationsWindow? = nil,
        userIdentity: UserIdentityRQ? = nil,
        extendedNegotiations: [SOPClassExtendedNegotiation] = [],
        applicationContextName: String = AssociateRQ.dicomApplicationContextName
    ) {
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
        self.presentationContexts = presentationContexts
        self.maximumPDULength = maximumPDULength
        self.implementationClassUID = implementationClassUID
        self.implementationVersionName = implementationVersionName
        self.asynchronousOperationsWindow = asynchronousOperationsWindow
        self.userIdentity = userIdentity
        self.extendedNegotiations = extendedNegotiations
        self.applicationContextName = applicationContextName
    }

    /// The largest number of presentation contexts one association can propose: the odd IDs 1...255.
    public static let maximumPresentationContexts = 128

    /// Builds the A-ASSOCIATE-RQ, allocating presentation-context IDs 1, 3, 5, ... in proposal order
    /// (PS3.8 §9.3.2.2: odd integers between 1 and 255).
    ///
    /// One role selection sub-item (0x54) is emitted per distinct abstract syntax that has a ``ProposedPresentationContext/roleProposal``;
    /// the first proposal of a SOP class wins.
    ///
    /// - Throws: ``PDUError/tooManyPresentationContexts(_:)`` beyond 128 contexts;
    ///   ``PDUError/missingItem(_:in:)`` if there is no context or a context has no transfer syntax.
    public func makeAssociateRQ() throws -> AssociateRQ {
        guard self.presentationContexts.count <= Self.maximumPresentationContexts else {
            throw PDUError.tooManyPresentationContexts(self.presentationContexts.count)
        }
        guard !self.presentationContexts.isEmpty else {
            throw PDUError.missingItem("presentation context", in: "association request")
        }
        var contexts: [PresentationContextRQ] = []
        contexts.reserveCapacity(self.presentationContexts.count)
        var roleSelections: [RoleSelection] = []
        var rolesSeen = Set<String>()
        for (index, proposal) in self.presentationContexts.enumerated() {
            guard !proposal.transferSyntaxes.isEmpty else {
                throw PDUError.missingItem("transfer syntax", in: "proposed context for \(proposal.abstractSyntax)")
            }
            contexts.append(
                PresentationContextRQ(
                    id: UInt8(index * 2 + 1),
                    abstractSyntax: proposal.abstractSyntax,
                    transferSyntaxes: proposal.transferSyntaxes
                )
            )
            if let role = proposal.roleProposal, rolesSeen.insert(proposal.abstractSyntax).inserted {
                roleSelections.append(
                    RoleSelection(sopClassUID: proposal.abstractSyntax, scuRole: role.scu, scpRole: role.scp))
            }
        }
        return AssociateRQ(
            calledAETitle: self.calledAETitle,
            callingAETitle: self.callingAETitle,
            applicationContextName: self.applicationContextName,
            presentationContexts: contexts,
            userInformation: UserInformation(
                maximumLength: self.maximumPDULength,
                implementationClassUID: self.implementationClassUID,
                implementationVersionName: self.implementationVersionName,
                asynchronousOperationsWindow: self.asynchronousOperationsWindow,
                roleSelections: roleSelections,
                extendedNegotiations: self.extendedNegotiations,
                userIdentityRequest: self.userIdentity
            )
        )
    }
}
