import Foundation
import PXTestSupport

/// Runs the external programs the data-layer tests compare against (DCMTK, pydicom in the project's venv).
///
/// A missing program is a test failure that says how to install it, never a skip: CI installs every
/// one through `scripts/setup-test-env.sh`.
enum ExternalTool {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    struct Missing: Error, CustomStringConvertible {
        var tool: String
        var description: String {
            "\(tool) is not installed; run scripts/setup-test-env.sh (DCMTK, Orthanc and the Python venv)"
        }
    }

    /// The full path of a program (a path, or a name on PATH).
    static func locate(_ tool: String) throws -> String {
        guard let path = TestSupport.locate(tool) else { throw Missing(tool: tool) }
        return path
    }

    /// Runs a program to completion (``TestSupport/run(_:_:stdin:environment:separateErrorOutput:)``, with
    /// `LC_ALL=C`) and collects its output, stdout and stderr apart.
    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        var environment = environment
        if environment["LC_ALL"] == nil { environment["LC_ALL"] = "C" }
        let result = try await TestSupport.run(
            try locate(tool), arguments, environment: environment, separateErrorOutput: true)
        return Output(status: result.status, stdout: result.outputBytes, stderr: result.errorOutput)
    }
}
