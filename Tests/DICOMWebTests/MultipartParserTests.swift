import DICOMData
import DICOMWeb
import PXCore
import Testing

/// The streaming multipart parser (RFC 2046 §5.1) on bodies cut into chunks at every position: the
/// parts come out whole and in order whatever the cut, truncation is an error, and nothing but a
/// delimiter's worth of bytes is held back.
@Suite("MultipartParser", .timeLimit(.minutes(2)))
struct MultipartParserTests {
    struct Part: Equatable {
        var headers: [String]
        var content: [UInt8]
    }

    static func body(_ parts: [[UInt8]], boundary: String, preamble: String = "", padding: String = "") -> [UInt8] {
        var out = Array(preamble.utf8)
        for (i, part) in parts.enumerated() {
            out += Array(
                "\(i == 0 && preamble.isEmpty ? "" : "\r\n")--\(boundary)\(padding)\r\nContent-Type: application/dicom\r\n\r\n"
                    .utf8)
            out += part
        }
        out += Array("\r\n--\(boundary)--\r\nepilogue".utf8)
        return out
    }

    /// Feeds `bytes` in chunks of `size` and collects the parts.
    static func parse(_ bytes: [UInt8], boundary: String, chunk size: Int) throws -> (parts: [Part], held: Int) {
        var parser = try MultipartParser(boundary: boundary)
        var parts: [Part] = []
        var maximumPending = 0
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            var delivered = 0
            try bytes[offset..<end].withUnsafeBytes { raw in
                try parser.feed(raw) { event in
                    switch event {
                    case .partBegin(let headers):
                        parts.append(Part(headers: headers.map { "\($0.name): \($0.value)" }, content: []))
                    case .content(let piece):
                        parts[parts.count - 1].content += piece
                        delivered += piece.count
                    case .partEnd: break
                    }
                }
            }
            maximumPending = max(maximumPending, (end - offset) - delivered)
            offset = end
        }
        try parser.finish()
        return (parts, maximumPending)
    }

    @Test("two parts (one containing CRLF--, a near-boundary) split at every chunk size come out identical")
    func everySplit() throws {
        let boundary = "px-boundary-1234"
        let first = Array("DICM\r\n--px-boundary-123 not the boundary\r\n--".utf8) + (0..<300).map { UInt8($0 & 0xFF) }
        let second: [UInt8] = Array("second part\r\n".utf8)
        for (preamble, padding) in [("", ""), ("preamble text", "  \t")] {
            let bytes = Self.body([first, second], boundary: boundary, preamble: preamble, padding: padding)
            for size in 1...bytes.count {
                let (parts, _) = try Self.parse(bytes, boundary: boundary, chunk: size)
                #expect(parts.count == 2, "chunk \(size)")
                #expect(parts.first?.content == first, "chunk \(size)")
                #expect(parts.last?.content == second, "chunk \(size)")
                #expect(parts.first?.headers == ["content-type: application/dicom"])
            }
        }
    }

    @Test("a large part is passed on as it arrives: at most a delimiter's length is held back per chunk")
    func boundedBuffering() throws {
        let boundary = "b"
        let big = [UInt8](repeating: 0x41, count: 1 << 20)
        let bytes = Self.body([big], boundary: boundary)
        let (parts, held) = try Self.parse(bytes, boundary: boundary, chunk: 64 * 1024)
        #expect(parts.first?.content.count == big.count)
        #expect(held <= 64, "held back \(held) bytes of a chunk")
    }

    /// Found by fuzz-web: fed a byte at a time, `--x` then padding then `--` read as the closing delimiter,
    /// while whole it is a malformed delimiter line.
    @Test("`--` after transport padding is not a closing delimiter, whatever the chunk size")
    func dashesAfterPadding() {
        let body = Array("--x    --   \u{0}\u{0} ".utf8)
        for size in 1...body.count {
            #expect(throws: PXError.self, "chunk \(size)") { try Self.parse(body, boundary: "x", chunk: size) }
        }
    }

    @Test("a body that stops in the middle of a part, or before the closing delimiter, is an error")
    func truncated() throws {
        let boundary = "xyz"
        let bytes = Self.body([Array("0123456789".utf8)], boundary: boundary)
        let closing = bytes.count - Array("--\r\nepilogue".utf8).count
        for cut in [20, 45, closing - 3, closing] {
            #expect(throws: PXError.self, "cut at \(cut)") {
                _ = try Self.parse(Array(bytes[..<cut]), boundary: boundary, chunk: 7)
            }
        }
    }

    @Test("part headers beyond the limit are refused")
    func headerLimit() throws {
        var parser = try MultipartParser(boundary: "b", maximumHeaderBytes: 100)
        let bytes = Array("--b\r\nX-Long: \(String(repeating: "a", count: 200))".utf8)
        #expect(throws: PXError.self) {
            try bytes.withUnsafeBytes { raw in try parser.feed(raw) { _ in } }
        }
    }

    /// fuzz-web: a header block of exactly the limit passed when the body came whole and was refused
    /// when it came a byte at a time, because the bytes of the blank line after it counted against the limit.
    @Test("a header block of exactly the limit passes however the body is cut; one byte more fails")
    func headerLimitWhateverTheCut() throws {
        for length in [100, 101] {
            let field = "X-Long: " + String(repeating: "a", count: length - 8)
            let bytes = Array("--b\r\n\(field)\r\n\r\ncontent\r\n--b--\r\n".utf8)
            for chunk in [1, 2, 3, 5, bytes.count] {
                var parser = try MultipartParser(boundary: "b", maximumHeaderBytes: 100)
                var headers: [(name: String, value: String)] = []
                let outcome = Result {
                    for start in stride(from: 0, to: bytes.count, by: chunk) {
                        try bytes[start..<min(bytes.count, start + chunk)].withUnsafeBytes { raw in
                            try parser.feed(raw) { event in
                                if case .partBegin(let fields) = event { headers = fields }
                            }
                        }
                    }
                    try parser.finish()
                }
                if length == 100 {
                    #expect(throws: Never.self, "chunk \(chunk)") { try outcome.get() }
                    #expect(headers.first?.value.count == length - 8, "chunk \(chunk)")
                } else {
                    #expect(throws: PXError.self, "chunk \(chunk)") { try outcome.get() }
                }
            }
        }
    }

    @Test("boundary from Content-Type, quoted or not; a non-multipart type is an error")
    func boundaryParameter() throws {
        #expect(
            try MultipartParser.boundary(ofContentType: "multipart/related; type=\"application/dicom\"; boundary=abc")
                == "abc")
        #expect(
            try MultipartParser.boundary(ofContentType: "Multipart/Related;boundary=\"a b\";type=application/dicom")
                == "a b")
        #expect(throws: PXError.self) { try MultipartParser.boundary(ofContentType: "application/dicom+json") }
        #expect(throws: PXError.self) {
            try MultipartParser.boundary(ofContentType: "multipart/related; type=\"application/dicom\"")
        }
    }
}

/// QIDO-RS requests built from C-FIND identifiers (PS3.18 §10.6.1.2).
@Suite("QIDO-RS query", .timeLimit(.minutes(1)))
struct QIDOQueryTests {
    @Test("matching keys become parameters, return keys includefield, single UIDs go into the path")
    func query() throws {
        var ids = DataSet()
        ids.set(.patientName, vr: .PN, string: "Doe*")
        ids.set(.studyDate, vr: .DA, string: "20200101-20201231")
        ids.set(.studyInstanceUID, vr: .UI, string: "1.2.3")
        ids.set(.seriesInstanceUID, vr: .UI, strings: ["1.2.3.4", "1.2.3.5"])
        ids.set(.modality, vr: .CS, string: "")
        let target = try DICOMWebClient.searchTarget(FindRequest(level: .image, identifier: ids))
        #expect(target.path == "/studies/1.2.3/instances")
        let query = target.query.map { "\($0.0)=\($0.1)" }
        #expect(query.contains("00100010=Doe*"))
        #expect(query.contains("00080020=20200101-20201231"))
        #expect(query.contains("0020000E=1.2.3.4,1.2.3.5"))
        #expect(query.contains("includefield=00080060"))
        #expect(!query.contains { $0.hasPrefix("0020000D") })
        #expect(throws: PXError.self) {
            try DICOMWebClient.searchTarget(FindRequest(level: .patient, model: .patientRoot, identifier: ids))
        }
    }

    @Test("URLs: http(s) only, no credentials in them, port from the scheme")
    func places() throws {
        let place = try DICOMWebPlace(url: "https://pacs.example/dicom-web/")
        #expect(place.baseURL == "https://pacs.example/dicom-web")
        #expect(place.port == 443)
        #expect(try DICOMWebPlace(url: "http://127.0.0.1:8042/dicom-web").port == 8042)
        #expect(throws: PXError.self) { try DICOMWebPlace(url: "https://user:secret@pacs.example/dicom-web") }
        #expect(throws: PXError.self) { try DICOMWebPlace(url: "ftp://pacs.example/") }
        #expect(throws: PXError.self) { try DICOMWebPlace(url: "http://:80/x") }
    }
}
