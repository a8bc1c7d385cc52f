import Foundation
import Testing

@testable import DICOMData

/// Broken files give a ``DICOMDataError`` with the right code and, where there is one, the offset of
/// the problem: never a crash, a hang or an allocation the size of a hostile length.
@Suite("Bad input", .timeLimit(.minutes(10)))
struct BadInputTests {
    /// Preamble, DICM and a meta group with only a Transfer Syntax UID.
    static func metaOnly(_ ts: TransferSyntax) throws -> [UInt8] {
        var uid = Array(ts.uid.utf8)
        if uid.count & 1 == 1 { uid.append(0) }
        var group = explicit(0x0002, 0x0010, "UI", uid)
        group = explicit(0x0002, 0x0000, "UL", le32(UInt32(group.count))) + group
        return [UInt8](repeating: 0, count: 128) + Array("DICM".utf8) + group
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { le16(UInt16(v & 0xFFFF)) + le16(UInt16(v >> 16)) }

    /// An explicit VR little-endian element with a short or long length field, as the VR requires.
    static func explicit(_ group: UInt16, _ element: UInt16, _ vr: String, _ value: [UInt8], length: UInt32? = nil)
        -> [UInt8]
    {
        var out = le16(group) + le16(element) + Array(vr.utf8)
        let n = length ?? UInt32(value.count)
        if ["OB", "OW", "SQ", "UN", "UT", "UC", "UR", "OF", "OD", "OL", "OV", "SV", "UV"].contains(vr) {
            out += [0, 0] + le32(n)
        } else {
            out += le16(UInt16(truncatingIfNeeded: n))
        }
        return out + value
    }

    static let item: [UInt8] = le16(0xFFFE) + le16(0xE000) + le32(0xFFFF_FFFF)

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var code: DICOMDataError.Code
        /// The offset the error must name, relative to the start of the body (nil: no offset checked).
        var bodyOffset: Int?
        var transferSyntax: TransferSyntax = .explicitVRLittleEndian
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "empty file", bytes: [], code: .notDICOM, bodyOffset: nil),
        Case(
            name: "text file", bytes: Array("root:x:0:0:root:/root:/bin/bash\n".utf8), code: .notDICOM, bodyOffset: nil),
        Case(
            name: "preamble and DICM only", bytes: [UInt8](repeating: 0, count: 128) + Array("DICM".utf8),
            code: .missingTransferSyntax, bodyOffset: nil),
        Case(
            name: "element header cut short", bytes: explicit(0x0008, 0x0016, "UI", []).prefix(5).map { $0 },
            code: .truncated, bodyOffset: 0),
        Case(
            name: "length past the end", bytes: explicit(0x0010, 0x0010, "PN", Array("Doe^".utf8), length: 0x100),
            code: .lengthPastEnd, bodyOffset: 0),
        Case(
            name: "huge OB length",
            bytes: explicit(0x0010, 0x0010, "LO", Array("ab".utf8))
                + explicit(0x7FE0, 0x0010, "OB", [1, 2], length: 0xFFFF_FFF0),
            code: .lengthPastEnd, bodyOffset: 10),
        Case(
            name: "invalid VR", bytes: explicit(0x0010, 0x0010, "ZZ", Array("ab".utf8)),
            code: .invalidVR, bodyOffset: 4),
        Case(
            name: "undefined length on LO",
            bytes: le16(0x0010) + le16(0x0020) + Array("UT".utf8) + [0, 0] + le32(0xFFFF_FFFF),
            code: .invalidLength, bodyOffset: 0),
        Case(name: "stray item at top level", bytes: item, code: .unexpectedTag, bodyOffset: 0),
        Case(
            name: "item without delimiter at end of file",
            bytes: explicit(0x0008, 0x1140, "SQ", [], length: 0xFFFF_FFFF) + item
                + explicit(0x0008, 0x1150, "UI", Array("1.2".utf8) + [0]),
            code: .truncated, bodyOffset: nil),
        Case(
            name: "sequence nested 200 deep",
            bytes: (0..<200).flatMap { _ in explicit(0x0008, 0x1140, "SQ", [], length: 0xFFFF_FFFF) + item },
            code: .nestingTooDeep, bodyOffset: nil),
        Case(
            name: "deflated garbage", bytes: [0xFF, 0xFF, 0xFF, 0xFF, 0x12, 0x34, 0x56, 0x78, 0x9A],
            code: .inflateFailed, bodyOffset: nil, transferSyntax: .deflatedExplicitVRLittleEndian),
        Case(
            name: "item length past its sequence",
            bytes: explicit(0x0008, 0x1140, "SQ", le16(0xFFFE) + le16(0xE000) + le32(0x1000), length: 8),
            code: .lengthPastEnd, bodyOffset: 12),
    ]

    @Test("each broken file gives its error", arguments: cases)
    func brokenFile(_ c: Case) throws {
        let bytes: [UInt8]
        if ["empty file", "text file", "preamble and DICM only"].contains(c.name) {
            bytes = c.bytes
        } else {
            bytes = (try Self.metaOnly(c.transferSyntax)) + c.bytes
        }
        let start = (try Self.metaOnly(c.transferSyntax)).count
        do {
            _ = try Part10File(bytes: bytes)
            Issue.record("\(c.name): read without error")
        } catch {
            #expect(error.code == c.code, "\(c.name): \(error)")
            if let offset = c.bodyOffset {
                #expect(error.offset == start + offset, "\(c.name): \(error)")
            }
            #expect(!error.description.isEmpty)
        }
    }

    @Test("every prefix of a real file reads or fails cleanly", .tags(.integration), .integrationTier)
    func everyPrefix() async throws {
        let files = try await Corpus.synthetic().filter { $0.lastPathComponent.hasPrefix("nested-seq") }
        #expect(!files.isEmpty)
        for url in files {
            let bytes = [UInt8](try Data(contentsOf: url))
            await Task.yield()
            var failures = 0
            for length in stride(from: 0, to: bytes.count, by: 1) {
                do { _ = try Part10File(bytes: Array(bytes[0..<length])) } catch { failures += 1 }
            }
            // Almost every prefix is incomplete; the few that end between elements read fine.
            #expect(failures > bytes.count / 2, "\(url.lastPathComponent)")
        }
    }

    @Test("random byte corruption never crashes", .tags(.integration), .integrationTier)
    func randomCorruption() async throws {
        var generator = SplitMix64(seed: 0x5EED)
        for url in try await Corpus.synthetic().prefix(20) {
            let original = [UInt8](try Data(contentsOf: url))
            await Task.yield()  // CPU-bound: let the network tests' tasks run between files.
            for _ in 0..<100 {
                var bytes = original
                for _ in 0..<4 {
                    let i = Int(generator.next() % UInt64(bytes.count))
                    bytes[i] = UInt8(truncatingIfNeeded: generator.next())
                }
                if let file = try? Part10File(bytes: bytes) {
                    _ = file.dataSet.dicomJSON().serialized()
                    _ = file.dataSet.pypxJSON().serialized()
                    _ = file.dataSet.textDump()
                }
            }
        }
    }
}

/// A small deterministic random number generator for the corruption test.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
