import PXCore

/// User Identity Negotiation (PS3.7 §D.3.3.7) with DCMTK 3.6.7's tools: storescu is the only SCU that has
/// the options (`-usr`, `-pwd`, `-epw`, `-kt`, `--saml`, `--jwt`, `-rsp`); echoscu, findscu, movescu and
/// getscu have none, so an identity with those is an error (``PXError/backendUnavailable(_:reason:)``), never
/// an association without it. `--backend auto` picks the native backend for them instead.
extension DCMTKBackend {
    /// The tools that can present a user identity.
    public static let toolsWithUserIdentity: Set<String> = ["storescu"]

    /// The arguments presenting `connection`'s identity to `tool`.
    ///
    /// The passcode is an argument of the child process (DCMTK reads it nowhere else), so it is visible to
    /// the host's other users in the process list while storescu runs; px's logs never show it
    /// (``redactedArguments(_:)``).
    /// - Throws: ``PXError/backendUnavailable(_:reason:)`` when `tool` has no user identity options.
    static func userIdentityArguments(_ connection: Connection, tool: String) throws(PXError) -> [String] {
        guard let identity = connection.userIdentity else { return [] }
        guard toolsWithUserIdentity.contains(tool) else {
            throw .backendUnavailable(
                "dcmtk",
                reason: "\(tool) (DCMTK 3.6.7) cannot present a user identity: use --backend native or auto")
        }
        var arguments: [String]
        switch identity.credential {
        case .username(let name):
            arguments = ["-usr", name]
        case .usernameAndPasscode(let name, let passcode):
            arguments = ["-usr", name] + (passcode.isEmpty ? ["-epw"] : ["-pwd", passcode])
        case .token(.kerberos, let file, _):
            arguments = ["-kt", file]
        case .token(.saml, let file, _):
            arguments = ["--saml", file]
        case .token(.jwt, let file, _):
            arguments = ["--jwt", file]
        }
        if identity.positiveResponseRequested { arguments.append("-rsp") }
        return arguments
    }

    /// `arguments` with the value of `-pwd` (and `--password`) replaced, for logs.
    static func redactedArguments(_ arguments: [String]) -> [String] {
        var out = arguments
        for index in out.indices.dropLast() where out[index] == "-pwd" || out[index] == "--password" {
            out[index + 1] = "***"
        }
        return out
    }
}
