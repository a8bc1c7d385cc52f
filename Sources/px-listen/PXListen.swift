import ArgumentParser
import DICOMData
import Logging
import PXCommandLine
import PXCore

#if canImport(Glibc)
import Glibc
#endif

@main
struct PXListen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-listen",
        abstract: "Receive DICOM instances (C-STORE) into pypx's patient/study/series tree.",
        discussion: """
            Files are stored as
            <root>/<PatientID>-<PatientName>/<StudyDescription>-<StudyDate>-<StudyInstanceUID>/
            <SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/<InstanceNumber, 5 digits>-<SOPInstanceUID>.dcm
            with unsafe characters replaced. One NDJSON event per line on stdout
            (associationOpened, instanceReceived, seriesComplete, associationClosed, storeFailed).
            Runs until interrupted (SIGINT/SIGTERM).

            pypx 0.8's -t (tmpdir) and -l (logdir) are accepted and ignored; -d is the root.

            \(PXExit.helpTable)
            """
    )

    @Option(name: [.customShort("p"), .long], help: "TCP port to listen on.") var port: Int = 11113
    @Option(name: .customLong("aet"), help: "The AE title to answer to.") var aeTitle: String = "PXLISTEN"
    @Option(name: [.customShort("d"), .customLong("datadir")], help: "Root of the storage tree.") var root: String = "./px-data"
    @Option(name: [.customShort("t"), .customLong("tmpdir")], help: .hidden) var tmpdir: String?
    @Option(name: [.customShort("l"), .customLong("logdir")], help: .hidden) var logdir: String?
    @Option(name: [.customShort("e"), .customLong("executable")], help: "pypx: path of storescp.") var executable: String?
    @Option(name: .customLong("acse-timeout"), help: "Association negotiation timeout (s).") var acse: Double = 30
    @Option(name: .customLong("dimse-timeout"), help: "Timeout for each DIMSE message (s).") var dimse: Double = 60
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    func validate() throws {
        if !(1...65535).contains(port) { throw ValidationError("--port \(port) is out of range 1-65535") }
        do { try AETitle.validate(aeTitle, role: "--aet") } catch { throw ValidationError(error.message) }
    }

    func run() async throws {
        let logger = logging.makeLogger(label: "px-listen")
        let output = CommandOutput(pretty: false)
        var backendName = backend.reportedName
        var failure: PXError?
        do {
            let dicomBackend = try backend.make(executables: executable.map { ["storescp": $0] } ?? [:], tool: "storescp")
            backendName = dicomBackend.name
            let absoluteRoot = root.hasPrefix("/") ? root : (currentDirectory() + "/" + root)
            let config = try ListenConfiguration(
                port: port, aeTitle: aeTitle, root: absoluteRoot,
                timeouts: Timeouts(connect: 10, acse: acse, dimse: dimse, deadline: nil))
            try await withSignalCancellation {
                try await dicomBackend.listen(config, logger: logger) { event in
                    output.write(PXOutput.json(event), pretty: false)
                }
            }
        } catch is CancellationError {
            failure = nil
        } catch {
            failure = error.asPXError
        }
        let status = output.finish(backend: backendName, data: nil, error: failure)
        if status != 0 { throw ExitCode(status) }
    }
}

func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
