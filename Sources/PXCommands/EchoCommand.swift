import PXCommandLine
import PXCore

/// px-echo: one C-ECHO (PS3.7 §9.1.5), its result as the envelope's data.
public enum EchoCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        output: OutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-echo")
        try await CommandRunner.run(
            output: output.output, backend: backend, executables: connection.executables(for: "echoscu"),
            tool: "echoscu", peer: connection
        ) { dicomBackend, data in
            let conn = try connection.connection(timeouts: timeouts.timeouts)
            data = PXOutput.json(try await dicomBackend.echo(connection: conn, logger: logger))
            return nil
        }
    }
}
