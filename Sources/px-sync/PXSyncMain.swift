import ArgumentParser
import PXCommandLine
import PXSync

@main
struct PXSyncMain: PXCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-sync",
        abstract: "Make sure studies of the SOURCE places are in the DEST place: transfer only what is missing.",
        discussion: """
            PLACES
              AE@host:port, host:AE:port, host:port   a DIMSE node (C-FIND, C-GET/C-MOVE, C-STORE)
              NAME                                    [places.NAME] or [nodes.NAME] of the config file
              /path, ./path, ../path, ~/path, folder:PATH
                                                      a folder of DICOM files (any tree; new files
                                                      are placed in pypx's tree or --layout)
              zip:PATH, http(s)://host/dicom-web      zip and DICOMweb places (not yet)
            A bare word is a config name, never a folder: write ./word for that. Config:
              [places.archive]
              path = "/data/archive"
              kind = "folder"            # or "zip"
              layout = "{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm"

            SELECTION (one of)
              px-find's keys: --PatientID, --StudyDate 20240101-20241231, -k Keyword=value, ...
              a px-find result on stdin:  px-find pacs --PatientID P1 | px-sync pacs ./data
              --from-file ids.csv: a header line naming a PatientID, AccessionNumber or
                StudyInstanceUID column, then one value per line; bad or unknown lines are
                reported (event "failed" with "line") and the rest is synced.
              nothing: every study of each source.

            PLAN AND TRANSFER
              Each study is compared with the destination: study counts, then series counts,
              then SOP Instance UIDs only where counts differ (or a node leaves them empty,
              as dcmqrscp does). Only what is missing is transferred; --force sends all;
              --dry-run prints the plan. A second run transfers nothing.
              node -> folder: C-GET into the folder (atomic placement, no partial file at a
                final name); C-MOVE to px-sync's own receiver (--receiver-port, its AE
                --receiver-aet known to the node) when the node refuses C-GET, or with
                --retrieve move.
              folder -> node: C-STORE, --window operations outstanding.
              node -> node: C-MOVE to the destination's AE title (the source must know it).
              --parallel N studies at once. Interrupted? Run it again: it finishes the rest.

            OUTPUT
              NDJSON events on stdout, one per line: planned, studyStarted, studyFinished,
              skipped (already present), failed; then the envelope, data = {found,
              alreadyPresent, transferred, failed, planned, instancesTransferred, studies,
              lineErrors}. A progress line on stderr when it is a terminal.

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Sync") var sync: SyncOptions
    @OptionGroup(title: "Selection") var query: QueryOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @OptionGroup var output: OutputOptions

    func run() async throws {
        try await SyncCommand.run(
            sync: sync, query: query, timeouts: timeouts, backend: backend, logging: logging, output: output)
    }
}
