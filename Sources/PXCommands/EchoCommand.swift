import PXCommandLine
import PXCore

/// px-echo: one C-ECHO (PS3.7 §9.1.5) to a DIMSE node, or a QIDO-RS search (PS3.18 §10.6) of a DICOMweb
/// service (what it checked: ``WebVerification``), its result as the envelope's data.
public enum EchoCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        output: OutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-echo")
        try await CommandRunner.run(
            output: output.output, backend: backend, need: .verify, peer: connection, timeouts: timeouts.timeouts
        ) { peer, data in
            data = PXOutput.json(try await peer.verify(logger: logger))
            return nil
        }
    }
}
