import DICOMData

#if canImport(Glibc)
    import Glibc
#endif

/// Writes px's JSON to stdout (and only JSON: logs go to stderr).
public struct CommandOutput: Sendable {
    /// Indented JSON instead of one line.
    public var pretty: Bool
    /// The argv that ran, for the envelope.
    public var command: [String]
    /// Where the bytes go: stdout, or what a test collects.
    let sink: @Sendable ([UInt8]) -> Void
    /// The `data` array a command spooled (px-find), streamed into the envelope once it is complete
    /// (``JSONArraySpool/complete()``).
    public var spool: JSONArraySpool?
    /// The envelope's `command` as one string instead of the argv (px-find's pypx format: pypx's `command`).
    public var commandLine: String?

    public init(
        pretty: Bool, command: [String] = CommandLine.arguments,
        sink: @escaping @Sendable ([UInt8]) -> Void = CommandOutput.writeStandardOutput
    ) {
        self.pretty = pretty
        self.command = Self.redacted(command)
        self.sink = sink
    }

    /// `argv` with the value of `--password` (``UserIdentityOptions/password``) replaced by `***`, in both
    /// spellings (`--password PW`, `--password=PW`): the envelope echoes the command line, never the secret.
    public static func redacted(_ argv: [String]) -> [String] {
        var out = argv
        var index = out.startIndex
        while index < out.endIndex {
            if out[index] == "--" { break }
            if out[index] == "--password", index + 1 < out.endIndex {
                out[index + 1] = "***"
                index += 1
            } else if out[index].hasPrefix("--password=") {
                out[index] = "--password=***"
            }
            index += 1
        }
        return out
    }

    /// Writes one JSON value and a newline.
    public func write(_ value: JSONValue, pretty: Bool? = nil) {
        var out: [UInt8] = []
        value.write(into: &out, pretty: pretty ?? self.pretty, indent: 0)
        out.append(0x0A)
        sink(out)
    }

    /// Writes text as it is.
    public func writeText(_ text: String) {
        sink(Array(text.utf8))
    }

    /// Writes the envelope and returns the exit status for it. When a ``spool`` is complete and `data` has its
    /// place (`data` is `nil` for a spool of `data` itself; an object holding the spool's
    /// ``JSONArraySpool/member``, whose value there is ignored, for a spooled member), the envelope is
    /// streamed: its leading members, the spooled array copied from its file in chunks where it belongs,
    /// its trailing members.
    @discardableResult
    public func finish(backend: String, data: JSONValue?, error: PXError?) -> Int32 {
        guard let spool, spool.isComplete, let around = Self.members(around: spool, in: data) else {
            write(
                PXOutput.envelope(
                    backend: backend, command: command, data: data, error: error, commandLine: commandLine))
            return error.map(PXExit.code(for:)) ?? PXExit.success
        }
        if let failure = spool.flush() {
            write(
                PXOutput.envelope(
                    backend: backend, command: command, data: nil, error: .io(failure), commandLine: commandLine))
            return PXExit.code(for: .io(failure))
        }
        var writer = JSONStreamWriter(pretty: pretty)
        writer.beginObject()
        writer.members(
            of: PXOutput.EnvelopeHead(
                backend: backend, command: command, failed: error != nil, commandLine: commandLine))
        writer.key("data")
        if let around {
            writer.beginObject()
            for member in around.before { writer.member(member) }
            writer.key(around.key)
        }
        writer.externalValue()
        sink(writer.take())
        let failure = spool.copy(to: sink)
        if let around {
            for member in around.after { writer.member(member) }
            writer.end()
        }
        writer.members(of: PXOutput.EnvelopeTail(error: error))
        writer.end()
        sink(writer.take() + [0x0A])
        if let failure {
            // Too late for the envelope: the array is closed (shorter) and the run fails.
            CommandOutput.writeStandardError("px: \(failure)\n")
            return PXExit.code(for: .io(failure))
        }
        return error.map(PXExit.code(for:)) ?? PXExit.success
    }

    /// Where `spool`'s array goes in `data`: `.some(nil)` for `data` itself (`data` is `nil`), the members
    /// before and after the spooled member for a spooled member of the `data` object; `nil` when `data` has
    /// no place for it (the envelope is then written as it is).
    private static func members(around spool: JSONArraySpool, in data: JSONValue?)
        -> (before: ArraySlice<JSONMember>, key: String, after: ArraySlice<JSONMember>)??
    {
        guard let member = spool.member else { return data == nil ? .some(nil) : nil }
        guard case .object(let members) = data, let index = members.firstIndex(where: { $0.key == member }) else {
            return nil
        }
        return .some((members[..<index], member, members[(index + 1)...]))
    }

    /// Writes the bytes to stdout in full.
    public static func writeStandardOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var written = 0
            while written < raw.count {
                let n = Glibc.write(1, base + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return
                }
                written += n
            }
        }
    }

    /// Whether stderr is a terminal (progress lines are shown only then).
    public static var standardErrorIsTerminal: Bool { isatty(2) == 1 }

    /// Writes a line to stderr.
    public static func writeStandardError(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { raw in
            if let base = raw.baseAddress { _ = Glibc.write(2, base, raw.count) }
        }
    }
}

extension Error {
    /// Any error as a ``PXError`` (non-px errors become `io`).
    public var asPXError: PXError { PXError.from(self) }
}
