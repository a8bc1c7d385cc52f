import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXServe: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-serve",
        abstract: "Serve a folder place over DICOM: C-ECHO, C-FIND, C-MOVE, C-GET and C-STORE into it.",
        discussion: """
            PLACE is a folder of DICOM files (px-listen's tree, a --layout tree, or any
            folder). Its index lives in PLACE/.px/index.sqlite: made on first use, brought
            up to date at start (only new or changed files are read), and kept current as
            instances arrive, so a stored file is found by the next query.

            C-FIND answers at PATIENT, STUDY, SERIES and IMAGE level in the Patient Root and
            Study Root models; C-MOVE sends to --move-destination AE=host:port or a config
            file node with that AE title; C-GET sends on the association. C-STORE places
            files as px-listen does (atomic, sanitised names, --layout).

            One NDJSON event per line on stdout: indexed, listening, associationOpened,
            instanceReceived, seriesComplete, associationClosed, associationRejected,
            storeFailed. Logs go to stderr. Runs until SIGINT/SIGTERM. Native backend only.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var serve: ServeOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    public init() {}

    public func run() async throws {
        try await ServeCommand.run(serve: serve, logging: logging)
    }
}
