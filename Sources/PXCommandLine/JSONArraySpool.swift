import DICOMData
import PXCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The envelope's `data` array written to an unlinked temporary file as its entries arrive, and copied into
/// the envelope when the command ends: px-find keeps no response in memory whatever the peer sends (issue 14),
/// and the envelope stays one valid JSON document with `status` first.
///
/// Entries are serialized as ``CommandOutput`` would serialize them inside the envelope (compact, or indented
/// at the depth of `data`'s elements), so the output is byte for byte the one of an array held in memory. A
/// command that spooled sets `data` to ``placeholder``; ``CommandOutput/finish(backend:data:error:)`` splices
/// the array in its place.
public final class JSONArraySpool: Sendable {
    /// The `data` value that stands for the spooled array.
    public static let placeholder = JSONValue.string("\u{0}px-spooled-array\u{0}")

    private struct State {
        var fd: Int32
        var count = 0
        var buffer: [UInt8] = []
        var failure: String?
    }
    private let state: Mutex<State>
    let pretty: Bool

    /// Opens the temporary file in `$TMPDIR` (else /tmp) and unlinks it at once, so nothing is left behind.
    /// - Throws: ``PXError/io(_:path:)`` when no temporary file can be made.
    public init(pretty: Bool) throws(PXError) {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((directory + "/px-find-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw .io("cannot make a temporary file: \(String(cString: strerror(errno)))", path: directory)
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.state = Mutex(State(fd: fd))
        self.pretty = pretty
    }

    deinit {
        state.withLock { _ = close($0.fd) }
    }

    /// How many entries were appended.
    public var count: Int { state.withLock { $0.count } }

    /// Appends one entry of the array.
    public func append(_ value: JSONValue) {
        state.withLock { state in
            if state.count > 0 { state.buffer.append(UInt8(ascii: ",")) }
            if pretty { state.buffer.append(contentsOf: "\n    ".utf8) }  // data's elements: depth 2
            value.write(into: &state.buffer, pretty: pretty, indent: 2)
            state.count += 1
            if state.buffer.count >= 1 << 16 { Self.flush(&state) }
        }
    }

    private static func flush(_ state: inout State) {
        guard !state.buffer.isEmpty, state.failure == nil else { return }
        let fd = state.fd
        let failure: String? = state.buffer.withUnsafeBytes { raw in
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
        state.failure = failure
        state.buffer.removeAll(keepingCapacity: true)
    }

    /// Writes what is buffered to the file.
    /// - Returns: why the temporary file could not be written, if it could not.
    func flush() -> String? {
        state.withLock { state in
            Self.flush(&state)
            return state.failure.map { "cannot write the spooled responses to a temporary file: \($0)" }
        }
    }

    /// Writes the array (`[`, the entries, `]`) to `sink` in chunks; the array is closed even when reading
    /// the file back fails.
    /// - Returns: the reason the temporary file could not be written or read back, if any.
    func copy(to sink: ([UInt8]) -> Void) -> String? {
        state.withLock { state in
            if state.count == 0 {
                sink(Array("[]".utf8))
                return nil
            }
            Self.flush(&state)
            if let failure = state.failure { return failure }
            sink([UInt8(ascii: "[")])
            defer { sink(Array((pretty ? "\n  ]" : "]").utf8)) }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            var offset: off_t = 0
            while true {
                let n = chunk.withUnsafeMutableBytes { pread(state.fd, $0.baseAddress!, $0.count, offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    return "cannot read back the spooled responses: \(String(cString: strerror(errno)))"
                }
                if n == 0 { break }
                sink(Array(chunk[0..<n]))
                offset += off_t(n)
            }
            return nil
        }
    }
}
