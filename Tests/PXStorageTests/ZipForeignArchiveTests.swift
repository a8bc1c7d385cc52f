import DICOMData
import Foundation
import PXStorage
import PXTestSupport
import Testing

/// ``ZipPlace`` over archives without `px-study.json` (another tool's), written here with ``ZipWriter``: what
/// a listing reads of an entry (a prefix, never the rest), which entries count, several studies in one zip,
/// and the archives that fail alone.
struct ZipForeignArchiveTests {
    static func dataSet(study: String, series: String, sop: String?) -> DataSet {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.7")
        ds.set(.patientID, vr: .LO, string: "P1")
        ds.set(.patientName, vr: .PN, string: "Doe^Jane")
        ds.set(.studyInstanceUID, vr: .UI, string: study)
        ds.set(.seriesInstanceUID, vr: .UI, string: series)
        ds.set(.modality, vr: .CS, string: "OT")
        if let sop { ds.set(.sopInstanceUID, vr: .UI, string: sop) }
        return ds
    }

    /// A Part 10 file's bytes: the data set, then, when asked, `pixels` bytes of OB Pixel Data.
    static func file(_ ds: DataSet, syntax: TransferSyntax = .explicitVRLittleEndian, pixels: Int = 0) throws
        -> [UInt8]
    {
        var bytes = try Part10File(dataSet: ds, transferSyntax: syntax).encoded()
        if pixels > 0 {
            bytes += [0xE0, 0x7F, 0x10, 0x00, 0x4F, 0x42, 0, 0]
            withUnsafeBytes(of: UInt32(pixels).littleEndian) { bytes += $0 }
            bytes += (0..<pixels).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        }
        return bytes
    }

    static func zip(_ path: String, _ entries: [(String, [UInt8], ZipMethod)]) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let writer = try ZipWriter(path: path)
        for (name, bytes, method) in entries { try writer.addData(bytes, as: name, method: method) }
        try writer.finish(fsync: false)
    }

    @Test func aListingReadsAnEntrysHeaderNotItsPixelData() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipforeign-") { dir in
            // A stored 4 MiB entry whose pixel data is damaged far past its header: the listing (a prefix read)
            // does not see it; extracting the entry (CRC-32 over all of it) does.
            let bytes = try Self.file(
                Self.dataSet(study: "1.2.3", series: "1.2.3.1", sop: "1.2.3.1.1"), pixels: 4 << 20)
            let path = dir + "/zips/p/s.zip"
            try Self.zip(path, [("a/one.dcm", bytes, .stored)])
            var archive = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let at = try #require(archive.firstRange(of: bytes[1000..<1064])).lowerBound + 3 << 20
            archive[at] ^= 0xFF
            try Data(archive).write(to: URL(fileURLWithPath: path))

            let place = ZipPlace(root: dir + "/zips")
            let study = try #require(try place.study("1.2.3"))
            #expect(!study.hasManifest && study.instanceCount == 1 && study.path == path)
            #expect(study.entryName(series: "1.2.3.1", instance: "1.2.3.1.1") == "a/one.dcm")
            #expect(study.record.string(.patientID) == "P1")
            #expect(throws: ZipError.self) {
                try place.extractInstance(
                    study: "1.2.3", series: "1.2.3.1", instance: "1.2.3.1.1", to: dir + "/one.dcm")
            }
            #expect(!FileManager.default.fileExists(atPath: dir + "/one.dcm"))
        }
    }

    @Test func aHeaderLongerThanTheFirstReadIsReadOn() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipforeign-") { dir in
            // 300 KB of a private element before the UIDs: the first 64 KiB prefix ends inside it.
            var long = Self.dataSet(study: "1.2.3", series: "1.2.3.1", sop: "1.2.3.1.1")
            long.set(Tag(0x0009, 0x0010), vr: .LO, string: "PX TEST")
            long.set(DataElement(tag: Tag(0x0009, 0x1001), vr: .OB, bytes: [UInt8](repeating: 1, count: 300_000)))
            let other = try Self.file(Self.dataSet(study: "1.2.3", series: "1.2.3.2", sop: "1.2.3.2.1"))
            try Self.zip(
                dir + "/zips/p/s.zip", [("long.dcm", try Self.file(long), .deflate), ("b.dcm", other, .stored)])
            let study = try #require(try ZipPlace(root: dir + "/zips").study("1.2.3"))
            #expect(study.series.map(\.seriesInstanceUID).sorted() == ["1.2.3.1", "1.2.3.2"])
            #expect(study.instanceCount == 2)
        }
    }

    @Test func severalStudiesInOneZipAndEntriesThatAreNotInstances() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipforeign-") { dir in
            let a = try Self.file(Self.dataSet(study: "1.2.3", series: "1.2.3.1", sop: "1.2.3.1.1"))
            let b = try Self.file(Self.dataSet(study: "1.2.4", series: "1.2.4.1", sop: "1.2.4.1.1"))
            try Self.zip(
                dir + "/zips/both.zip",
                [
                    ("x/a.dcm", a, .deflate), ("x/README.txt", Array("notes".utf8), .deflate),
                    ("DICOMDIR", a, .deflate), ("b", b, .stored), ("copy-of-a.dcm", a, .deflate),
                ])
            // Only text, and a DICOM file without its SOP Instance UID: each fails its own archive.
            try Self.zip(dir + "/zips/p/text.zip", [("README", Array("hello".utf8), .deflate)])
            let noUID = try Self.file(Self.dataSet(study: "1.2.5", series: "1.2.5.1", sop: nil))
            try Self.zip(dir + "/zips/p/nouid.zip", [("n.dcm", noUID, .deflate)])

            let place = ZipPlace(root: dir + "/zips")
            let listing = try place.listing()
            #expect(listing.studies.map(\.studyInstanceUID).sorted() == ["1.2.3", "1.2.4"])
            #expect(listing.studies.allSatisfy { $0.instanceCount == 1 })
            #expect(listing.failures.map(\.key).sorted() == ["p/nouid.zip", "p/text.zip"])
            #expect(listing.failures.allSatisfy { $0.error.code == .notDICOM })
            #expect(throws: ZipError.self) { _ = try place.studies() }
            #expect { _ = try place.study("p/text.zip") } throws: { ($0 as? ZipError)?.code == .notDICOM }

            // Extracting one study takes its entry only, as it is.
            let placer = try InstancePlacer(
                root: dir + "/folder", layout: StorageLayout(), duplicates: .keep, fsync: false)
            let placed = try place.extract(study: "1.2.4", into: placer)
            #expect(placed.count == 1)
            #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: placed[0].path))) == b)
            // px does not add to another tool's archive.
            let file = dir + "/new.dcm"
            try Part10File(
                dataSet: Self.dataSet(study: "1.2.3", series: "1.2.3.9", sop: "1.2.3.9.1"),
                transferSyntax: .explicitVRLittleEndian
            ).write(to: file)
            #expect { _ = try place.archive(study: "1.2.3", files: [file], fsync: false) } throws: {
                ($0 as? ZipError)?.code == .malformed
            }
        }
    }
}
