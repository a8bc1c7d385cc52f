import ArgumentParser
import DICOMData
import Logging
import PXCommandLine
import PXCore

#if canImport(Glibc)
import Glibc
#endif

@main
struct PXMove: PXCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-move",
        abstract: "Move studies, series or instances to a destination AE with C-MOVE.",
        discussion: """
            Give the UIDs (--StudyInstanceUID, with --SeriesInstanceUID, with
            --SOPInstanceUID), or pipe a px-find result into px-move and everything in it
            is moved (each series of a study with a series list, otherwise each entry at
            its own level):

              px-find QRSCP@127.0.0.1:11112 --PatientID PAT001 \\
                | px-move QRSCP@127.0.0.1:11112 --destination PXLISTEN

            StudyInstanceUID is always sent with SeriesInstanceUID (some archives require
            it). The destination: --destination, pypx 0.8's --aetl, else pypx 3.x's --aet.
            Progress goes to stderr when it is a terminal.

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    @Option(name: [.long, .customLong("aem"), .customLong("aetl")], help: "The move destination AE title (pypx 0.8: --aetl).")
    var destination: String?
    @Option(name: .long, help: "Information model: study (default) or patient.") var model: String = "study"
    @Option(name: .customLong("PatientID"), help: "PatientID (needed for --model patient).") var patientID: String?
    @Option(name: .customLong("StudyInstanceUID"), help: "The study to move.") var studyInstanceUID: String?
    @Option(name: [.customLong("SeriesInstanceUID"), .customLong("seriesUID")], help: "A series of the study to move.")
    var seriesInstanceUID: String?
    @Option(name: .customLong("SOPInstanceUID"), help: "Instances of the series to move (repeatable).")
    var sopInstanceUIDs: [String] = []
    @Flag(name: .long, help: "Indent the JSON.") var pretty = false

    func validate() throws {
        if QueryModel(rawValue: model) == nil { throw ValidationError("--model must be study or patient") }
        if destination == nil && connection.callingAETitle == nil { throw ValidationError("give the move destination with --destination") }
        if studyInstanceUID == nil && (seriesInstanceUID != nil || !sopInstanceUIDs.isEmpty) {
            throw ValidationError("--SeriesInstanceUID and --SOPInstanceUID need --StudyInstanceUID")
        }
        if studyInstanceUID == nil && isatty(0) == 1 {
            throw ValidationError("give --StudyInstanceUID, or pipe a px-find result into px-move")
        }
    }

    func requests() throws(PXError) -> [MoveRequest] {
        let dest = destination ?? connection.callingAETitle!
        let queryModel = QueryModel(rawValue: model)!
        if let studyInstanceUID {
            return [
                try MoveRequest(
                    model: queryModel, destination: dest, patientID: patientID, studyInstanceUID: studyInstanceUID,
                    seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs)
            ]
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(0, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        let targets = try MoveTarget.parse(pxFindOutput: String(decoding: bytes, as: UTF8.self))
        guard !targets.isEmpty else { throw .usage("nothing to move: stdin holds no StudyInstanceUID") }
        return try targets.map { (t: MoveTarget) throws(PXError) -> MoveRequest in
            try MoveRequest(
                model: queryModel, destination: dest, patientID: t.patientID ?? patientID, studyInstanceUID: t.studyInstanceUID,
                seriesInstanceUID: t.seriesInstanceUID, sopInstanceUIDs: t.sopInstanceUID.map { [$0] } ?? [])
        }
    }

    func run() async throws {
        let logger = logging.makeLogger(label: "px-move")
        let output = CommandOutput(pretty: pretty)
        var backendName = backend.reportedName
        var results: [MoveResult] = []
        var failure: PXError?
        do {
            let dicomBackend = try backend.make(executables: connection.executables(for: "movescu"), tool: "movescu")
            backendName = dicomBackend.name
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            let showProgress = CommandOutput.standardErrorIsTerminal
            for request in try requests() {
                let result = try await dicomBackend.move(request, connection: conn, logger: logger) { progress in
                    if showProgress {
                        let remaining = progress.remaining.map(String.init) ?? "-"
                        CommandOutput.writeStandardError(
                            "\rpx-move: \(request.level.dicomValue) \(request.seriesInstanceUID ?? request.studyInstanceUID): completed \(progress.completed), failed \(progress.failed), remaining \(remaining)   ")
                    }
                }
                if showProgress { CommandOutput.writeStandardError("\n") }
                results.append(result)
                if result.status.isFailure {
                    failure = .dimseFailure(result.status, operation: "C-MOVE")
                    break
                }
            }
        } catch {
            failure = error.asPXError
        }
        let data: JSONValue = .object([
            JSONMember("moves", .array(results.map(PXOutput.json))),
            JSONMember("completed", .integer(results.reduce(0) { $0 + $1.completed })),
            JSONMember("failed", .integer(results.reduce(0) { $0 + $1.failed })),
            JSONMember("warning", .integer(results.reduce(0) { $0 + $1.warning })),
        ])
        let status = output.finish(backend: backendName, data: data, error: failure)
        if status != 0 { throw ExitCode(status) }
    }
}
