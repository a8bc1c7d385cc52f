import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXEcho: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-echo",
        abstract: "Verify a DICOM peer with C-ECHO and print the result as JSON.",
        discussion: """
            Prints {"status": ..., "backend": ..., "command": [...], "data": {...}} on
            stdout; on failure "error": {"code": ..., "message": ...} says why
            (connectionRefused, unknownHost, timeout, associationRejected, ...).

            Examples:
              px-echo 127.0.0.1:11112
              px-echo ORTHANC@pacs.example:4242 --aet MYSCU
              px-echo --aec ORTHANC --serverIP 127.0.0.1 --serverPort 4242   (pypx 0.8)
              PX_PASSWORD=s3cret px-echo PACS@pacs:104 --user alice --pos-response

            With a user identity (PS3.7 D.3.3.7) data.userIdentity reports what was
            presented and, with --pos-response, the peer's positive response.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var common: PeerCommandOptions
    @OptionGroup var output: OutputOptions

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public func run() async throws {
        try await EchoCommand.run(
            connection: common.connection, timeouts: common.timeouts, backend: common.backend, logging: common.logging,
            output: output)
    }
}
