/// The outcome of association negotiation, as seen by either side (PS3.8 §9.3.2 to §9.3.3, PS3.7 Annex D.3.3).
///
/// Build it on the requestor side with ``init(request:accept:localRole:)`` from the RQ sent and the AC
/// received; the acceptor gets it from ``AssociationAcceptorPolicy/evaluate(_:)``.
public struct NegotiatedAssociation: Sendable, Hashable {
    /// An accepted presentation context.
    public struct Context: Sendable, Hashable {
        /// The presentation context ID.
        public var id: UInt8
        /// The abstract syntax (SOP class UID).
        public var abstractSyntax: String
        /// The transfer syntax the acceptor selected.
        public var transferSyntax: String
        /// Whether the association-requestor may act as SCU for this SOP class.
        public var requestorIsSCU: Bool
        /// Whether the association-requestor may act as SCP for this SOP class (e.g. C-STORE sub-operations of C-GET).
        public var requestorIsSCP: Bool

        /// Creates an accepted context.
        public init(
            id: UInt8, abstractSyntax: String, transferSyntax: String, requestorIsSCU: Bool, requestorIsSCP: Bool
        ) {
            self.id = id
            self.abstractSyntax = abstractSyntax
            self.transferSyntax = transferSyntax
            self.requestorIsSCU = requestorIsSCU
            self.requestorIsSCP = requestorIsSCP
        }
    }

    /// A presentation context the acceptor did not accept.
    public struct RejectedContext: Sendable, Hashable {
        /// The presentation context ID.
        public var id: UInt8
        /// The abstract syntax proposed.
        public var abstractSyntax: String
        /// Why it was not accepted.
        public var result: PresentationContextResult
    }

    /// Which side this value describes the association from.
    public var localRole: AssociationStateMachine.Role
    /// The requestor's AE title (the calling AE title).
    public var callingAETitle: String
    /// The acceptor's AE title (the called AE title).
    public var calledAETitle: String
    /// Accepted contexts in ID order.
    public var acceptedContexts: [Context]
    /// Rejected contexts in ID order.
    public var rejectedContexts: [RejectedContext]
    /// The requestor's user information.
    public var requestorUserInformation: UserInformation
    /// The acceptor's user information.
    public var acceptorUserInformation: UserInformation

    /// The largest P-DATA-TF variable field the peer accepts; `0` means unlimited. Fragment to this when sending.
    public var peerMaximumPDULength: UInt32 {
        self.peerUserInformation.maximumLength
    }

    /// The largest P-DATA-TF variable field this side announced; `0` means unlimited. Cap the frame decoder with it.
    public var localMaximumPDULength: UInt32 {
        self.localRole == .requestor
            ? self.requestorUserInformation.maximumLength : self.acceptorUserInformation.maximumLength
    }

    /// The peer's user information (implementation class UID, version name, user identity, ...).
    public var peerUserInformation: UserInformation {
        self.localRole == .requestor ? self.acceptorUserInformation : self.requestorUserInformation
    }

    /// The peer's implementation class UID.
    public var peerImplementationClassUID: String { self.peerUserInformation.implementationClassUID }
    /// The peer's implementation version name.
    public var peerImplementationVersionName: String? { self.peerUserInformation.implementationVersionName }

    /// The asynchronous operations window from this side's point of view (PS3.7 §D.3.3.3): how many
    /// operations this side may have outstanding as invoker, and how many of the peer's it must accept to
    /// perform. `0` means unlimited. Without the sub-item in both the RQ and the AC the association is
    /// synchronous (1/1).
    ///
    /// The acceptor's answer is bounded by the request: its *invoked* by the requestor's *performed*,
    /// its *performed* by the requestor's *invoked*; an answer above the request is held to the request.
    public var asynchronousOperationsWindow: AsynchronousOperationsWindow {
        guard let proposed = self.requestorUserInformation.asynchronousOperationsWindow,
            let answered = self.acceptorUserInformation.asynchronousOperationsWindow
        else { return AsynchronousOperationsWindow() }
        // Requestor-invoked operations, performed by the acceptor; and the other way round.
        let requestorInvokes = Self.smaller(proposed.maximumOperationsInvoked, answered.maximumOperationsPerformed)
        let acceptorInvokes = Self.smaller(answered.maximumOperationsInvoked, proposed.maximumOperationsPerformed)
        return self.localRole == .requestor
            ? AsynchronousOperationsWindow(
                maximumOperationsInvoked: requestorInvokes, maximumOperationsPerformed: acceptorInvokes)
            : AsynchronousOperationsWindow(
                maximumOperationsInvoked: acceptorInvokes, maximumOperationsPerformed: requestorInvokes)
    }

    /// How many requests this side may have outstanding at once: the window's *invoked*, with `0`
    /// (unlimited) as `Int.max`.
    public var maximumOutstandingRequests: Int {
        let invoked = self.asynchronousOperationsWindow.maximumOperationsInvoked
        return invoked == 0 ? Int.max : Int(invoked)
    }

    /// The smaller of two window values where `0` means unlimited.
    static func smaller(_ a: UInt16, _ b: UInt16) -> UInt16 {
        a == 0 ? b : b == 0 ? a : min(a, b)
    }

    /// The accepted context with `id`.
    public func context(id: UInt8) -> Context? {
        self.acceptedContexts.first { $0.id == id }
    }

    /// The first accepted context for `abstractSyntax`, optionally requiring a transfer syntax.
    public func context(abstractSyntax: String, transferSyntax: String? = nil) -> Context? {
        self.acceptedContexts.first {
            $0.abstractSyntax == abstractSyntax && (transferSyntax == nil || $0.transferSyntax == transferSyntax)
        }
    }

    /// Combines the RQ and the AC into the negotiated association.
    ///
    /// Roles follow PS3.7 Table D.3-12: without a role selection sub-item in both RQ and AC for a SOP class,
    /// the requestor is SCU only; otherwise each role needs both the proposal and the acceptance.
    ///
    /// - Parameter localRole: Which side the result is for; `.requestor` when called with the AC just received.
    /// - Throws: ``PDUError/invalidParameterValue(_:value:)`` if the AC answers a context that was not proposed,
    ///   or accepts a transfer syntax that was not offered for it.
    public init(request: AssociateRQ, accept: AssociateAC, localRole: AssociationStateMachine.Role = .requestor) throws
    {
        self.localRole = localRole
        self.callingAETitle = request.callingAETitle
        self.calledAETitle = request.calledAETitle
        self.requestorUserInformation = request.userInformation
        self.acceptorUserInformation = accept.userInformation
        self.acceptedContexts = []
        self.rejectedContexts = []

        var proposedByID: [UInt8: PresentationContextRQ] = [:]
        for context in request.presentationContexts where proposedByID[context.id] == nil {
            proposedByID[context.id] = context
        }
        var proposedRoles: [String: RoleSelection] = [:]
        for role in request.userInformation.roleSelections where proposedRoles[role.sopClassUID] == nil {
            proposedRoles[role.sopClassUID] = role
        }
        var acceptedRoles: [String: RoleSelection] = [:]
        for role in accept.userInformation.roleSelections where acceptedRoles[role.sopClassUID] == nil {
            acceptedRoles[role.sopClassUID] = role
        }

        for answer in accept.presentationContexts.sorted(by: { $0.id < $1.id }) {
            guard let proposal = proposedByID[answer.id] else {
                throw PDUError.invalidParameterValue(
                    "A-ASSOCIATE-AC presentation context ID", value: "\(answer.id) (not proposed)")
            }
            guard answer.result == .acceptance else {
                self.rejectedContexts.append(
                    RejectedContext(id: answer.id, abstractSyntax: proposal.abstractSyntax, result: answer.result))
                continue
            }
            guard let syntax = answer.transferSyntax, proposal.transferSyntaxes.contains(syntax) else {
                throw PDUError.invalidParameterValue(
                    "accepted transfer syntax of context \(answer.id)",
                    value: answer.transferSyntax ?? "(none)"
                )
            }
            var scu = true
            var scp = false
            if let proposed = proposedRoles[proposal.abstractSyntax],
                let accepted = acceptedRoles[proposal.abstractSyntax]
            {
                scu = proposed.scuRole && accepted.scuRole
                scp = proposed.scpRole && accepted.scpRole
            }
            self.acceptedContexts.append(
                Context(
                    id: answer.id,
                    abstractSyntax: proposal.abstractSyntax,
                    transferSyntax: syntax,
                    requestorIsSCU: scu,
                    requestorIsSCP: scp
                )
            )
        }
    }
}
