import ArgumentParser

/// The option groups of every command that speaks to one peer (px-echo, px-find, px-get, px-move): the peer
/// and its AE titles, TLS and identity; the timeouts; the backend; logging. Each keeps its own section in
/// `--help`.
public struct PeerCommandOptions: ParsableArguments {
    @OptionGroup(title: "Connection") public var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") public var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") public var backend: BackendOptions
    @OptionGroup(title: "Logging") public var logging: LoggingOptions

    public init() {}

    /// The help lines px-get and px-move share on interruption and user identity, for `operation`
    /// (`C-GET`, `C-MOVE`).
    public static func cancellationHelp(_ operation: String) -> String {
        """
        SIGINT (Ctrl-C) or SIGTERM cancels the \(operation) in progress: C-CANCEL-RQ (native;
        dcmtk forwards the signal to its tool), up to 5 s for the final response, then
        the envelope with what completed (error.code interrupted) and exit 130 / 143.
        --user/--password ($PX_PASSWORD), --kerberos, --saml, --jwt present a user
        identity (PS3.7 D.3.3.7).
        """
    }
}
