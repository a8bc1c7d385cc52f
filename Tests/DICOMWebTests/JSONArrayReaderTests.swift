import DICOMData
import DICOMWeb
import PXCore
import Testing

/// The streaming reader of QIDO-RS answers (a JSON array of objects, PS3.18 §F.2), fed in chunks cut at
/// every size: the objects come out whole and in order whatever the cut, strings that hold brackets and
/// escapes do not confuse it, and a broken or oversized answer is an error.
@Suite("JSONArrayReader", .timeLimit(.minutes(2)))
struct JSONArrayReaderTests {
    /// Feeds `text` in chunks of `size` bytes; the objects as text.
    static func read(_ text: String, chunk size: Int, limit: Int = 1 << 20) throws -> [String] {
        var reader = JSONArrayReader(maximumObjectBytes: limit)
        var objects: [String] = []
        let bytes = Array(text.utf8)
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size)
            try bytes[start..<end].withUnsafeBytes { raw in
                try reader.feed(raw) { objects.append(String(decoding: $0, as: UTF8.self)) }
            }
            start = end
        }
        try reader.finish()
        #expect(reader.count == objects.count)
        return objects
    }

    static let tricky = [
        #"{"0020000D": {"vr": "UI", "Value": ["1.2.3"]}}"#,
        #"{"00081030": {"vr": "LO", "Value": ["a\"]}\\{[", "}"]}, "x": [[{}], []]}"#,
        #"{}"#,
    ]

    @Test("objects come out whole whatever the chunk size")
    func chunked() throws {
        let text = " \r\n[" + Self.tricky.joined(separator: " ,\n\t") + "]\n"
        for size in 1...text.utf8.count {
            #expect(try Self.read(text, chunk: size) == Self.tricky, "chunk \(size)")
        }
        for object in try Self.read(text, chunk: 7) {
            #expect(throws: Never.self) { try JSONParser.parse(object) }
        }
    }

    @Test("an empty answer and an empty array have no objects")
    func empty() throws {
        #expect(try Self.read("", chunk: 4).isEmpty)
        #expect(try Self.read("  [ ]  ", chunk: 1).isEmpty)
    }

    @Test("not an array, a value that is not an object, a cut answer, data after it, an oversized object: errors")
    func broken() {
        for text in [
            #"{"a": 1}"#, "[1]", #"["a"]"#, "[{}, ]", "[{} {}]", #"[{"a": "]"#, "[{}", "[{}] x", "[{}],[{}]",
        ] {
            #expect(throws: PXError.self, "\(text)") { try Self.read(text, chunk: 3) }
        }
        let big = "[{\"a\": \"" + String(repeating: "x", count: 5000) + "\"}]"
        #expect(throws: PXError.self) { try Self.read(big, chunk: 512, limit: 4096) }
        #expect((try? Self.read(big, chunk: 512, limit: 8192))?.count == 1)
    }
}
