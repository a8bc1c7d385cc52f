import PXCore

/// Turns a DCMTK tool's exit code and `F:`/`E:` lines into a ``PXError``.
///
/// The message texts and exit codes are those of DCMTK 3.6.7 with `LC_ALL=C`:
/// `0006:031c … Connection refused`, `0006:0320 … unknown host`, `0006:031a DUL network read
/// timeout` (ACSE), `0006:0207 DIMSE No data available` (DIMSE timeout), `Association Rejected:`
/// with `Result:`/`Source:` and `Reason:` lines, `No Acceptable Presentation Contexts`.
public enum DCMTKFailureClassifier {
    /// The error the failure lines describe, or `nil` when they describe none.
    public static func classify(lines: [DCMTKLogLine], connection: Connection) -> PXError? {
        let failures = lines.filter(\.isFailure)
        guard !failures.isEmpty else { return nil }
        let node = connection.node
        let texts = failures.map(\.text)
        func any(_ needle: String) -> Bool { texts.contains { $0.contains(needle) } }

        if any("Association Rejected") {
            var result = "unknown"
            var source = "unknown"
            var reason = "unknown"
            for text in texts {
                if text.hasPrefix("Result: ") {
                    let body = text.dropFirst("Result: ".count)
                    if let comma = body.firstRange(of: ", Source: ") {
                        result = String(body[..<comma.lowerBound])
                        source = String(body[comma.upperBound...])
                    } else {
                        result = String(body)
                    }
                } else if text.hasPrefix("Reason: ") {
                    reason = String(text.dropFirst("Reason: ".count))
                }
            }
            return .associationRejected(result: result, source: source, reason: reason)
        }
        if any("0006:031c") || any("Connection refused") {
            if any("timed out") || any("Connection timed out") {
                return .timeout("connect", seconds: connection.timeouts.connect)
            }
            return .connectionRefused(host: node.host, port: node.port, detail: texts.first { $0.contains("0006:") })
        }
        if any("0006:0320") || any("unknown host") { return .unknownHost(node.host) }
        if any("0006:031a") || any("DUL network read timeout") {
            return .timeout("ACSE", seconds: connection.timeouts.acse)
        }
        if any("0006:0207") || any("DIMSE No data available") || any("timeout in non-blocking mode") {
            return .timeout("DIMSE", seconds: connection.timeouts.dimse)
        }
        if any("timed out") || any("Timeout") || any("timeout") {
            return .timeout("connect", seconds: connection.timeouts.connect, detail: texts.first)
        }
        if any("No Acceptable Presentation Contexts") || any("No presentation context")
            || any("No adequate Presentation Contexts")  // getscu (DcmSCU)
        {
            return .noAcceptablePresentationContext()
        }
        if any("Abort") || any("abort") {
            return .aborted(texts.first { $0.lowercased().contains("abort") } ?? "association aborted")
        }
        return nil
    }

    /// The error for a finished tool: from its lines, or from its exit code when they say nothing.
    public static func classify(
        tool: String, exitCode: Int32?, signal: Int32?, lines: [DCMTKLogLine], connection: Connection
    ) -> PXError? {
        if let signal { return .aborted("\(tool) was killed by signal \(signal)") }
        if let error = classify(lines: lines, connection: connection) { return error }
        guard let exitCode, exitCode != 0 else { return nil }
        // movescu's documented codes (movescu(1)); 68/69 are C-MOVE statuses handled by the caller.
        switch (tool, exitCode) {
        case ("movescu", 61), ("movescu", 60):
            return .connectionRefused(host: connection.node.host, port: connection.node.port)
        case ("movescu", 66): return .noAcceptablePresentationContext()
        default:
            let detail = lines.first(where: \.isFailure)?.text ?? "no diagnostic"
            return .invalidResponse("\(tool) exited with status \(exitCode): \(detail)")
        }
    }
}
