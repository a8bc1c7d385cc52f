import ArgumentParser
import DICOMData
import Logging
import PXCommandLine
import PXCore

#if canImport(Glibc)
import Glibc
#endif

@main
struct PXGet: PXCommand {
    static let configuration = CommandConfiguration(
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

            StudyInstanceUID is always sent with SeriesInstanceUID. data.gets lists each
            C-GET with its final status, sub-operation counts (completed, failed, warning,
            remaining) and the stored instances (path, UIDs, bytes = data set length). The
            DCMTK backend runs getscu +B.

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    @Option(name: [.customShort("d"), .customLong("datadir")], help: "Root of the storage tree.") var root: String = "./px-data"
    @Option(name: .long, help: "Information model: study (default) or patient.") var model: String = "study"
    @Option(name: .customLong("PatientID"), help: "PatientID (needed for --model patient).") var patientID: String?
    @Option(name: .customLong("StudyInstanceUID"), help: "The study to retrieve.") var studyInstanceUID: String?
    @Option(name: [.customLong("SeriesInstanceUID"), .customLong("seriesUID")], help: "A series of the study to retrieve.")
    var seriesInstanceUID: String?
    @Option(name: .customLong("SOPInstanceUID"), help: "Instances of the series to retrieve (repeatable).")
    var sopInstanceUIDs: [String] = []
    @Flag(name: .long, help: "Indent the JSON.") var pretty = false

    func validate() throws {
        if QueryModel(rawValue: model) == nil { throw ValidationError("--model must be study or patient") }
        if studyInstanceUID == nil && (seriesInstanceUID != nil || !sopInstanceUIDs.isEmpty) {
            throw ValidationError("--SeriesInstanceUID and --SOPInstanceUID need --StudyInstanceUID")
        }
        if studyInstanceUID == nil && isatty(0) == 1 {
            throw ValidationError("give --StudyInstanceUID, or pipe a px-find result into px-get")
        }
    }

    func requests(root: String) throws(PXError) -> [GetRequest] {
        let queryModel = QueryModel(rawValue: model)!
        if let studyInstanceUID {
            return [
                try GetRequest(
                    model: queryModel, patientID: patientID, studyInstanceUID: studyInstanceUID,
                    seriesInstanceUID: seriesInstanceUID, sopInstanceUIDs: sopInstanceUIDs, root: root)
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
        guard !targets.isEmpty else { throw .usage("nothing to get: stdin holds no StudyInstanceUID") }
        return try targets.map { (t: MoveTarget) throws(PXError) -> GetRequest in
            try GetRequest(
                model: queryModel, patientID: t.patientID ?? patientID, studyInstanceUID: t.studyInstanceUID,
                seriesInstanceUID: t.seriesInstanceUID, sopInstanceUIDs: t.sopInstanceUID.map { [$0] } ?? [], root: root)
        }
    }

    func run() async throws {
        let logger = logging.makeLogger(label: "px-get")
        let output = CommandOutput(pretty: pretty)
        var backendName = backend.reportedName
        var results: [GetResult] = []
        var failure: PXError?
        do {
            let dicomBackend = try backend.make(executables: connection.executables(for: "getscu"), tool: "getscu")
            backendName = dicomBackend.name
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            let absoluteRoot = root.hasPrefix("/") ? root : (currentDirectory() + "/" + root)
            let showProgress = CommandOutput.standardErrorIsTerminal
            for request in try requests(root: absoluteRoot) {
                let result = try await dicomBackend.get(request, connection: conn, logger: logger) { progress in
                    if showProgress {
                        CommandOutput.writeStandardError(
                            "\rpx-get: \(request.level.dicomValue) \(request.seriesInstanceUID ?? request.studyInstanceUID): completed \(progress.completed), failed \(progress.failed)   ")
                    }
                }
                if showProgress { CommandOutput.writeStandardError("\n") }
                results.append(result)
                if result.status.isFailure {
                    failure = .dimseFailure(result.status, operation: "C-GET")
                    break
                }
            }
        } catch {
            failure = error.asPXError
        }
        let data: JSONValue = .object([
            JSONMember("gets", .array(results.map(PXOutput.json))),
            JSONMember("completed", .integer(results.reduce(0) { $0 + $1.completed })),
            JSONMember("failed", .integer(results.reduce(0) { $0 + $1.failed })),
            JSONMember("warning", .integer(results.reduce(0) { $0 + $1.warning })),
            JSONMember("instances", .integer(results.reduce(0) { $0 + $1.instances.count })),
        ])
        let status = output.finish(backend: backendName, data: data, error: failure)
        if status != 0 { throw ExitCode(status) }
    }
}

func currentDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getcwd(&buffer, buffer.count) != nil else { return "." }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
