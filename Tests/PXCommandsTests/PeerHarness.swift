import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Runs the built px executables and the DCMTK peers of the integration tests, on 127.0.0.1 only.
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

    /// Runs a command to completion; stdout and stderr apart. Async, so no thread of the cooperative pool
    /// (two on CI) is blocked while a peer command runs.
    static func run(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) async throws -> Run {
        Run(
            try await TestSupport.run(
                path(executable), arguments, stdin: stdin, environment: environment, separateErrorOutput: true))
    }

    /// ``run(_:_:stdin:environment:)`` under its earlier name.
    static func runAsync(
        _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:]
    ) async throws -> Run {
        try await run(executable, arguments, stdin: stdin, environment: environment)
    }

    /// Starts one of the Python peers in scripts/ (each prints `{"event": "listening", "port": N}` when it is
    /// ready); returns it and its port.
    static func startPythonPeer(_ script: String, _ arguments: [String], log: String) async throws -> (PeerProcess, Int)
    {
        let peer = try PeerProcess(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/" + script] + arguments, logFile: log)
        do {
            let listening = try await peer.waitForEvent { $0["event"]?.stringValue == "listening" }
            guard case .number(let n)? = listening["port"], let port = Int(n) else {
                throw PeerProcess.PeerFailed(description: "\(script) listens on no port: \(peer.log)")
            }
            return (peer, port)
        } catch {
            await peer.stop()
            throw error
        }
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
