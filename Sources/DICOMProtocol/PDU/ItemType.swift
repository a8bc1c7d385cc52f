/// Item and sub-item types of the A-ASSOCIATE PDUs (PS3.8 §9.3.2 to §9.3.3, Annex D.3.3).
public enum ItemType: UInt8, Sendable, Hashable, CaseIterable {
    /// Application Context Item (PS3.8 §9.3.2.1).
    case applicationContext = 0x10
    /// Presentation Context Item in an A-ASSOCIATE-RQ (PS3.8 §9.3.2.2).
    case presentationContextRQ = 0x20
    /// Presentation Context Item in an A-ASSOCIATE-AC (PS3.8 §9.3.3.2).
    case presentationContextAC = 0x21
    /// Abstract Syntax Sub-Item (PS3.8 §9.3.2.2.1).
    case abstractSyntax = 0x30
    /// Transfer Syntax Sub-Item (PS3.8 §9.3.2.2.2).
    case transferSyntax = 0x40
    /// User Information Item (PS3.8 §9.3.2.3).
    case userInformation = 0x50
    /// Maximum Length Sub-Item (PS3.8 §D.1).
    case maximumLength = 0x51
    /// Implementation Class UID Sub-Item (PS3.7 §D.3.3.2).
    case implementationClassUID = 0x52
    /// Asynchronous Operations Window Sub-Item (PS3.7 §D.3.3.3).
    case asynchronousOperationsWindow = 0x53
    /// SCP/SCU Role Selection Sub-Item (PS3.7 §D.3.3.4).
    case roleSelection = 0x54
    /// Implementation Version Name Sub-Item (PS3.7 §D.3.3.2).
    case implementationVersionName = 0x55
    /// SOP Class Extended Negotiation Sub-Item (PS3.7 §D.3.3.5).
    case sopClassExtendedNegotiation = 0x56
    /// SOP Class Common Extended Negotiation Sub-Item (PS3.7 §D.3.3.6).
    case sopClassCommonExtendedNegotiation = 0x57
    /// User Identity Sub-Item in an A-ASSOCIATE-RQ (PS3.7 §D.3.3.7.1).
    case userIdentityRQ = 0x58
    /// User Identity Sub-Item in an A-ASSOCIATE-AC (PS3.7 §D.3.3.7.2).
    case userIdentityAC = 0x59
}
