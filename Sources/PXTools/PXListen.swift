import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

public struct PXListen: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-listen",
        abstract: "Receive DICOM instances (C-STORE) into pypx's patient/study/series tree.",
        discussion: """
            Files are stored as (or as --layout says)
              <root>/<PatientID>-<PatientName>/
                <StudyDescription>-<StudyDate>-<StudyInstanceUID>/
                <SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/
                <InstanceNumber, 5 digits>-<SOPInstanceUID>.dcm
            with unsafe characters replaced; each file is written under a temporary name
            and renamed into place. Each patient and study folder gets patient.info /
            study.info; a series folder holds receiving.series while instances arrive and
            series.info once it is complete (the associations that brought it ended, or
            --series-timeout seconds without a new instance).

            One NDJSON event per line on stdout: listening, associationOpened,
            instanceReceived, seriesComplete, associationClosed, associationRejected,
            storeFailed. Logs go to stderr.

            Runs until SIGINT/SIGTERM: it then stops accepting, lets the associations in
            progress finish for --shutdown-grace seconds and aborts the rest (native
            backend; the dcmtk backend stops at once).

            --require-user FILE accepts only associations that present a username and
            password listed in FILE (User Identity Negotiation, PS3.7 D.3.3.7), one
            USER:sha256:SALT_HEX:HASH_HEX a line; others get an A-ASSOCIATE-RJ (rejected
            permanent, service user, no reason given), and associationOpened reports
            "userIdentity": {"type", "username"}. Make a line with
              PX_PASSWORD=s3cret px-listen --hash-password alice >> users.txt
            (or the password on standard input). Native backend.

            pypx 0.8's -t (tmpdir) and -l (logdir) are accepted and ignored; -d is the
            root.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @Option(
        name: .customLong("hash-password"),
        help: ArgumentHelp(
            "Print a --require-user line for this user (password from $PX_PASSWORD or standard input) and exit.",
            valueName: "user"))
    var hashPassword: String?

    @OptionGroup var listen: ListenOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    public init() {}

    public func run() async throws {
        if let hashPassword {
            try ListenCommand.printAccountLine(username: hashPassword)
            return
        }
        try await ListenCommand.run(listen: listen, backend: backend, logging: logging)
    }
}
