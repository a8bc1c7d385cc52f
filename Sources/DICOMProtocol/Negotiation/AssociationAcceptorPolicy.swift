/// What an association-acceptor supports; evaluates an A-ASSOCIATE-RQ into an AC or an RJ
/// (PS3.8 §9.3.3, §9.3.4, PS3.7 Annex D.3.3).
public struct AssociationAcceptorPolicy: Sendable, Hashable {
    /// What the acceptor supports for one abstract syntax.
    public struct SupportedAbstractSyntax: Sendable, Hashable {
        /// Transfer syntaxes in this acceptor's order of preference: the first one the requestor offered wins.
        public var transferSyntaxes: [String]
        /// Whether the requestor may act as SCU (the normal case).
        public var allowsRequestorSCU: Bool
        /// Whether the requestor may act as SCP (storage SOP classes when serving C-GET).
        public var allowsRequestorSCP: Bool
        /// The preference for a context of this abstract syntax whose requestor takes the SCP role only (a C-GET
        /// requestor's storage context, PS3.4 §C.4.3, PS3.7 §D.3.3.4): there this acceptor is the one that
        /// sends, so it picks what it can produce, not what it would like to receive. `nil`: ``transferSyntaxes``.
        public var transferSyntaxesAsSender: [String]?

        /// Creates a supported abstract syntax.
        public init(transferSyntaxes: [String], allowsRequestorSCU: Bool = true, allowsRequestorSCP: Bool = false) {
            self.transferSyntaxes = transferSyntaxes
            self.allowsRequestorSCU = allowsRequestorSCU
            self.allowsRequestorSCP = allowsRequestorSCP
        }
    }

    /// The result of evaluating an A-ASSOCIATE-RQ.
    public enum Decision: Sendable, Hashable {
        /// Send this A-ASSOCIATE-AC (Evt7); the association will be as described.
        case accept(AssociateAC, NegotiatedAssociation)
        /// Send this A-ASSOCIATE-RJ (Evt8).
        case reject(AssociateRJ)
    }

    /// The AE title this acceptor answers to, echoed in the AC.
    public var aeTitle: String
    /// Called AE titles accepted; `nil` accepts any. Usually `[aeTitle]`.
    public var acceptedCalledAETitles: Set<String>?
    /// Calling AE titles accepted; `nil` accepts any.
    public var acceptedCallingAETitles: Set<String>?
    /// Supported abstract syntaxes keyed by UID.
    public var supportedAbstractSyntaxes: [String: SupportedAbstractSyntax]
    /// The largest P-DATA-TF variable field this side accepts (sub-item 0x51); `0` means unlimited.
    public var maximumPDULength: UInt32
    /// This implementation's class UID.
    public var implementationClassUID: String
    /// This implementation's version name.
    public var implementationVersionName: String?
    /// How many of the requestor's operations this acceptor accepts to have outstanding (the
    /// *performed* of its answer to an asynchronous operations window, PS3.7 §D.3.3.3); `1`, the
    /// default, is synchronous operation. Requests beyond the first wait in the transport until the
    /// one before has been answered: operations are still performed one after another.
    public var maximumOperationsPerformed: UInt16 = 1

    /// The transfer syntax DCMTK echoes in rejected contexts: some peers get confused by an empty one.
    public static let rejectedContextTransferSyntax = "1.2.840.10008.1.2"

    /// Creates a policy.
    public init(
        aeTitle: String,
        acceptedCalledAETitles: Set<String>?,
        acceptedCallingAETitles: Set<String>? = nil,
        supportedAbstractSyntaxes: [String: SupportedAbstractSyntax],
        maximumPDULength: UInt32 = 16384,
        implementationClassUID: String,
        implementationVersionName: String? = nil
    ) {
        self.aeTitle = aeTitle
        self.acceptedCalledAETitles = acceptedCalledAETitles
        self.acceptedCallingAETitles = acceptedCallingAETitles
        self.supportedAbstractSyntaxes = supportedAbstractSyntaxes
        self.maximumPDULength = maximumPDULength
        self.implementationClassUID = implementationClassUID
        self.implementationVersionName = implementationVersionName
    }

    /// Evaluates an A-ASSOCIATE-RQ.
    ///
    /// Rejections, checked in this order: protocol version without bit 0 (ACSE provider, reason 2),
    /// application context other than DICOM's (service user, reason 2), called AE title not accepted
    /// (service user, reason 7), calling AE title not accepted (service user, reason 3); all permanent.
    ///
    /// Otherwise every context gets a result: 0 with the first transfer syntax of *this* policy's order that
    /// the requestor offered (``SupportedAbstractSyntax/transferSyntaxesAsSender`` for a SOP class whose
    /// requestor takes only the SCP role), 3 if the abstract syntax is unsupported, 4 if no offered transfer syntax is
    /// supported, 2 (no reason) for an even or duplicate ID. Role selections (0x54) are answered for supported
    /// SOP classes; an asynchronous operations window (0x53) is answered with *invoked* 1 (this side
    /// invokes nothing asynchronously) and *performed* the smaller of the requestor's *invoked* and
    /// ``maximumOperationsPerformed``. An association whose contexts
    /// are all rejected is still accepted, as DCMTK does; the requestor decides.
    public func evaluate(_ request: AssociateRQ) -> Decision {
        if !request.supportsProtocolVersion1 {
            return .reject(
                AssociateRJ(
                    result: .rejectedPermanent, source: .serviceProviderACSE, reason: .protocolVersionNotSupported))
        }
        if request.applicationContextName != AssociateRQ.dicomApplicationContextName {
            return .reject(
                AssociateRJ(
                    result: .rejectedPermanent, source: .serviceUser, reason: .applicationContextNameNotSupported))
        }
        if let called = self.acceptedCalledAETitles, !called.contains(request.calledAETitle) {
            return .reject(
                AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .calledAETitleNotRecognized))
        }
        if let calling = self.acceptedCallingAETitles, !calling.contains(request.callingAETitle) {
            return .reject(
                AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .callingAETitleNotRecognized))
        }

        // The roles first: a context the requestor takes only as SCP is one this acceptor sends on.
        var roles: [RoleSelection] = []
        var rolesSeen = Set<String>()
        for proposal in request.userInformation.roleSelections where rolesSeen.insert(proposal.sopClassUID).inserted {
            guard let supported = self.supportedAbstractSyntaxes[proposal.sopClassUID] else { continue }
            roles.append(
                RoleSelection(
                    sopClassUID: proposal.sopClassUID,
                    scuRole: proposal.scuRole && supported.allowsRequestorSCU,
                    scpRole: proposal.scpRole && supported.allowsRequestorSCP
                )
            )
        }
        let sendingOnly = Set(roles.filter { $0.scpRole && !$0.scuRole }.map(\.sopClassUID))

        var answers: [PresentationContextAC] = []
        answers.reserveCapacity(request.presentationContexts.count)
        var seenIDs = Set<UInt8>()
        for proposal in request.presentationContexts {
            guard proposal.id & 1 == 1, seenIDs.insert(proposal.id).inserted else {
                answers.append(
                    PresentationContextAC(
                        id: proposal.id, result: .noReason, transferSyntax: Self.rejectedContextTransferSyntax))
                continue
            }
            guard let supported = self.supportedAbstractSyntaxes[proposal.abstractSyntax] else {
                answers.append(
                    PresentationContextAC(
                        id: proposal.id, result: .abstractSyntaxNotSupported,
                        transferSyntax: Self.rejectedContextTransferSyntax)
                )
                continue
            }
            let preference =
                sendingOnly.contains(proposal.abstractSyntax)
                ? supported.transferSyntaxesAsSender ?? supported.transferSyntaxes : supported.transferSyntaxes
            guard let chosen = preference.first(where: { proposal.transferSyntaxes.contains($0) })
            else {
                answers.append(
                    PresentationContextAC(
                        id: proposal.id, result: .transferSyntaxesNotSupported,
                        transferSyntax: Self.rejectedContextTransferSyntax)
                )
                continue
            }
            answers.append(PresentationContextAC(id: proposal.id, result: .acceptance, transferSyntax: chosen))
        }

        let accept = AssociateAC(
            calledAETitle: request.calledAETitle,
            callingAETitle: request.callingAETitle,
            presentationContexts: answers,
            userInformation: UserInformation(
                maximumLength: self.maximumPDULength,
                implementationClassUID: self.implementationClassUID,
                implementationVersionName: self.implementationVersionName,
                asynchronousOperationsWindow: request.userInformation.asynchronousOperationsWindow.map {
                    AsynchronousOperationsWindow(
                        maximumOperationsInvoked: 1,
                        maximumOperationsPerformed: NegotiatedAssociation.smaller(
                            $0.maximumOperationsInvoked, self.maximumOperationsPerformed))
                },
                roleSelections: roles
            )
        )
        do {
            let negotiated = try NegotiatedAssociation(request: request, accept: accept, localRole: .acceptor)
            return .accept(accept, negotiated)
        } catch {
            // Unreachable: every answer above echoes a proposed ID and an offered transfer syntax.
            return .reject(AssociateRJ(result: .rejectedTransient, source: .serviceUser, reason: .noReasonGiven))
        }
    }
}
