import DICOMData
import Logging
import PXCore
import Subprocess

#if canImport(Glibc)
    import Glibc
#endif

extension DCMTKBackend {
    /// C-ECHO with `echoscu -v` (PS3.4 Annex A).
    ///
    /// echoscu gets a dictionary of the command elements only (``CommandDictionary``): loading
    /// Debian's full `dicom.dic` and `private.dic` is most of its start-up time, and C-ECHO carries no
    /// data set.
    public func echo(connection: Connection, logger: Logger) async throws(PXError) -> EchoResult {
        let start = monotonicSeconds()
        var status: DIMSEStatus?
        let arguments =
            ["-v"] + Self.associationArguments(connection)
            + (try Self.userIdentityArguments(connection, tool: "echoscu")) + Self.peerArguments(connection)
        let outcome = try await CommandDictionary.withFile { (dictionary) async throws(PXError) in
            var echoscu = runner("echoscu")
            echoscu.childEnvironment = ToolRunner.environment.updating(["DCMDICTPATH": dictionary])
            return try await echoscu.run(arguments, deadline: connection.timeouts.deadline, logger: logger) { line in
                if line.level == .info, line.text.hasPrefix("Received Echo Response") {
                    status = FindLogParser.status(in: line.text, service: .echo, default: .success)
                }
            }
        }
        if let error = Self.failure(tool: "echoscu", outcome: outcome, connection: connection) { throw error }
        guard let status else { throw PXError.invalidResponse("echoscu reported no C-ECHO response") }
        if status.isFailure { throw PXError.dimseFailure(status, operation: "C-ECHO") }
        return EchoResult(
            node: connection.node, callingAETitle: connection.local.aeTitle, status: status,
            elapsed: monotonicSeconds() - start)
    }
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}
