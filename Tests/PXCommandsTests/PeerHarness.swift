import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Runs the built px executables and the DCMTK peers of the integration tests, on 127.0.0.1 only.
/// Runs the built px executables for the integration tests, on 127.0.0.1 only.
enum PeerHarness {
    struct Run {
        var exitCode: Int32
        var stdout: String
        var stderr: String
        var json: JSONValue? { try? JSONParser.parse(stdout.split(separator: "\n").last.map(String.init) ?? "") }

        init(exitCode: Int32, stdout: String, stderr: String) {
            self.exitCode = exitCode
            self.stdout = stdout
            self.stderr = stderr
        }

        init(_ result: TestSupport.ProcessResult) {
            self.init(exitCode: result.status, stdout: result.output, stderr: result.errorOutput)
        }
    }

    /// A px executable by name (found in ``TestSupport/binDirectory``), or any program by path.
    static func path(_ executable: String) -> String {
        executable.hasPrefix("/") ? executable : TestSupport.binDirectory + "/" + executable
    }

    /// Runs a command to completion, blocking in `waitpid`; stdout and stderr apart.
    static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) throws -> Run {
        Run(
            try TestSupport.runBlocking(
                path(executable), arguments, stdin: stdin, environment: environment, separateErrorOutput: true))
    }

    /// ``run(_:_:stdin:environment:)`` for async tests: no thread of the cooperative pool (two on CI) is
    /// blocked while a peer command runs.
    static func runAsync(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) async throws -> Run {
        Run(
            try await TestSupport.run(
                path(executable), arguments, stdin: stdin, environment: environment, separateErrorOutput: true))
    }

    /// Fails the test (never skips) when a peer tool or the venv is missing.
    static func requireTools(_ tools: [String]) -> Bool {
        var ok = true
        for tool in tools where TestSupport.locate(tool) == nil {
            Issue.record("\(MissingPeer(what: tool))")
            ok = false
        }
        if !FileManager.default.isExecutableFile(atPath: TestSupport.python) {
            Issue.record("\(MissingPeer(what: "the Python venv (\(TestSupport.python))"))")
            ok = false
        }
        return ok
    }
}
