import ArgumentParser
import DICOMData
import PXCommandLine
import PXCore

@main
struct PXEcho: PXCommand {
    static let configuration = CommandConfiguration(
        commandName: "px-echo",
        abstract: "Verify a DICOM peer with C-ECHO and print the result as JSON.",
        discussion: """
            Prints {"status": ..., "backend": ..., "command": [...], "data": {...}} on
            stdout; on failure "error": {"code": ..., "message": ...} says why
            (connectionRefused, unknownHost, timeout, associationRejected, ...).

            Examples:
              px-echo 127.0.0.1:11112
              px-echo ORTHANC@pacs.example:4242 --aet MYSCU
              px-echo --aec ORTHANC --serverIP 127.0.0.1 --serverPort 4242   (pypx 0.8)

            \(PXExit.helpTable)
            """
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @Flag(name: .long, help: "Indent the JSON.") var pretty = false

    func run() async throws {
        let logger = logging.makeLogger(label: "px-echo")
        let output = CommandOutput(pretty: pretty)
        var backendName = backend.reportedName
        let status: Int32
        do {
            let dicomBackend = try backend.make(executables: connection.executables(for: "echoscu"))
            backendName = dicomBackend.name
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            let result = try await dicomBackend.echo(connection: conn, logger: logger)
            status = output.finish(backend: backendName, data: PXOutput.json(result), error: nil)
        } catch {
            status = output.finish(backend: backendName, data: nil, error: error.asPXError)
        }
        if status != 0 { throw ExitCode(status) }
    }
}
