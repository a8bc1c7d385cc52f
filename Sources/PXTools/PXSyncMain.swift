import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXSyncMain: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-sync",
        abstract: "Make sure studies of the SOURCE places are in the DEST place: transfer only what is missing.",
        discussion: """
            PLACES
              AE@host:port, host:AE:port, host:port  a DIMSE node
              /path ./path ../path ~/path folder:P   a folder of DICOM files (any tree;
                                                     new files in pypx's tree or --layout)
              zip:PATH                               a zip place: one .zip per study
              http(s)://host/dicom-web               a DICOMweb service
              NAME                                   [places.NAME] or [nodes.NAME]
            A bare word is a config name, never a folder (write ./word). Config:
              [places.archive]
              path = "/data/archive"
              kind = "folder"                        # or "zip"
              layout = "{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm"

            SELECTION (one of)
              px-find's keys: --PatientID P1, --StudyDate 20240101-20241231, -k K=V,
                or dcm's Keyword=value among the places: px-sync pacs ./d StudyDate=2024
              a px-find result on stdin: px-find pacs --PatientID P1 | px-sync pacs ./d,
                or dcm's px-find pacs --PatientID P1 | px-sync ./d (the source is the
                peer px-find asked, from its envelope's command)
              --from-file ids.csv: a header naming a PatientID, AccessionNumber or
                StudyInstanceUID column, then one value a line; bad or unknown lines
                are reported (event "failed" with "line"), the rest is synced
              nothing: every study of each source

            PLAN
              A study is there only when DEST holds every SOP Instance UID the source
              lists for it: where DEST has the study, both sides list its instances
              (a place's index, one IMAGE-level C-FIND, a QIDO-RS search); counts
              never stand in for them. Only what is missing is sent; --force sends
              all; --dry-run prints the plan and writes nothing anywhere; --verify
              also compares the bytes (size, CRC-32) of the copies two folder or zip
              places hold. A second run transfers nothing. A source is only read: a
              folder without an index of its own is indexed in px's cache.

            LOCK
              A run locks each folder or zip DEST (DEST/.px/lock) while it plans and
              transfers: a second px-sync into it waits up to --lock-timeout (600 s),
              then fails with placeBusy (exit 75). px-listen and px-serve may keep
              receiving into the same folder.

            TRANSFER
              Any place to any place: the source delivers the instances (a folder's
              files, zip entries, C-GET, WADO-RS) into DEST's tree when it is a
              folder, else into a temporary folder, and DEST takes them (atomic
              placement, the study's zip rewritten atomically, C-STORE with --window
              outstanding, STOW-RS). Shortcuts:
              node -> node      C-MOVE to DEST's AE title; through px when the source
                                refuses it (an AE it does not know)
              node -> folder    C-MOVE to px-sync's own receiver when C-GET is
                                refused or with --retrieve move (--receiver-port,
                                --receiver-aet: the node must know that AE)
            --also-to PLACE: a further destination (each study synced into each).
            --parallel N studies at once, each lane keeping its association for many
            C-GETs/C-MOVEs (native backend). Interrupted? Run again: it does the rest.

            DCM'S SPELLINGS
              dcm sync -s SRC -q K=V DEST   px-sync -s SRC -q K=V DEST (= px-sync SRC
                                            DEST -k K=V; several DESTs: --also-to)
              dcm query SRC ... | dcm sync DEST   px-find SRC ... | px-sync DEST
              --force-all                   --force

            OUTPUT
              NDJSON events on stdout: planned, studyStarted, studyFinished, skipped
              (already present), failed ("destination" in each when there are
              several); then the envelope, data = {found, alreadyPresent,
              transferred, failed, planned, instancesTransferred, studies,
              lineErrors}. Progress on stderr when it is a terminal.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup(title: "Sync") var sync: SyncOptions
    @OptionGroup(title: "Selection") var query: QueryOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Storage commitment") var commit: CommitOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @OptionGroup var output: OutputOptions

    public init() {}

    /// dcm's forms: `Keyword=value` words among the places and `-q Keyword=value` are query keys
    /// (`px-sync pacs ./d StudyDate=2024`); with `-s SOURCE` the places given are all destinations (the first
    /// is DEST, the others `--also-to`).
    public mutating func validate() throws {
        let (places, keys) = QueryKey.partition(sync.places)
        for key in keys + sync.dcmKeys {
            do { _ = try QueryKey.parse(key) } catch { throw ValidationError(error.message) }
        }
        sync.places = places
        query.keys += keys + sync.dcmKeys
        sync.dcmKeys = []
        if !sync.sources.isEmpty {
            guard let destination = sync.places.first else { throw ValidationError("-s SOURCE needs a DEST place") }
            sync.alsoTo = Array(sync.places.dropFirst()) + sync.alsoTo
            sync.places = sync.sources + [destination]
            sync.sources = []
        }
        try sync.validate()
    }

    public func run() async throws {
        try await SyncCommand.run(
            sync: sync, query: query, timeouts: timeouts, backend: backend, commit: commit, logging: logging,
            output: output,
            pipedSource: PipedFindSource.place(pxFindOutput:))
    }
}
