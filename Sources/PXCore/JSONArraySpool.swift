import DICOMData
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An array of the envelope's `data` written to an unlinked temporary file as its entries arrive, and streamed
/// into the envelope when the command ends: px-find keeps no response in memory whatever the peer sends
/// (issue 14), px-get no retrieve's instances (issue 34), and the envelope stays one valid JSON document with
/// `status` first (known only at the end).
///
/// The array is `data` itself (px-find), or the value of one ``member`` of the `data` object (px-get's
/// `gets`). The entries go through a ``JSONStreamWriter`` placed where the array sits in the envelope, so the
/// output is byte for byte the one of an array held in memory. A command whose output holds the spooled array
/// says so with ``complete()``; ``CommandOutput/finish(backend:data:error:)`` then streams the array in its
/// place.
public final class JSONArraySpool: Sendable {
    private struct State {
        var fd: Int32
        var count = 0
        /// The array as the envelope's `data` (indentation level 1), `[` already written.
        var writer: JSONStreamWriter
        var failure: String?
        var isComplete = false
    }
    private let state: Mutex<State>
    /// The member of the `data` object whose value is the array, or `nil` when the array is `data`.
    public let member: String?

    /// Opens the temporary file in `$TMPDIR` (else /tmp) and unlinks it at once, so nothing is left behind.
    /// - Parameter member: the key of the `data` member the array is the value of; `nil` for `data` itself.
    /// - Throws: ``PXError/io(_:path:)`` when no temporary file can be made.
    public init(pretty: Bool, member: String? = nil) throws(PXError) {
        self.member = member
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/px-spool-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw .io("cannot make a temporary file: \(String(cString: strerror(errno)))", path: directory)
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        var writer = JSONStreamWriter(pretty: pretty, indent: member == nil ? 1 : 2)
        writer.beginArray()
        self.state = Mutex(State(fd: fd, writer: writer))
    }

    deinit {
        state.withLock { _ = close($0.fd) }
    }

    /// How many entries were appended.
    public var count: Int { state.withLock { $0.count } }

    /// Appends one entry of the array.
    public func append(_ value: JSONValue) {
        state.withLock { state in
            state.writer.value(value)
            state.count += 1
            if state.writer.bytes.count >= 1 << 16 { Self.flush(&state) }
        }
    }

    /// Marks the array as complete: it is the command's `data` (or its ``member``).
    public func complete() {
        state.withLock { $0.isComplete = true }
    }

    /// Whether ``complete()`` was called.
    public var isComplete: Bool { state.withLock { $0.isComplete } }

    private static func flush(_ state: inout State) {
        let bytes = state.writer.take()
        guard !bytes.isEmpty, state.failure == nil else { return }
        let fd = state.fd
        state.failure = bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let n = write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    return String(cString: strerror(errno))
                }
                written += n
            }
            return nil
        }
    }

    /// Writes what is buffered to the file.
    /// - Returns: why the temporary file could not be written, if it could not.
    func flush() -> String? {
        state.withLock { state in
            Self.flush(&state)
            return state.failure.map { "cannot write the spooled entries to a temporary file: \($0)" }
        }
    }

    /// Writes the array (`[`, the entries, `]`) to `sink` in chunks; the array is closed even when reading
    /// the file back fails.
    /// - Returns: the reason the temporary file could not be written or read back, if any.
    func copy(to sink: ([UInt8]) -> Void) -> String? {
        state.withLock { state in
            Self.flush(&state)
            if let failure = state.failure { return failure }
            var copied: off_t = 0
            defer {
                if copied == 0 { sink([UInt8(ascii: "[")]) }
                state.writer.end()
                sink(state.writer.take())
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let n = chunk.withUnsafeMutableBytes { pread(state.fd, $0.baseAddress!, $0.count, copied) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return "cannot read back the spooled entries: \(String(cString: strerror(errno)))"
                }
                if n == 0 { break }
                sink(Array(chunk[0..<n]))
                copied += off_t(n)
            }
            return nil
        }
    }
}
