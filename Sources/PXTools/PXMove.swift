import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

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

            \(PeerCommandOptions.cancellationHelp("C-MOVE"))

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var common: PeerCommandOptions

    @Option(
        name: [.long, .customLong("aem"), .customLong("aetl")],
        help: "The move destination AE title (pypx 0.8: --aetl).")
    var destination: String?
    @OptionGroup var retrieve: RetrieveOptions
    @OptionGroup var output: OutputOptions

    public func validate() throws {
        try common.connection.requirePeer()
        if destination == nil && common.connection.callingAETitle == nil {
            throw ValidationError("give the move destination with --destination")
        }
        try retrieve.validateSource(command: "px-move")
    }

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public func run() async throws {
        try await MoveCommand.run(
            connection: common.connection, timeouts: common.timeouts, backend: common.backend, logging: common.logging,
            retrieve: retrieve,
            destination: destination, output: output)
    }
}
