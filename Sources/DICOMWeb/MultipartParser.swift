import PXCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A streaming parser of a `multipart/related` body (RFC 2387 on RFC 2046 §5.1), the form WADO-RS
/// answers in (PS3.18 §8.7.3.1): bytes go in as they arrive, and each part comes out as its headers,
/// then its content in pieces, then its end.
///
/// Memory is bounded whatever the peer sends: the parser keeps at most the bytes of one delimiter
/// (which may straddle two chunks) plus one chunk, and part headers up to ``maximumHeaderBytes``.
/// A part's content is never collected; the caller writes each piece where it belongs.
public struct MultipartParser: Sendable {
    /// What ``feed(_:_:)`` reports.
    public enum Event {
        /// A part starts; its header fields, names in lower case.
        case partBegin(headers: [(name: String, value: String)])
        /// Content of the current part.
        case content(UnsafeRawBufferPointer)
        /// The current part is complete.
        case partEnd
    }

    private enum State: Sendable { case preamble, afterDelimiter, headers, content, epilogue }

    /// `CRLF--boundary`: every delimiter, the first one included (the parser starts as if a CRLF
    /// came before the body, RFC 2046 §5.1.1).
    private let delimiter: [UInt8]
    private var state = State.preamble
    private var buffer: [UInt8]
    private var start = 0
    /// Bytes of transport padding seen after a delimiter.
    private var padding = 0
    /// Header block limit.
    public let maximumHeaderBytes: Int
    /// Whether the closing delimiter (`--boundary--`) was seen.
    public var isComplete: Bool { state == .epilogue }

    /// - Throws: ``PXError/invalidResponse(_:)`` for a boundary RFC 2046 does not allow.
    public init(boundary: String, maximumHeaderBytes: Int = 16 * 1024) throws(PXError) {
        guard (1...70).contains(boundary.utf8.count) else {
            throw .invalidResponse("multipart boundary must be 1 to 70 characters (RFC 2046 §5.1.1)")
        }
        delimiter = Array("\r\n--".utf8) + Array(boundary.utf8)
        buffer = Array("\r\n".utf8)
        self.maximumHeaderBytes = maximumHeaderBytes
    }

    /// The boundary parameter of a `multipart/related` Content-Type (quoted or not).
    /// - Throws: ``PXError/invalidResponse(_:)`` when it is not multipart or has no boundary.
    public static func boundary(ofContentType contentType: String) throws(PXError) -> String {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: " \t") }
        guard let type = parts.first, type.lowercased().hasPrefix("multipart/") else {
            throw .invalidResponse("expected a multipart/related answer, got Content-Type '\(contentType)'")
        }
        for parameter in parts.dropFirst() {
            guard let eq = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<eq].trimmingCharacters(in: " \t").lowercased() == "boundary" else { continue }
            var value = parameter[parameter.index(after: eq)...].trimmingCharacters(in: " \t")
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return value
        }
        throw .invalidResponse("multipart answer without a boundary parameter: '\(contentType)'")
    }

    /// Consumes `bytes`, reporting what they complete.
    /// - Throws: ``PXError/invalidResponse(_:)`` for malformed framing, or what `onEvent` throws.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ onEvent: (Event) throws -> Void) throws {
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
        try process(onEvent)
    }

    /// The end of the body.
    /// - Throws: ``PXError/invalidResponse(_:)`` when the closing delimiter never came (the peer
    ///   stopped mid-part or mid-body).
    public func finish() throws(PXError) {
        guard state == .epilogue else {
            throw .invalidResponse(
                state == .content
                    ? "the multipart answer ended in the middle of a part"
                    : "the multipart answer ended without its closing delimiter")
        }
    }

    private mutating func process(_ onEvent: (Event) throws -> Void) throws {
        while true {
            let available = buffer.count - start
            switch state {
            case .epilogue:
                start = buffer.count  // RFC 2046: the epilogue is ignored
                return
            case .preamble, .content:
                if let at = find(delimiter) {
                    if state == .content, at > start { try emit(start..<at, onEvent) }
                    if state == .content { try onEvent(.partEnd) }
                    start = at + delimiter.count
                    state = .afterDelimiter
                    padding = 0
                    continue
                }
                // Keep what could be the start of a delimiter; the rest is content (or preamble).
                let keep = min(available, delimiter.count - 1)
                let end = buffer.count - keep
                if state == .content, end > start { try emit(start..<end, onEvent) }
                start = end
                return
            case .afterDelimiter:
                guard available >= 2 else { return }
                // `--` closes the body only right after the boundary: transport padding goes after it
                // (RFC 2046 §5.1.1), so whatever chunk the bytes arrive in, `--x  --` is not a close.
                if padding == 0 && buffer[start] == UInt8(ascii: "-") && buffer[start + 1] == UInt8(ascii: "-") {
                    state = .epilogue
                    continue
                }
                // Transport padding (spaces, tabs) up to CRLF.
                while start < buffer.count, buffer[start] == 0x20 || buffer[start] == 0x09 {
                    start += 1
                    padding += 1
                    guard padding <= 1024 else { throw PXError.invalidResponse("multipart delimiter line too long") }
                }
                guard buffer.count - start >= 2 else { return }
                guard buffer[start] == 0x0D, buffer[start + 1] == 0x0A else {
                    throw PXError.invalidResponse("malformed multipart delimiter line (RFC 2046 §5.1.1)")
                }
                start += 2
                state = .headers
            case .headers:
                let headerEnd: Int
                let next: Int
                if available >= 2, buffer[start] == 0x0D, buffer[start + 1] == 0x0A {
                    (headerEnd, next) = (start, start + 2)  // no header fields
                } else if let at = find(Array("\r\n\r\n".utf8)) {
                    (headerEnd, next) = (at, at + 4)
                } else {
                    // Up to three bytes of the blank line (`\r\n\r`) may already be here, so the block is
                    // known to be too long only past the limit plus three; otherwise how the bytes were cut
                    // would decide whether a block of exactly the limit passes.
                    guard available <= maximumHeaderBytes + 3 else {
                        throw PXError.invalidResponse("multipart part headers longer than \(maximumHeaderBytes) bytes")
                    }
                    return
                }
                guard headerEnd - start <= maximumHeaderBytes else {
                    throw PXError.invalidResponse("multipart part headers longer than \(maximumHeaderBytes) bytes")
                }
                let text = String(decoding: buffer[start..<headerEnd], as: UTF8.self)
                var headers: [(name: String, value: String)] = []
                for line in text.split(separator: "\r\n", omittingEmptySubsequences: true) {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers.append(
                        (
                            line[..<colon].trimmingCharacters(in: " \t").lowercased(),
                            line[line.index(after: colon)...].trimmingCharacters(in: " \t")
                        ))
                }
                start = next
                state = .content
                try onEvent(.partBegin(headers: headers))
            }
        }
    }

    private func emit(_ range: Range<Int>, _ onEvent: (Event) throws -> Void) throws {
        try buffer.withUnsafeBytes { raw in
            try onEvent(.content(UnsafeRawBufferPointer(rebasing: raw[range])))
        }
    }

    /// The index of `needle` in the unconsumed bytes.
    private func find(_ needle: [UInt8]) -> Int? {
        buffer.withUnsafeBytes { hay in
            needle.withUnsafeBytes { n in
                // memchr for the first byte, memcmp for the rest (Glibc's module does not export memmem).
                let base = hay.baseAddress!
                let first = Int32(needle[0])
                var at = start
                while hay.count - at >= n.count {
                    guard let hit = memchr(base + at, first, hay.count - at - n.count + 1) else { return nil }
                    let index = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + index, n.baseAddress!, n.count) == 0 { return index }
                    at = index + 1
                }
                return nil
            }
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing characters of `set`.
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s.removeFirst() }
        while let l = s.last, set.contains(l) { s.removeLast() }
        return String(s)
    }
}
