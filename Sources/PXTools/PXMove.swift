import ArgumentParser
import PXCommandLine
import PXCommands

public struct PXMove: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-move",
        abstract: "Move studies, series or instances to a destination AE with C-MOVE.",
        discussion: """
            Give the UIDs (--StudyInstanceUID, with --SeriesInstanceUID, with
            --SOPInstanceUID), or pipe a px-find result into px-move and everything in it
            is moved (each series of a study with a series list, otherwise each entry at
            its own level):

              px-find QRSCP@127.0.0.1:11112 --PatientID PAT001 \\
                | px-move QRSCP@127.0.0.1:11112 --destination PXLISTEN

            A whole patient: --PatientID alone, every study of the patient (one
            PATIENT-level retrieve with --model patient; study by study in study root
            or when the peer refuses the patient level). A series or instances without
            --StudyInstanceUID (pypx 0.8's --seriesUID) have their study found with one
            C-FIND first.

            StudyInstanceUID is always sent with SeriesInstanceUID (some archives require
            it). The destination: --destination, pypx 0.8's --aetl, else pypx 3.x's --aet.
            Progress goes to stderr when it is a terminal. Several targets (a px-find
            result, or --StudyInstanceUID repeated) share one association on the native
            backend, reopened once if the peer ends it between two C-MOVEs; the dcmtk
            backend runs movescu once per target.

            SIGINT (Ctrl-C) or SIGTERM cancels the C-MOVE in progress: C-CANCEL-RQ (native;
            dcmtk forwards the signal to its tool), up to 5 s for the final response, then
            the envelope with what completed (error.code interrupted) and exit 130 / 143.
            --user/--password ($PX_PASSWORD), --kerberos, --saml, --jwt present a user
            identity (PS3.7 D.3.3.7).

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    @Option(
        name: [.long, .customLong("aem"), .customLong("aetl")],
        help: "The move destination AE title (pypx 0.8: --aetl).")
    var destination: String?
    @OptionGroup var retrieve: RetrieveOptions
    @OptionGroup var output: OutputOptions

    public func validate() throws {
        if destination == nil && connection.callingAETitle == nil {
            throw ValidationError("give the move destination with --destination")
        }
        try retrieve.validateSource(command: "px-move")
    }

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public func run() async throws {
        try await MoveCommand.run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, retrieve: retrieve,
            destination: destination, output: output)
    }
}
