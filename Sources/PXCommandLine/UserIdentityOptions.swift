import ArgumentParser
import DICOMData
import PXCore
import PXPlaces

/// User Identity Negotiation for the commands that connect to a peer (PS3.7 §D.3.3.7): `--user NAME` with
/// `--password PW` (or `$PX_PASSWORD`), `--kerberos FILE`, `--saml FILE` or `--jwt FILE`, and `--pos-response`.
///
/// The same per node in the config file: `user = "alice"` with `password_env = "VAR"` (the variable holding the
/// password) or `password_file = "PATH"` (its first line); a flag given on the command line wins over the
/// node's key. The password is never echoed: the envelope's `command` shows `--password ***`
/// (``CommandOutput/redacted(_:)``).
public struct UserIdentityOptions: ParsableArguments {
    @Option(
        name: .customLong("user"),
        help: ArgumentHelp(
            "Present this username (user identity type 1, or 2 with a password; PS3.7 D.3.3.7).", valueName: "name"))
    public var user: String?

    @Option(
        name: .customLong("password"),
        help: ArgumentHelp(
            "The password for --user (type 2). Prefer $PX_PASSWORD or the config's password_env/password_file: a command line is visible to other users.",
            valueName: "password"))
    public var password: String?

    @Option(
        name: .customLong("kerberos"),
        help: ArgumentHelp("Present the Kerberos service ticket in this file (type 3).", valueName: "file"))
    public var kerberosFile: String?

    @Option(
        name: .customLong("saml"),
        help: ArgumentHelp("Present the SAML assertion in this file (type 4).", valueName: "file"))
    public var samlFile: String?

    @Option(
        name: .customLong("jwt"),
        help: ArgumentHelp("Present the JSON Web Token in this file (type 5).", valueName: "file"))
    public var jwtFile: String?

    @Flag(
        name: .customLong("pos-response"),
        help: "Ask the peer for a positive response to the identity, and report it (px-echo's userIdentity).")
    public var positiveResponse = false

    /// The environment variable read for the password when `--user` is given without `--password`.
    public static let passwordVariable = PXConfig.passwordVariable

    public init() {}

    public func validate() throws {
        let given = [user, kerberosFile, samlFile, jwtFile].compactMap { $0 }
        if given.count > 1 { throw ValidationError("give one of --user, --kerberos, --saml, --jwt") }
        if password != nil && user == nil { throw ValidationError("--password needs --user") }
    }

    /// Whether the command line presents an identity (without the config's).
    public var isGiven: Bool { user != nil || kerberosFile != nil || samlFile != nil || jwtFile != nil }

    /// The identity to present: the command line's, else the config node's `user` (when the peer is a node).
    /// A token is read from its file now; the password is `--password`, else (for the node's `user`) the node's
    /// `password_env` or `password_file`, else `$PX_PASSWORD`, else none (type 1).
    /// - Throws: ``PXError/usage(_:)`` for an unreadable file, an unset `password_env`, or `--pos-response`
    ///   without an identity.
    public func userIdentity(node: PXConfig.Node?) throws(PXError) -> UserIdentity? {
        let credential: UserIdentity.Credential
        if let (kind, file) = token {
            let contents: [UInt8]
            do { contents = try FileIO.readAll(file) } catch {
                throw .usage("cannot read the --\(kind.rawValue) file \(file): \(error)")
            }
            guard !contents.isEmpty else { throw .usage("the --\(kind.rawValue) file \(file) is empty") }
            credential = .token(kind, file: file, contents: contents)
        } else if let name = user ?? node?.user {
            guard !name.isEmpty else { throw .usage("the user identity's username is empty") }
            let fromNode = user == nil ? node : nil
            var passcode = password
            if passcode == nil, let fromNode { passcode = try fromNode.password() }
            if passcode == nil { passcode = PXConfig.environment(Self.passwordVariable) }
            credential = passcode.map { .usernameAndPasscode(name, passcode: $0) } ?? .username(name)
        } else {
            if positiveResponse { throw .usage("--pos-response needs --user, --kerberos, --saml or --jwt") }
            return nil
        }
        return UserIdentity(credential, positiveResponseRequested: positiveResponse)
    }

    /// The line of a `--require-user` file for `username` (``UserAccounts``): the password from `$PX_PASSWORD`,
    /// else the first line of standard input; a fresh 16-byte salt.
    /// - Throws: ``PXError/usage(_:)`` for an empty password or a bad username.
    public static func accountLine(username: String) throws(PXError) -> String {
        let password =
            PXConfig.environment(passwordVariable)
            ?? String(StandardInput.readText().prefix { $0 != "\n" && $0 != "\r" })
        guard !password.isEmpty else {
            throw .usage("--hash-password: give the password in $\(passwordVariable) or on standard input")
        }
        var generator = SystemRandomNumberGenerator()
        let salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return try UserAccounts.line(username: username, password: password, salt: salt)
    }

    private var token: (UserIdentity.TokenKind, String)? {
        if let kerberosFile { return (.kerberos, kerberosFile) }
        if let samlFile { return (.saml, samlFile) }
        if let jwtFile { return (.jwt, jwtFile) }
        return nil
    }
}
