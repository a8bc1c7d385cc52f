/// A user identity presented when requesting an association: User Identity Negotiation (PS3.7 §D.3.3.7,
/// the A-ASSOCIATE-RQ's user information sub-item 0x58 of PS3.8 Annex D).
///
/// The native backend sends it itself; the DCMTK backend passes it to storescu as `-usr`/`-pwd`/`-epw`,
/// `-kt`, `--saml`, `--jwt` and `-rsp` (the only DCMTK 3.6.7 SCU that has these options: echoscu, findscu,
/// movescu and getscu have none, so `--backend auto` runs those natively when an identity is given).
public struct UserIdentity: Hashable, Sendable {
    /// What identifies the user (PS3.7 Table D.3-14, User-Identity-Type).
    public enum Credential: Hashable, Sendable {
        /// Type 1: a username.
        case username(String)
        /// Type 2: a username and passcode.
        case usernameAndPasscode(String, passcode: String)
        /// Types 3, 4, 5: a Kerberos service ticket, a SAML assertion or a JSON Web Token, read from `file`.
        case token(TokenKind, file: String, contents: [UInt8])
    }

    /// The identity types whose primary field is a token read from a file.
    public enum TokenKind: String, Hashable, Sendable, CaseIterable {
        case kerberos
        case saml
        case jwt
    }

    public var credential: Credential
    /// Ask the acceptor for a positive response (the User Identity AC sub-item 0x59, PS3.7 §D.3.3.7.2).
    public var positiveResponseRequested: Bool

    public init(_ credential: Credential, positiveResponseRequested: Bool = false) {
        self.credential = credential
        self.positiveResponseRequested = positiveResponseRequested
    }

    /// User-Identity-Type (PS3.7 Table D.3-14): 1 username, 2 username and passcode, 3 Kerberos, 4 SAML,
    /// 5 JWT.
    public var typeCode: UInt8 {
        switch credential {
        case .username: return 1
        case .usernameAndPasscode: return 2
        case .token(.kerberos, _, _): return 3
        case .token(.saml, _, _): return 4
        case .token(.jwt, _, _): return 5
        }
    }

    /// The type's name in px's JSON: `username`, `usernameAndPasscode`, `kerberos`, `saml`, `jwt`.
    public var typeName: String { Self.typeName(code: typeCode) }

    /// The name of a User-Identity-Type code (``typeName``); `type N` for a code PS3.7 does not define.
    public static func typeName(code: UInt8) -> String {
        switch code {
        case 1: return "username"
        case 2: return "usernameAndPasscode"
        case 3: return TokenKind.kerberos.rawValue
        case 4: return TokenKind.saml.rawValue
        case 5: return TokenKind.jwt.rawValue
        default: return "type \(code)"
        }
    }

    /// The username, for the types that have one (never the passcode).
    public var username: String? {
        switch credential {
        case .username(let name), .usernameAndPasscode(let name, _): return name
        case .token: return nil
        }
    }

    /// The Primary-field: the username's UTF-8 bytes or the token.
    public var primaryField: [UInt8] {
        switch credential {
        case .username(let name), .usernameAndPasscode(let name, _): return Array(name.utf8)
        case .token(_, _, let contents): return contents
        }
    }

    /// The Secondary-field: the passcode's UTF-8 bytes for type 2, empty otherwise.
    public var secondaryField: [UInt8] {
        if case .usernameAndPasscode(_, let passcode) = credential { return Array(passcode.utf8) }
        return []
    }
}

/// What came back for a ``UserIdentity``: the acceptor's User Identity AC sub-item (0x59, PS3.7
/// §D.3.3.7.2), when a positive response was asked for.
public struct UserIdentityOutcome: Hashable, Sendable {
    /// ``UserIdentity/typeName`` of what was sent.
    public var type: String
    /// The username sent (types 1 and 2).
    public var username: String?
    /// Whether a positive response was asked for.
    public var positiveResponseRequested: Bool
    /// Whether the acceptor sent the 0x59 sub-item: the identity was accepted. `nil` when not asked or not known
    /// (the DCMTK backend: storescu fails the association itself when a requested response is missing).
    public var positiveResponseReceived: Bool?
    /// The Server-response field (empty for username types; a Kerberos server ticket, SAML response or JWT).
    public var serverResponse: [UInt8]

    public init(
        _ identity: UserIdentity, positiveResponseReceived: Bool?, serverResponse: [UInt8] = []
    ) {
        self.type = identity.typeName
        self.username = identity.username
        self.positiveResponseRequested = identity.positiveResponseRequested
        self.positiveResponseReceived = positiveResponseReceived
        self.serverResponse = serverResponse
    }
}

/// The identity an association requestor presented to px-listen or px-serve, as their `associationOpened`
/// event reports it: its type and, for types 1 and 2, the username (never the passcode or a token).
public struct PresentedUserIdentity: Hashable, Sendable {
    /// ``UserIdentity/typeName(code:)`` of its User-Identity-Type.
    public var type: String
    public var username: String?

    public init(type: String, username: String?) {
        self.type = type
        self.username = username
    }
}
