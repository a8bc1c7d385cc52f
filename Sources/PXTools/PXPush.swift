import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXPush: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-push",
        abstract: "Send DICOM files to a peer with C-STORE, on one association.",
        discussion: """
            Give the peer, then files and directories (walked recursively, names in byte
            order). Only the Part 10 headers are read to plan: px-push proposes the
            presentation contexts the files need (each file's SOP class in its own
            transfer syntax, plus Explicit/Implicit VR Little Endian for an uncompressed
            file) and sends every file on ONE association, each data set streamed from
            disk. Each file's element structure is checked first (lengths within the file
            and even, sequences and encapsulated Pixel Data closed): a file that is not
            DICOM or is broken fails with a per-file error (notDICOM, malformedFile) and
            is never sent; the others still are. The SOP Instance UID announced is the
            data set's own; a file meta that disagrees is noted in the file's warning. A
            deflated file goes as Explicit VR Little Endian when the peer accepts it.

              px-push ORTHANC@127.0.0.1:4242 study/ extra.dcm

            data.files lists each file in order: path, SOPClassUID, SOPInstanceUID,
            transferSyntaxUID, status (success, warning, failed), dimseStatus, error,
            warning and attempts.
            The exit status is 1 when any file failed (error.code partialFailure). When
            the peer aborts the association (or the connection drops), px-push opens a
            new one for the files not yet answered, one file at a time: data.associations
            counts them and each file's attempts the associations it was sent on. A file
            during which two associations ended is failed; after three associations in a
            row that answered nothing (or a timeout) px-push stops, the files not answered
            are listed as not stored, and error is what ended the last association.
            The DCMTK backend runs storescu -R -nh. The native backend proposes an
            asynchronous operations window (--window) and, when the peer grants one,
            sends the next file while the peer is still storing the previous ones; DCMTK
            peers answer one at a time.

            --commit asks the peer to commit what it stored with success (storage
            commitment, PS3.4 Annex J): one N-ACTION for the whole run on the storage
            association (else on one of its own), then px waits up to --commit-timeout
            (default 60 s) for the peer's report: on that association if the peer
            accepted px as SCP for it, or on a new association the peer opens to px on
            --commit-port (default: the config's local port), called AE title px's
            calling AE title (the peer must know px's AE at that address).
            data.commitment lists transactionUID, committed and failed instances
            (failureReason: 274 = 0x0112 no such object instance, 272 = 0x0110
            processing failure). The exit status is 1 (partialFailure) unless every
            instance is committed, 75 when no report came in time (timeout "storage
            commitment"). Native backend only: --commit makes --backend auto run the
            native backend, and with --backend dcmtk it is a usage error (exit 64).

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @Argument(help: "Files and directories to send.") var paths: [String] = []
    @Option(
        name: .long,
        help: ArgumentHelp(
            "C-STOREs kept outstanding when the peer agrees (native; 1: one at a time).",
            valueName: "n"))
    var window: UInt16 = PushRequest.defaultWindow
    @OptionGroup(title: "Storage commitment") var commit: CommitOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @OptionGroup var output: OutputOptions

    public func validate() throws {
        try connection.requirePeer()
        if paths.isEmpty { throw ValidationError("give the files or directories to push") }
        if window == 0 { throw ValidationError("--window must be at least 1") }
    }

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public func run() async throws {
        try await PushCommand.run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, paths: paths,
            window: window, commit: commit,
            output: output)
    }
}
