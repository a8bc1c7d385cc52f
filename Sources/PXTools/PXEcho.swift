import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore
import PXPlaces

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
              px-echo pacs cloud ORTHANC@10.0.0.5:4242   (several peers at once)
              px-echo --all-nodes                  (every [nodes.NAME] of the config)

            With several peers (or --all-nodes) they are checked at once, and data is
            {"peers": [{"peer", "backend", "status", "data" | "error"}, ...],
            "succeeded": N, "failed": M}; exit 1 with error.code partialFailure when
            any peer failed. The connection options (--aet, --aec, TLS, identity,
            timeouts) apply to each.

            With a user identity (PS3.7 D.3.3.7) data.userIdentity reports what was
            presented and, with --pos-response, the peer's positive response.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var common: PeerCommandOptions

    @Argument(help: "More peers, checked at the same time as the first (same forms).")
    var morePeers: [String] = []

    @Flag(name: .customLong("all-nodes"), help: "Check every [nodes.NAME] of the config file.")
    var allNodes = false

    @OptionGroup var output: OutputOptions

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public func validate() throws {
        if !allNodes { try common.connection.requirePeer() }
        if allNodes && (common.connection.peer != nil || common.connection.serverIP != nil) {
            throw ValidationError("give peers or --all-nodes, not both")
        }
        if !morePeers.isEmpty && common.connection.serverIP != nil {
            throw ValidationError("several peers are given as arguments, not with --serverIP/--serverPort")
        }
        for peer in morePeers {
            do { _ = try PeerSpec.parse(peer) } catch { throw ValidationError(error.message) }
        }
    }

    public func run() async throws {
        if allNodes || !morePeers.isEmpty {
            let peers = allNodes ? nil : [common.connection.peer].compactMap { $0 } + morePeers
            try await EchoCommand.run(
                peers: peers, connection: common.connection, timeouts: common.timeouts, backend: common.backend,
                logging: common.logging, output: output)
            return
        }
        try await EchoCommand.run(
            connection: common.connection, timeouts: common.timeouts, backend: common.backend, logging: common.logging,
            output: output)
    }
}
