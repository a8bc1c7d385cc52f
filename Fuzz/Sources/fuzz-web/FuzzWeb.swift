import DICOMData
import DICOMWeb
import FuzzSupport
import PXCore

// Input: the first byte picks the reader, the second the chunk sizes; the rest is what a DICOMweb server
// sends. For the multipart parser (RFC 2046 §5.1, a WADO-RS answer) the input's first line is the boundary
// and the rest the body; for the QIDO-RS reader (PS3.18 §F.2) the rest is the answer, a JSON array.
//
// Invariants:
// - both readers are total: events or a PXError, never a crash, whatever the bytes;
// - how the bytes are split into chunks does not change what comes out (parts with their headers and
//   content, objects, or the error), as a server's TCP segments do not;
// - the multipart parser never holds more than a delimiter and one chunk (each content piece is at most
//   the chunk plus the delimiter), and part headers stay within their limit;
// - the QIDO-RS reader agrees with the JSON parser: an array of objects the parser reads is read as the
//   same objects, and objects the reader delimits that each parse make an array the parser reads whole.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWeb(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard input.count >= 2 else { return 0 }
    var choices = FuzzChoices(input[1..<2])
    let chunk = 1 + Int(choices.next()) * 7
    let body = Array(input[2...])
    if input[0] & 1 == 0 {
        multipart(body, chunk: chunk)
    } else {
        jsonArray(body, chunk: chunk)
    }
    return 0
}

/// One part as the parser reported it.
struct Part: Equatable {
    var headers: [String]
    var content: [UInt8]
}

/// What the parser made of `body` fed in pieces of `chunk` bytes (0: whole).
func parse(_ body: [UInt8], boundary: String, chunk: Int) -> (parts: [Part], complete: Bool, error: String?) {
    var parts: [Part] = []
    do {
        var parser = try MultipartParser(boundary: boundary, maximumHeaderBytes: 512)
        let step = chunk == 0 ? max(body.count, 1) : chunk
        var start = 0
        while start < body.count {
            let end = min(body.count, start + step)
            try body[start..<end].withUnsafeBytes { raw in
                try parser.feed(raw) { event in
                    switch event {
                    case .partBegin(let headers):
                        fuzzCheck(
                            // Bytes that are not UTF-8 read as U+FFFD, three bytes each.
                            headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count } <= 3 * 512,
                            "part headers beyond their limit")
                        parts.append(Part(headers: headers.map { $0.name + ":" + $0.value }, content: []))
                    case .content(let bytes):
                        fuzzCheck(!parts.isEmpty, "content before any part")
                        fuzzCheck(
                            bytes.count <= (end - start) + boundary.utf8.count + 4,
                            "a content piece larger than a chunk and a delimiter")
                        parts[parts.count - 1].content += bytes
                    case .partEnd:
                        fuzzCheck(!parts.isEmpty, "a part ends before any began")
                    }
                }
            }
            start = end
        }
        try parser.finish()
        return (parts, parser.isComplete, nil)
    } catch {
        return (parts, false, "\(error)")
    }
}

func multipart(_ input: [UInt8], chunk: Int) {
    let line = input.prefix { $0 != 0x0A }
    guard line.count < input.count else { return }
    let boundary = String(decoding: line, as: UTF8.self)
    let body = Array(input[(line.count + 1)...])
    let whole = parse(body, boundary: boundary, chunk: 0)
    let pieces = parse(body, boundary: boundary, chunk: chunk)
    // An error can come at a different point of a part (more of its content seen first), so compare the
    // parts only when both succeeded, and the outcome always.
    fuzzCheck(
        (whole.error == nil) == (pieces.error == nil),
        "chunking changes the outcome: \(whole.error ?? "ok") / \(pieces.error ?? "ok")")
    if whole.error == nil {
        fuzzCheck(whole.parts == pieces.parts, "chunking changes the parts")
        fuzzCheck(whole.complete == pieces.complete, "chunking changes completeness")
    }
}

/// The objects the reader delimited in `body` fed in pieces of `chunk` bytes (0: whole), or its error.
func read(_ body: [UInt8], chunk: Int) -> Result<[[UInt8]], PXError> {
    var reader = JSONArrayReader(maximumObjectBytes: 16 * 1024)
    var objects: [[UInt8]] = []
    do {
        let step = chunk == 0 ? max(body.count, 1) : chunk
        var start = 0
        while start < body.count {
            let end = min(body.count, start + step)
            try body[start..<end].withUnsafeBytes { raw in
                try reader.feed(raw) { object in
                    fuzzCheck(object.count <= 16 * 1024, "an object beyond the limit")
                    objects.append(object)
                }
            }
            start = end
        }
        try reader.finish()
        fuzzCheck(reader.count == objects.count, "count is not the objects handed out")
        return .success(objects)
    } catch let error as PXError {
        return .failure(error)
    } catch {
        fuzzCheck(false, "an error that is not a PXError: \(error)")
        return .success([])
    }
}

func jsonArray(_ body: [UInt8], chunk: Int) {
    let whole = read(body, chunk: 0)
    let pieces = read(body, chunk: chunk)
    switch (whole, pieces) {
    case (.success(let a), .success(let b)): fuzzCheck(a == b, "chunking changes the objects")
    case (.failure, .failure): break
    default: fuzzCheck(false, "chunking changes the outcome")
    }
    let parsed = try? JSONParser.parse(body, maximumDepth: 257)
    // Below the reader's object limit whatever the array holds.
    if body.count <= 16 * 1024, let elements = parsed?.arrayValue, elements.allSatisfy({ $0.objectValue != nil }) {
        guard case .success(let objects) = whole else {
            fuzzCheck(false, "an array of objects the JSON parser reads is refused")
            return
        }
        let values = objects.compactMap { try? JSONParser.parse($0) }
        fuzzCheck(values == elements, "the reader's objects are not the parser's")
    }
    if case .success(let objects) = whole, !objects.isEmpty {
        let values = objects.compactMap { try? JSONParser.parse($0) }
        if values.count == objects.count {
            fuzzCheck(parsed?.arrayValue == values, "objects that parse make an array the parser does not read alike")
        }
    }
}
