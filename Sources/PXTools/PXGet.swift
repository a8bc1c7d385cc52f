import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXGet: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-get",
        abstract: "Retrieve studies, series or instances with C-GET, on one association.",
        discussion: """
            The instances arrive as C-STORE sub-operations on the same association (no
            listener, no firewall rule) and are stored like px-listen stores them, each at
            its final name before its C-STORE-RSP (native backend):
              <root>/<PatientID>-<PatientName>/
                <StudyDescription>-<StudyDate>-<StudyInstanceUID>/
                <SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/
                <InstanceNumber>-<SOPInstanceUID>.dcm

            Give the UIDs (--StudyInstanceUID, with --SeriesInstanceUID, with
            --SOPInstanceUID), or pipe a px-find result into px-get and everything in it
            is retrieved (each series of a study with a series list):

              px-find QR@pacs:104 --PatientID PAT001 | px-get QR@pacs:104 -d data

            A whole patient: --PatientID alone, every study of the patient (one
            PATIENT-level retrieve with --model patient; study by study in study root
            or when the peer refuses the patient level). A series or instances without
            --StudyInstanceUID (pypx 0.8's --seriesUID) have their study found with one
            C-FIND first.

            StudyInstanceUID is always sent with SeriesInstanceUID. data.gets lists each
            C-GET with its final status, sub-operation counts (completed, failed, warning,
            remaining) and the stored instances (path, UIDs, bytes = data set length).
            Several targets (or --StudyInstanceUID repeated) share one association on the
            native backend, reopened once if the peer ends it between two C-GETs; the
            DCMTK backend runs getscu +B once per target.

            A DICOMweb peer (http(s)://host/dicom-web) is retrieved with WADO-RS, --parallel
            requests at once (default 4): the targets side by side, and a study alone split
            into its series. Each instance streams to a temporary file and is placed once
            complete; data.gets has one entry per target, in the targets' order.

            \(PeerCommandOptions.cancellationHelp("C-GET"))

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var common: PeerCommandOptions

    @Option(name: [.customShort("d"), .customLong("datadir")], help: "Root of the storage tree.") var root: String =
        "./px-data"
    @OptionGroup var retrieve: RetrieveOptions
    @Option(
        help: ArgumentHelp(
            "WADO-RS requests at once for a DICOMweb peer (1-32, default 4): the studies, and the series of a study, side by side.",
            valueName: "n"))
    var parallel: Int?
    @OptionGroup var output: OutputOptions

    public func validate() throws {
        try common.connection.requirePeer()
        try retrieve.validateSource(command: "px-get")
    }

    public init() {}

    public func run() async throws {
        try await GetCommand.run(
            connection: common.connection, timeouts: common.timeouts, backend: common.backend, logging: common.logging,
            retrieve: retrieve,
            root: root, output: output, parallel: parallel)
    }
}
