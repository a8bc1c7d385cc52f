/// A presentation context the association-requestor wants to propose (PS3.8 §9.3.2.2, PS3.7 Annex D.3.3.4).
///
/// IDs are not chosen here: ``AssociationRequestParameters/makeAssociateRQ()`` allocates odd IDs per association.
public struct ProposedPresentationContext: Sendable, Hashable {
    /// The abstract syntax (SOP class UID).
    public var abstractSyntax: String
    /// The transfer syntaxes offered, in order of preference.
    public var transferSyntaxes: [String]
    /// The SCP/SCU roles to propose for this SOP class, or `nil` for the default roles (requestor is SCU only).
    ///
    /// C-GET needs `RoleProposal(scu: false, scp: true)` for the storage SOP classes it expects to receive.
    public var roleProposal: RoleProposal?

    /// Roles proposed for the requestor in a role selection sub-item (0x54).
    public struct RoleProposal: Sendable, Hashable {
        /// Whether the requestor proposes to act as SCU.
        public var scu: Bool
        /// Whether the requestor proposes to act as SCP.
        public var scp: Bool

        /// Creates a role proposal.
        public init(scu: Bool, scp: Bool) {
            self.scu = scu
            self.scp = scp
        }
    }

    /// Creates a proposal.
    public init(abstractSyntax: String, transferSyntaxes: [String], roleProposal: RoleProposal? = nil) {
        self.abstractSyntax = abstractSyntax
        self.transferSyntaxes = transferSyntaxes
        self.roleProposal = roleProposal
    }
}
