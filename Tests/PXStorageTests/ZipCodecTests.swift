import CZlib
import DICOMData
import Foundation
import PXStorage
import PXTestSupport
import Testing

/// ``ZipWriter`` and ``ZipReader`` on real files: round trips (stored, deflate, empty, many entries),
/// Debian's `unzip -t` on our archives, our reader on Info-ZIP's `zip` output, and hand-built hostile
/// archives, each refused with its named ``ZipError/Code``.
@Suite(.tags(.integration), .integrationTier, .timeLimit(.minutes(2)), .requires("unzip", "zip")) struct ZipCodecTests {
    static func bytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var state = seed | 1
        return (0..<count).map { _ in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
    }

    /// Writes `contents` as files and archives them; returns the archive's path.
    static func archive(_ contents: [(String, [UInt8], ZipMethod)], in directory: String) throws -> String {
        let path = directory + "/a.zip"
        let writer = try ZipWriter(path: path)
        for (index, (name, data, method)) in contents.enumerated() {
            let source = directory + "/src-\(index)"
            try Data(data).write(to: URL(fileURLWithPath: source))
            try writer.addFile(at: source, as: name, method: method)
        }
        try writer.finish(fsync: false)
        return path
    }

    @Test func roundTripStoredAndDeflatedAndEmpty() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let random = Self.bytes(3_000_000, seed: 7)
            let text = Array(String(repeating: "DICOM zip ", count: 100_000).utf8)
            let contents: [(String, [UInt8], ZipMethod)] = [
                ("1.2.3/1.2.3.4.dcm", random, .stored), ("1.2.3/1.2.3.5.dcm", text, .deflate),
                ("empty-stored", [], .stored), ("empty-deflated", [], .deflate), ("über/名前.dcm", random, .deflate),
            ]
            let path = try Self.archive(contents, in: dir)
            let reader = try ZipReader(path: path)
            #expect(reader.entries.map(\.name) == contents.map(\.0))
            for (name, data, method) in contents {
                let entry = try #require(reader.entry(named: name))
                #expect(entry.method == method)
                #expect(try reader.contents(of: entry, maximumSize: 8 << 20) == data)
            }
            #expect(try #require(reader.entry(named: "1.2.3/1.2.3.5.dcm")).compressedSize < 100_000)
            // No partial file left beside it.
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.contains("partial") }.isEmpty)
            // Info-ZIP's unzip tests every entry's CRC and sizes.
            let test = try await TestSupport.run("unzip", ["-t", path])
            #expect(test.status == 0, "\(test.output)")
            #expect(test.output.contains("No errors detected"))
            // ... and extracts the same bytes.
            let out = dir + "/out"
            let unzip = try await TestSupport.run("unzip", ["-q", path, "-d", out])
            #expect(unzip.status == 0, "\(unzip.output)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/über/名前.dcm")) == Data(random))
        }
    }

    /// An archive several times ``ZipWriter``'s writeback step, finished with its `fsync`: the ranges handed to
    /// the disk early (headers filled in behind them, after their data) change nothing of what is read back.
    @Test func archiveLargerThanTheWritebackStepReadsBack() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let path = dir + "/large.zip"
            let writer = try ZipWriter(path: path)
            var contents: [(String, [UInt8])] = []
            for index in 0..<5 {
                let data = Self.bytes(3 << 20, seed: UInt64(40 + index))
                let source = dir + "/src-\(index)"
                try Data(data).write(to: URL(fileURLWithPath: source))
                try writer.addFile(at: source, as: "s/\(index).dcm", method: index == 2 ? .deflate : .stored)
                contents.append(("s/\(index).dcm", data))
            }
            try writer.finish(fsync: true)
            let size = try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
            #expect(UInt64(size) > 3 * ZipWriter.writebackBytes)
            let reader = try ZipReader(path: path)
            for (name, data) in contents {
                let entry = try #require(reader.entry(named: name))
                #expect(try reader.contents(of: entry, maximumSize: 4 << 20) == data, "\(name)")
            }
            let test = try await TestSupport.run("unzip", ["-t", path])
            #expect(test.status == 0, "\(test.output)")
        }
    }

    @Test func readsInfoZipArchives() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let data = Self.bytes(200_000, seed: 3) + Array(repeating: 0, count: 500_000)
            try Data(data).write(to: URL(fileURLWithPath: dir + "/f.bin"))
            // -fd: data descriptors (bit 3, written by streaming zippers) are read too.
            let zip = try await TestSupport.run(
                "bash", ["-c", "cd \(dir) && zip -q -9 z.zip f.bin && cat f.bin | zip -q -fd s.zip -"])
            #expect(zip.status == 0, "\(zip.output)")
            for (archive, name) in [("z.zip", "f.bin"), ("s.zip", "-")] {
                let reader = try ZipReader(path: dir + "/" + archive)
                let entry = try #require(reader.entry(named: name))
                #expect(entry.method == .deflate)
                #expect(try reader.contents(of: entry) == data)
            }
        }
    }

    @Test func manyEntriesPastTheSixteenBitCountUseZip64() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let path = dir + "/many.zip"
            let writer = try ZipWriter(path: path)
            let count = 65_540
            for index in 0..<count {
                try writer.addData(Array("\(index)".utf8), as: "e/\(index)", method: .stored)
            }
            try writer.finish(fsync: false)
            // The end record's counts are 0xFFFF: the Zip64 end record and locator hold the real ones.
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            #expect(Array(bytes.suffix(22).prefix(4)) == [0x50, 0x4b, 0x05, 0x06])
            #expect(bytes[bytes.count - 12] == 0xFF && bytes[bytes.count - 11] == 0xFF)
            #expect(Array(bytes.suffix(42).prefix(4)) == [0x50, 0x4b, 0x06, 0x07])
            let reader = try ZipReader(path: path)
            #expect(reader.entries.count == count)
            #expect(try reader.contents(of: try #require(reader.entry(named: "e/65539"))) == Array("65539".utf8))
            let test = try await TestSupport.run("unzip", ["-tq", path])
            #expect(test.status == 0, "\(test.output)")
        }
    }

    /// Every Zip64 field and record (APPNOTE §4.5.3, §4.3.14, §4.3.15) on small entries: the local headers'
    /// sizes filled in afterwards in their Zip64 extra field, the central directory's sizes and offsets in
    /// theirs, the Zip64 end record and locator; read back by our reader and tested by `unzip -t`. (A real
    /// entry past 4 GiB costs minutes of CPU on a shared machine: a 4 GiB + 1 MiB sparse file deflated took
    /// 63 s alone and 194 s in the full suite, and slowed the suites beside it, so it is not run here.)
    @Test func zip64FieldsAndRecordsRoundTrip() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let path = dir + "/z64.zip"
            let writer = try ZipWriter(path: path, alwaysZip64: true)
            let random = Self.bytes(300_000, seed: 11)
            let text = Array(String(repeating: "zip64 ", count: 50_000).utf8)
            let source = dir + "/random"
            try Data(random).write(to: URL(fileURLWithPath: source))
            try writer.addFile(at: source, as: "a/random", method: .stored)
            try writer.addData(text, as: "a/text", method: .deflate)
            try writer.addData([], as: "empty", method: .stored)
            try writer.finish(fsync: false)
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: path)))
            // The first local header: version 4.5, sizes all ones, a 20-byte Zip64 extra field.
            #expect(bytes[4] == 45 && Array(bytes[18..<26]) == Array(repeating: 0xFF, count: 8) && bytes[28] == 20)
            #expect(Array(bytes.suffix(42).prefix(4)) == [0x50, 0x4b, 0x06, 0x07])
            let reader = try ZipReader(path: path)
            #expect(reader.entries.map(\.name) == ["a/random", "a/text", "empty"])
            #expect(try reader.contents(of: try #require(reader.entry(named: "a/random"))) == random)
            #expect(try reader.contents(of: try #require(reader.entry(named: "a/text"))) == text)
            #expect(try reader.contents(of: try #require(reader.entry(named: "empty"))) == [])
            let test = try await TestSupport.run("unzip", ["-t", path])
            #expect(test.status == 0 && test.output.contains("No errors detected"), "\(test.output)")
        }
    }

    // MARK: Hostile archives

    /// An archive assembled field by field, so each test can lie in exactly one place.
    struct RawZip {
        struct Entry {
            var name: String
            var data: [UInt8]
            var method: UInt16 = 0
            var flags: UInt16 = 0
            var crc: UInt32? = nil
            var compressedSize: UInt32? = nil
            var uncompressedSize: UInt32? = nil
            var localUncompressedSize: UInt32? = nil
            var offsetOverride: UInt32? = nil
            var centralExtra: [UInt8] = []
        }
        var entries: [Entry]
        var centralSizeDelta: Int = 0
        var entryCountOverride: UInt16? = nil

        static func crc(_ data: [UInt8]) -> UInt32 {
            UInt32(data.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) })
        }

        func bytes() -> [UInt8] {
            var out: [UInt8] = []
            var central: [UInt8] = []
            func le16(_ v: UInt16, _ a: inout [UInt8]) { a += [UInt8(v & 0xFF), UInt8(v >> 8)] }
            func le32(_ v: UInt32, _ a: inout [UInt8]) {
                for s in [0, 8, 16, 24] { a.append(UInt8((v >> UInt32(s)) & 0xFF)) }
            }
            for entry in entries {
                let offset = UInt32(out.count)
                let name = Array(entry.name.utf8)
                let crc = entry.crc ?? Self.crc(entry.method == 8 ? [] : entry.data)
                let csize = entry.compressedSize ?? UInt32(entry.data.count)
                let usize = entry.uncompressedSize ?? UInt32(entry.data.count)
                le32(0x0403_4b50, &out)
                le16(20, &out)
                le16(entry.flags, &out)
                le16(entry.method, &out)
                le16(0, &out)
                le16(0x21, &out)
                le32(crc, &out)
                le32(csize, &out)
                le32(entry.localUncompressedSize ?? usize, &out)
                le16(UInt16(name.count), &out)
                le16(0, &out)
                out += name
                out += entry.data
                le32(0x0201_4b50, &central)
                le16(0x031E, &central)
                le16(20, &central)
                le16(entry.flags, &central)
                le16(entry.method, &central)
                le16(0, &central)
                le16(0x21, &central)
                le32(crc, &central)
                le32(csize, &central)
                le32(usize, &central)
                le16(UInt16(name.count), &central)
                le16(UInt16(entry.centralExtra.count), &central)
                le16(0, &central)
                le16(0, &central)
                le16(0, &central)
                le32(0, &central)
                le32(entry.offsetOverride ?? offset, &central)
                central += name
                central += entry.centralExtra
            }
            let centralOffset = UInt32(out.count)
            out += central
            le32(0x0605_4b50, &out)
            le16(0, &out)
            le16(0, &out)
            le16(entryCountOverride ?? UInt16(entries.count), &out)
            le16(entryCountOverride ?? UInt16(entries.count), &out)
            le32(UInt32(Int(central.count) + centralSizeDelta), &out)
            le32(centralOffset, &out)
            le16(0, &out)
            return out
        }
    }

    static func deflated(_ data: [UInt8]) -> [UInt8] {
        var stream = z_stream()
        deflateInit2_(
            &stream, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        defer { deflateEnd(&stream) }
        var input = data
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(data.count))) + 64)
        let produced = input.withUnsafeMutableBufferPointer { inp in
            output.withUnsafeMutableBufferPointer { outp in
                stream.next_in = inp.baseAddress
                stream.avail_in = uInt(inp.count)
                stream.next_out = outp.baseAddress
                stream.avail_out = uInt(outp.count)
                _ = deflate(&stream, Z_FINISH)
                return outp.count - Int(stream.avail_out)
            }
        }
        return Array(output.prefix(produced))
    }

    /// Writes `raw` and returns the code opening it, or reading every entry, fails with.
    static func failure(_ raw: [UInt8], limits: ZipLimits = ZipLimits()) throws -> ZipError.Code? {
        let path = NSTemporaryDirectory() + "px-zip-hostile-" + UUID().uuidString + ".zip"
        try Data(raw).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        do {
            let reader = try ZipReader(path: path, limits: limits)
            for entry in reader.entries { try reader.read(entry) { _ in } }
            return nil
        } catch {
            return error.code
        }
    }

    @Test func aWellFormedHandBuiltArchiveReads() throws {
        let text = Array(String(repeating: "abc", count: 1000).utf8)
        var deflated = RawZip.Entry(name: "d", data: Self.deflated(text), method: 8)
        deflated.crc = RawZip.crc(text)
        deflated.uncompressedSize = UInt32(text.count)
        #expect(try Self.failure(RawZip(entries: [.init(name: "a/b.dcm", data: [1, 2, 3]), deflated]).bytes()) == nil)
    }

    @Test(arguments: [
        "../evil.dcm", "a/../../evil", "/etc/passwd", "a\\..\\b", "C:/x", "a//b", "./a", "a/./b", "nul\u{0}x",
        "tab\tname", "",
    ])
    func unsafeNamesAreRefused(name: String) throws {
        #expect(try Self.failure(RawZip(entries: [.init(name: name, data: [1])]).bytes()) == .unsafeName)
    }

    @Test func invalidUTF8NameIsRefused() throws {
        var raw = RawZip(entries: [.init(name: "ab", data: [1])]).bytes()
        // The name in the central directory: 46 bytes after its header.
        let central = raw.count - 22 - 48
        raw[central + 46] = 0xFF
        #expect(try Self.failure(raw) == .unsafeName)
    }

    @Test func overlappingEntriesAreRefused() throws {
        // Two central entries pointing at the same local header (the overlapping-files bomb).
        var raw = RawZip(entries: [
            .init(name: "a", data: Array(repeating: 7, count: 100)), .init(name: "b", data: [1]),
        ])
        raw.entries[1].offsetOverride = 0
        #expect(try Self.failure(raw.bytes()) == .overlapping)
        // An entry whose data runs into the central directory.
        var long = RawZip(entries: [.init(name: "a", data: [1, 2, 3])])
        long.entries[0].compressedSize = 40
        long.entries[0].uncompressedSize = 40
        #expect(try Self.failure(long.bytes()) == .overlapping)
    }

    @Test func lyingSizesAreRefused() throws {
        let text = Array(String(repeating: "xyz", count: 10_000).utf8)
        // Deflate data that inflates past the declared uncompressed size.
        var small = RawZip.Entry(name: "d", data: Self.deflated(text), method: 8)
        small.crc = RawZip.crc(text)
        small.uncompressedSize = 100
        #expect(try Self.failure(RawZip(entries: [small]).bytes()) == .sizeMismatch)
        // Declared larger than it inflates to.
        var large = small
        large.uncompressedSize = UInt32(text.count + 10)
        #expect(try Self.failure(RawZip(entries: [large]).bytes()) == .sizeMismatch)
        // A local header that disagrees with the central directory.
        var local = RawZip.Entry(name: "s", data: [1, 2, 3, 4])
        local.localUncompressedSize = 3
        #expect(try Self.failure(RawZip(entries: [local]).bytes()) == .sizeMismatch)
        // Stored with two sizes.
        var stored = RawZip.Entry(name: "s", data: [1, 2, 3, 4])
        stored.uncompressedSize = 5
        #expect(try Self.failure(RawZip(entries: [stored]).bytes()) == .sizeMismatch)
    }

    @Test func badCRCIsRefused() throws {
        var entry = RawZip.Entry(name: "a", data: [1, 2, 3])
        entry.crc = 0xDEAD_BEEF
        #expect(try Self.failure(RawZip(entries: [entry]).bytes()) == .checksum)
        var corrupt = RawZip.Entry(name: "d", data: [0xFF, 0xFF, 0xFF, 0xFF], method: 8)
        corrupt.uncompressedSize = 10
        #expect(try Self.failure(RawZip(entries: [corrupt]).bytes()) == .checksum)
    }

    @Test func bombsAreRefusedFromTheirDeclaredSizes() throws {
        let zeros = [UInt8](repeating: 0, count: 20 << 20)
        var bomb = RawZip.Entry(name: "bomb", data: Self.deflated(zeros), method: 8)
        bomb.crc = RawZip.crc(zeros)
        bomb.uncompressedSize = UInt32(zeros.count)
        // 20 MiB from ~20 KiB: past the ratio once past the 16 MiB floor.
        #expect(try Self.failure(RawZip(entries: [bomb]).bytes()) == .tooLarge)
        // The absolute limits: one entry, and the total.
        let plain = RawZip(entries: [
            .init(name: "a", data: Array(repeating: 1, count: 1000)),
            .init(name: "b", data: Array(repeating: 2, count: 1000)),
        ]).bytes()
        #expect(try Self.failure(plain, limits: ZipLimits(maximumEntrySize: 999)) == .tooLarge)
        #expect(try Self.failure(plain, limits: ZipLimits(maximumTotalSize: 1999)) == .tooLarge)
        #expect(try Self.failure(plain, limits: ZipLimits(maximumEntries: 1)) == .tooLarge)
        #expect(try Self.failure(plain) == nil)
    }

    @Test func encryptedEntriesAreRefused() throws {
        var entry = RawZip.Entry(name: "secret", data: Array(repeating: 9, count: 24))
        entry.flags = 1
        #expect(try Self.failure(RawZip(entries: [entry]).bytes()) == .encrypted)
        entry.flags = 1 << 6
        #expect(try Self.failure(RawZip(entries: [entry]).bytes()) == .encrypted)
    }

    @Test func unsupportedMethodsAndDuplicatesAreRefused() throws {
        #expect(try Self.failure(RawZip(entries: [.init(name: "a", data: [1], method: 12)]).bytes()) == .unsupported)
        #expect(
            try Self.failure(RawZip(entries: [.init(name: "a", data: [1]), .init(name: "a", data: [2])]).bytes())
                == .duplicateName)
    }

    @Test func truncatedAndOversizedDirectoriesAreRefused() throws {
        let raw = RawZip(entries: [.init(name: "a/b", data: Array(repeating: 5, count: 500))]).bytes()
        // Every cut of the archive is refused, none crashes or reads past the end.
        for length in stride(from: 0, to: raw.count, by: 7) {
            #expect(try Self.failure(Array(raw.prefix(length))) != nil, "cut at \(length)")
        }
        #expect(try Self.failure(Array(raw.prefix(raw.count - 1))) == .truncated)
        // A central directory that claims more bytes than lie before its end record.
        var big = RawZip(entries: [.init(name: "a", data: [1])])
        big.centralSizeDelta = 1000
        #expect(try Self.failure(big.bytes()) == .truncated)
        // More entries than the central directory can hold.
        var many = RawZip(entries: [.init(name: "a", data: [1])])
        many.entryCountOverride = 50
        #expect(try Self.failure(many.bytes()) == .malformed)
        #expect(try Self.failure(Array("not a zip at all, just text".utf8)) == .truncated)
    }

    @Test func zip64RecordsAreParsedFromHandBuiltArchive() throws {
        // Sizes and offset in the central directory set to all ones, the real values in a Zip64 extra
        // field (APPNOTE §4.5.3), in the order uncompressed, compressed, offset.
        var entry = RawZip.Entry(name: "z", data: [1, 2, 3])
        var extra: [UInt8] = [0x01, 0x00, 24, 0]
        for value: UInt64 in [3, 3, 0] {
            for s in stride(from: 0, to: 64, by: 8) { extra.append(UInt8((value >> UInt64(s)) & 0xFF)) }
        }
        entry.centralExtra = extra
        var raw = RawZip(entries: [entry]).bytes()
        // Patch the central sizes and offset to 0xFFFFFFFF.
        let central = raw.count - 22 - (46 + 1 + extra.count)
        for field in [20, 24, 42] { for i in 0..<4 { raw[central + field + i] = 0xFF } }
        let path = NSTemporaryDirectory() + "px-zip64-" + UUID().uuidString + ".zip"
        try Data(raw).write(to: URL(fileURLWithPath: path))
        defer { unlink(path) }
        let reader = try ZipReader(path: path)
        let z = try #require(reader.entry(named: "z"))
        #expect(z.uncompressedSize == 3 && z.compressedSize == 3)
        #expect(try reader.contents(of: z) == [1, 2, 3])
        // Without the extra field the all-ones values are refused.
        raw.removeSubrange((central + 47)..<(central + 47 + extra.count))
        raw[central + 30] = 0
        let endStart = raw.count - 22
        let cdSize = 47
        raw[endStart + 12] = UInt8(cdSize)
        raw[endStart + 13] = 0
        #expect(try Self.failure(raw) == .malformed)
    }

    /// Found by fuzz-zip: a Zip64 end record whose size field is near 2^64 overflowed the check that it
    /// ends at the locator (a trap, not an error).
    @Test func fuzzFoundZip64RecordSizeOverflowIsRefused() throws {
        let input = try #require(
            Data(
                base64Encoded:
                    "UEsDBC0AAAAAAAAAIQBqujfPBQAAAAUAAAABAAAAenppcDY0UEsBAi0DLQAAAAAAAAAhAGq6N8///////////wEAHAAAAAAAAAAAAAAA/////3oBABgABQAAAAAAAAAFAAAAAAAAAAAAAAAAAAAAUEsGBv////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////////8sAAAAAAAAAC0WFhYWFhYWFhYWFhYWFhYWFvcWFhYWFhYWFhYWFhYWFhYWFhYWFhYWACQAAAAAEAAAUEsGBwAAAABvAAAAAAAAAAEAAABQSwUGAAAAAP///////////////wAA"
            ))
        #expect(try Self.failure(Array(input)) == .malformed)
    }

    @Test func writerRefusesUnsafeAndDuplicateNames() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let writer = try ZipWriter(path: dir + "/w.zip")
            #expect(throws: ZipError.self) { try writer.addData([1], as: "../x", method: .stored) }
            try writer.addData([1], as: "x", method: .stored)
            #expect(throws: ZipError.self) { try writer.addData([1], as: "x", method: .stored) }
            writer.abandon()
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        }
    }

    /// Image-like content: a text header, then 16-bit samples of a smooth signal with noise in their low
    /// bits (as CT pixel data), `count` bytes in all.
    static func imageLike(_ count: Int, seed: UInt64) -> [UInt8] {
        var out = Array(String(repeating: "(0010,0010) PN Doe^Jane ", count: 200).utf8)
        let noise = bytes(count, seed: seed)
        var sample = 0
        while out.count < count {
            let value = 1000 + (sample % 512) * 4 + Int(noise[out.count] & 0x0F)
            out += [UInt8(value & 0xFF), UInt8(value >> 8)]
            sample += 1
        }
        return Array(out.prefix(count))
    }

    /// ``ZipWriter/addFiles(_:workers:)`` deflates on several threads: every entry in its place and order,
    /// each with the CRC-32 and sizes that ``ZipWriter/addFile(at:as:method:)`` gives it one by one (the
    /// same deflate stream, the strategy switching past the header included), readable by Info-ZIP.
    @Test func entriesDeflatedOnSeveralThreadsMatchOneByOne() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            var contents: [(String, [UInt8], ZipMethod)] = []
            for index in 0..<11 {
                let size = [0, 10, 70_000, 300_000, 1_500_000][index % 5]
                let data =
                    index % 3 == 0 ? Self.bytes(size, seed: UInt64(index)) : Self.imageLike(size, seed: UInt64(index))
                contents.append(("s/\(index).dcm", data, index == 4 ? .stored : .deflate))
            }
            // Image-like entries switch to Z_RLE past 16 KiB (as ZipPlace deflates images), the others do not.
            func bulkAfter(_ index: Int) -> Int? { index % 3 == 0 ? nil : 16 * 1024 }
            let sequential = dir + "/sequential.zip"
            let one = try ZipWriter(path: sequential)
            for (index, item) in contents.enumerated() {
                try Data(item.1).write(to: URL(fileURLWithPath: dir + "/src-\(index)"))
                try one.addFile(at: dir + "/src-\(index)", as: item.0, method: item.2, bulkAfter: bulkAfter(index))
            }
            try one.finish(fsync: false)
            let parallelPath = dir + "/parallel.zip"
            let writer = try ZipWriter(path: parallelPath)
            try writer.addFiles(
                contents.enumerated().map { index, item in
                    ZipWriter.PendingFile(name: item.0, method: item.2, bulkAfter: bulkAfter(index)) {
                        () throws(ZipError) in
                        do { return try OpenedFile(path: dir + "/src-\(index)") } catch {
                            throw .io("\(error)", path: dir)
                        }
                    }
                }, workers: 3)
            try writer.finish(fsync: false)

            let oneByOne = try ZipReader(path: sequential)
            let many = try ZipReader(path: parallelPath)
            #expect(many.entries.map(\.name) == contents.map(\.0))
            for (name, data, method) in contents {
                let a = try #require(oneByOne.entry(named: name))
                let b = try #require(many.entry(named: name))
                #expect(b.method == method)
                #expect(a.crc32 == b.crc32 && a.compressedSize == b.compressedSize)
                #expect(try many.contents(of: b, maximumSize: 8 << 20) == data)
            }
            // Image-like data is made smaller than stored, past the strategy switch.
            let image = try #require(many.entry(named: "s/2.dcm"))
            #expect(image.compressedSize < image.uncompressedSize * 3 / 4)
            let test = try await TestSupport.run("unzip", ["-t", parallelPath])
            #expect(test.status == 0 && test.output.contains("No errors detected"), "\(test.output)")
        }
    }

    /// Two writers whose archives carry one DOS timestamp (2-second steps, APPNOTE §4.4.6): made again until
    /// both were made within one step, so their archives can be compared byte for byte.
    static func writersOfOneTimestamp(_ paths: (String, String)) throws -> (ZipWriter, ZipWriter) {
        while true {
            let before = time(nil) / 2
            let first = try ZipWriter(path: paths.0)
            let second = try ZipWriter(path: paths.1)
            if time(nil) / 2 == before { return (first, second) }
        }
    }

    /// ``ZipWriter/addFiles(_:workers:)`` writes the entries whose size is known (stored files, entries its
    /// workers deflated) at their offsets on several threads, and streams the others between those runs:
    /// the archive is byte for byte the one written entry by entry, whichever order the kinds come in (one
    /// worker: batches of two, so a lone entry to deflate is streamed before or after a run).
    @Test(arguments: [1, 2, 3])
    func addFilesWritesTheArchiveOfOneByOne(workers: Int) async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let kinds: [(Int, ZipMethod)] = [
                (1_500_000, .stored), (300_000, .deflate), (70_000, .deflate), (0, .stored), (10, .stored),
                (200_000, .deflate), (2_500_000, .stored), (0, .deflate), (90_000, .stored),
            ]
            var contents: [(String, [UInt8], ZipMethod)] = []
            for (index, (size, method)) in kinds.enumerated() {
                let data = Self.imageLike(size, seed: UInt64(100 + index))
                contents.append(("s/\(index).dcm", data, method))
                try Data(data).write(to: URL(fileURLWithPath: dir + "/src-\(index)"))
            }
            let (one, many) = try Self.writersOfOneTimestamp((dir + "/one.zip", dir + "/many.zip"))
            for (index, item) in contents.enumerated() {
                try one.addFile(at: dir + "/src-\(index)", as: item.0, method: item.2, bulkAfter: 16 * 1024)
            }
            try one.addData(Array("manifest".utf8), as: "last.json", method: .deflate)
            try one.finish(fsync: false)
            try many.addFiles(
                contents.enumerated().map { index, item in
                    ZipWriter.PendingFile(name: item.0, method: item.2, bulkAfter: 16 * 1024) {
                        () throws(ZipError) in
                        do { return try OpenedFile(path: dir + "/src-\(index)") } catch {
                            throw .io("\(error)", path: dir)
                        }
                    }
                }, workers: workers)
            // A write through the writer's buffer after the runs lands after them.
            try many.addData(Array("manifest".utf8), as: "last.json", method: .deflate)
            try many.finish(fsync: false)
            let a = try Data(contentsOf: URL(fileURLWithPath: dir + "/one.zip"))
            let b = try Data(contentsOf: URL(fileURLWithPath: dir + "/many.zip"))
            // Compared as a Bool: a failed #expect on two Data values would diff megabytes element by element.
            let identical = a == b
            #expect(a.count == b.count)
            let firstDifference = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1
            #expect(identical, "the archives differ from byte \(firstDifference)")
            let reader = try ZipReader(path: dir + "/many.zip")
            for (name, data, method) in contents {
                let entry = try #require(reader.entry(named: name))
                #expect(entry.method == method)
                #expect(try reader.contents(of: entry, maximumSize: 8 << 20) == data, "\(name)")
            }
            let test = try await TestSupport.run("unzip", ["-t", dir + "/many.zip"])
            #expect(test.status == 0 && test.output.contains("No errors detected"), "\(test.output)")
        }
    }

    /// A worker's failure (here a file shorter than it was said to be when opened) fails the archive: the
    /// writer throws it, and no archive, partial or not, is left at the final name.
    @Test func aWorkersFailureFailsTheArchive() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zip-") { dir in
            let source = dir + "/src"
            try Data(Self.imageLike(200_000, seed: 3)).write(to: URL(fileURLWithPath: source))
            let files = (0..<4).map { index in
                ZipWriter.PendingFile(name: "\(index).dcm", method: .deflate) { () throws(ZipError) in
                    let fd = open(source, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { throw .io("cannot open", path: source) }
                    return OpenedFile(descriptor: fd, size: index == 2 ? 300_000 : 200_000, path: source)
                }
            }
            do {
                let writer = try ZipWriter(path: dir + "/w.zip")
                let error = #expect(throws: ZipError.self) { try writer.addFiles(files, workers: 2) }
                #expect(error?.code == .io && error?.message.contains("shrank") == true, "\(String(describing: error))")
            }
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["src"])
        }
    }
}
