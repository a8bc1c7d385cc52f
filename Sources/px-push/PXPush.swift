import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

@main
struct PXPush: PXCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-push",
        abstract: "Send DICOM files to a peer with C-STORE, on one association.",
        discussion: """
            Give the peer, then files and directories (walked recursively, names in byte
            order). Only the Part 10 headers are read to plan: px-push proposes the
            presentation contexts the files need (each file's SOP class in its own
            transfer syntax, plus Explicit/Implicit VR Little Endian for an uncompressed
            file) and sends every file on ONE association, each data set streamed from
            disk. A file that is not DICOM is skipped with a per-file error; the others
            are still sent.

              px-push ORTHANC@127.0.0.1:4242 study/ extra.dcm

            data.files lists each file in order: path, SOPClassUID, SOPInstanceUID,
            transferSyntaxUID, status (success, warning, failed), dimseStatus and error.
            The exit status is 1 when any file failed (error.code partialFailure). When
            the association ends early (abort, timeout), the files the peer answered are
            listed, the rest as not stored, and error is what ended it. The DCMTK backend
            runs storescu -R -nh. The native backend proposes an asynchronous operations
            window (--window) and, when the peer grants one, sends the next file while
            the peer is still storing the previous ones; DCMTK peers answer one at a time.

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @Argument(help: "Files and directories to send.") var paths: [String] = []
    @Option(
        name: .long,
        help: ArgumentHelp(
            "C-STOREs kept outstanding when the peer agrees (native; 1: one at a time).",
            valueName: "n"))
    var window: UInt16 = PushRequest.defaultWindow
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @OptionGroup var output: OutputOptions

    func validate() throws {
        if paths.isEmpty { throw ValidationError("give the files or directories to push") }
        if window == 0 { throw ValidationError("--window must be at least 1") }
    }

    func run() async throws {
        try await PushCommand.run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, paths: paths, window: window,
            output: output)
    }
}
