import DICOMData
import Logging
import PXCore

/// The backend that drives DCMTK's command-line tools (echoscu, findscu, movescu, storescp).
///
/// Each operation runs one child process through swift-subprocess with an argument array,
/// `TCP_NODELAY=1` and `LC_ALL=C`; connect, ACSE and DIMSE timeouts are passed as `-to`, `-ta`,
/// `-td`, and the overall deadline kills the child. Failures are classified from the tool's exit
/// code and its `F:`/`E:` lines (``DCMTKFailureClassifier``).
public struct DCMTKBackend: DICOMBackend {
    public var name: String { "dcmtk" }

    /// Explicit tool paths by tool name (pypx's `--executable`); others are looked up on PATH.
    public var executables: [String: String]

    public init(executables: [String: String] = [:]) {
        self.executables = executables
    }

    func runner(_ tool: String) -> ToolRunner {
        ToolRunner(tool: tool, executablePath: executables[tool])
    }

    /// Whether a tool is on PATH (for `--backend auto`).
    public static func isInstalled(_ tool: String = "echoscu") -> Bool {
        let path = ProcessEnvironment.value("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").contains { dir in
            access("\(dir)/\(tool)", X_OK) == 0
        }
    }

    /// Whether `path` names a file this process may run (an explicit tool path, pypx's `--executable`).
    public static func isExecutable(_ path: String) -> Bool {
        access(path, X_OK) == 0
    }

    /// `-aet -aec -to -ta -td` and the peer, the arguments every SCU tool shares.
    static func associationArguments(_ connection: Connection) -> [String] {
        let t = connection.timeouts
        return [
            "-aet", connection.local.aeTitle, "-aec", connection.node.calledAETitle,
            "-to", String(Timeouts.wholeSeconds(t.connect)),
            "-ta", String(Timeouts.wholeSeconds(t.acse)),
            "-td", String(Timeouts.wholeSeconds(t.dimse)),
        ] + Self.clientTLSArguments(connection.tls)
    }

    static func peerArguments(_ connection: Connection) -> [String] {
        [connection.node.host, String(connection.node.port)]
    }

    /// The error for a finished tool, the deadline included.
    static func failure(tool: String, outcome: ToolRunner.Outcome, connection: Connection) -> PXError? {
        if outcome.timedOut {
            return .timeout("deadline", seconds: connection.timeouts.deadline, detail: "\(tool) killed")
        }
        if let tls = Self.tlsFailure(outcome.diagnostics, settings: connection.tls) { return tls }
        return DCMTKFailureClassifier.classify(
            tool: tool, exitCode: outcome.exitCode, signal: outcome.signal, lines: outcome.diagnostics,
            connection: connection)
    }
}

#if canImport(Glibc)
    import Glibc
#endif

enum ProcessEnvironment {
    static func value(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }
}
