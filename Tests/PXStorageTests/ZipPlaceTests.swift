import DICOMData
import Foundation
import PXCore
import PXStorage
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// ``ZipPlace``: the test corpus archived study by study and extracted into a folder place byte for byte,
/// the inventory px-sync reads (from manifests and central directories), an archive replaced when its study
/// gains series, and a writer killed with SIGKILL that leaves no partial `.zip` at a final name.
@Suite(.tags(.integration), .integrationTier, .timeLimit(.minutes(3)), .requires("unzip", "dump2dcm", "dcmcjpeg"))
struct ZipPlaceTests {
    static func dataSet(study: String = "1.2.3", series: String, sop: String, patient: String = "P1") -> DataSet {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.7")
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.patientName, vr: .PN, string: "Doe^Jane")
        ds.set(.studyInstanceUID, vr: .UI, string: study)
        ds.set(.studyDate, vr: .DA, string: "20260101")
        ds.set(.seriesInstanceUID, vr: .UI, string: series)
        ds.set(.modality, vr: .CS, string: "OT")
        ds.set(.sopInstanceUID, vr: .UI, string: sop)
        return ds
    }

    static func write(_ ds: DataSet, in directory: String) throws -> String {
        let path = directory + "/" + (ds.string(.sopInstanceUID) ?? "x") + ".dcm"
        try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).write(to: path)
        return path
    }

    static func zips(under root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".zip") }
    }

    @Test func layoutTemplatesParse() throws {
        _ = try StorageLayout(template: "{PatientID}-{PatientName}/{StudyInstanceUID}.zip")
        _ = try StorageLayout(template: "{SeriesInstanceUID}/{SOPInstanceUID}.dcm", maximumFieldLength: 200)
    }

    @Test func corpusRoundTripsThroughArchiveAndExtract() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipplace-") { dir in
            let corpus = dir + "/corpus"
            let made = try await TestSupport.run(
                "bash", [TestSupport.repositoryRoot + "/scripts/make-corpus.sh", corpus],
                environment: ["PX_VENV": TestSupport.venv])
            #expect(made.status == 0, "\(made.output)")
            var byStudy: [String: [String]] = [:]
            var sourceBySOP: [String: String] = [:]
            var syntaxBySOP: [String: TransferSyntax] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: corpus).sorted()
            where name.hasSuffix(".dcm") {
                let path = corpus + "/" + name
                let header = try Part10File.readHeader(contentsOf: path)
                let study = try #require(header.dataSet.string(.studyInstanceUID))
                let sop = try #require(header.dataSet.string(.sopInstanceUID))
                byStudy[study, default: []].append(path)
                sourceBySOP[sop] = path
                syntaxBySOP[sop] = header.transferSyntax
            }
            #expect(sourceBySOP.count >= 50)
            let place = ZipPlace(root: dir + "/zips")
            for (study, files) in byStudy {
                let result = try place.archive(study: study, files: files, fsync: false)
                #expect(result.added == files.count && result.instances == files.count && !result.replaced)
                let test = try await TestSupport.run("unzip", ["-tq", result.path])
                #expect(test.status == 0, "\(test.output)")
                // Compressed transfer syntaxes are stored, the others deflated.
                let reader = try ZipReader(path: result.path)
                for entry in reader.entries where entry.name.hasSuffix(".dcm") {
                    let sop = String(entry.name.split(separator: "/")[1].dropLast(4))
                    let syntax = try #require(syntaxBySOP[sop])
                    #expect(entry.method == (syntax.isEncapsulated || syntax.isDeflated ? .stored : .deflate))
                }
            }
            #expect(Self.zips(under: dir + "/zips").count == byStudy.count)

            // The inventory, from manifests and central directories only.
            let holdings = try await place.studies(matching: DataSet())
            #expect(holdings.count == byStudy.count)
            for holding in holdings {
                #expect(holding.instanceCount == byStudy[holding.studyInstanceUID]?.count)
                #expect(holding.patientID?.hasPrefix("CORPUS") == true)
                let series = try await place.series(ofStudy: holding.studyInstanceUID)
                #expect(series.count == holding.seriesCount)
                var instances = Set<String>()
                for s in series {
                    let uids = try await place.instances(ofStudy: holding.studyInstanceUID, series: s.seriesInstanceUID)
                    #expect(uids.count == s.instanceCount)
                    instances.formUnion(uids)
                }
                let expected = Set(
                    try byStudy[holding.studyInstanceUID, default: []].map {
                        try #require(Part10File.readHeader(contentsOf: $0).dataSet.string(.sopInstanceUID))
                    })
                #expect(instances == expected)
            }
            var keys = DataSet()
            keys.set(.patientID, vr: .LO, string: "CORPUS00*")
            let some = try await place.studies(matching: keys)
            #expect(!some.isEmpty && some.count < holdings.count)
            #expect(some.allSatisfy { $0.patientID?.hasPrefix("CORPUS00") == true })
            #expect(try await place.series(ofStudy: "9.9.9").isEmpty)

            // Extracted into a folder place: every instance identical to its source.
            let placer = try InstancePlacer(
                root: dir + "/folder", layout: StorageLayout(), duplicates: .keep, fsync: false)
            var placed = 0
            for study in byStudy.keys {
                for placement in try place.extract(study: study, into: placer) {
                    let header = try Part10File.readHeader(contentsOf: placement.path)
                    let sop = try #require(header.dataSet.string(.sopInstanceUID))
                    let source = try #require(sourceBySOP[sop])
                    #expect(FileManager.default.contentsEqual(atPath: source, andPath: placement.path), "\(sop)")
                    placed += 1
                }
            }
            #expect(placed == sourceBySOP.count)
            // One instance out to a file of its own, for pushing.
            let one = try #require(holdings.first)
            let firstSeries = try #require(try await place.series(ofStudy: one.studyInstanceUID).first)
            let sop = try #require(
                try await place.instances(ofStudy: one.studyInstanceUID, series: firstSeries.seriesInstanceUID).first)
            try place.extractInstance(
                study: one.studyInstanceUID, series: firstSeries.seriesInstanceUID, instance: sop, to: dir + "/one.dcm")
            #expect(
                FileManager.default.contentsEqual(atPath: try #require(sourceBySOP[sop]), andPath: dir + "/one.dcm"))
        }
    }

    @Test func anArchiveIsReplacedWhenItsStudyGainsSeries() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipplace-") { dir in
            let a1 = try Self.write(Self.dataSet(series: "1.2.3.1", sop: "1.2.3.1.1"), in: dir)
            let a2 = try Self.write(Self.dataSet(series: "1.2.3.1", sop: "1.2.3.1.2"), in: dir)
            let b1 = try Self.write(Self.dataSet(series: "1.2.3.2", sop: "1.2.3.2.1"), in: dir)
            // The root and its parents are made as needed.
            let place = ZipPlace(root: dir + "/new/zips")
            let first = try place.archive(study: "1.2.3", files: [a1, a2], fsync: false)
            #expect(first.path == dir + "/new/zips/P1-Doe_Jane/1.2.3.zip")
            #expect(first.added == 2 && first.series == 1 && !first.replaced)
            var before = stat()
            #expect(stat(first.path, &before) == 0)
            // Nothing new: the archive is left as it was (same file).
            let again = try place.archive(study: "1.2.3", files: [a2, a1], fsync: false)
            #expect(again.added == 0 && again.instances == 2 && !again.replaced)
            var same = stat()
            #expect(stat(first.path, &same) == 0 && same.st_ino == before.st_ino)
            // A new series: a new archive with the old entries and the new one, in place of the old.
            let gained = try place.archive(study: "1.2.3", files: [a1, b1], fsync: false)
            #expect(gained.path == first.path)
            #expect(gained.added == 1 && gained.instances == 3 && gained.series == 2 && gained.replaced)
            var after = stat()
            #expect(stat(first.path, &after) == 0 && after.st_ino != before.st_ino)
            let series = try await place.series(ofStudy: "1.2.3")
            #expect(Set(series.map(\.seriesInstanceUID)) == ["1.2.3.1", "1.2.3.2"])
            #expect(series.allSatisfy { $0.modality == "OT" })
            let study = try #require(try await place.studies(matching: DataSet()).first)
            #expect(study.studyDate == "20260101" && study.patientName == "Doe^Jane" && study.patientID == "P1")
            #expect(study.seriesCount == 2 && study.instanceCount == 3)
            #expect(try await place.instances(ofStudy: "1.2.3", series: "1.2.3.1") == ["1.2.3.1.1", "1.2.3.1.2"])
            #expect(Self.zips(under: dir + "/new/zips") == ["P1-Doe_Jane/1.2.3.zip"])
            let test = try await TestSupport.run("unzip", ["-tq", first.path])
            #expect(test.status == 0, "\(test.output)")
            // A file of another study is refused, and the archive is left alone.
            let other = try Self.write(Self.dataSet(study: "9.9", series: "9.9.1", sop: "9.9.1.1"), in: dir)
            #expect(throws: ZipError.self) { try place.archive(study: "1.2.3", files: [other], fsync: false) }
            #expect(try place.study("1.2.3")?.instanceCount == 3)
        }
    }

    @Test func hostileEntryNamesInAPlaceArchiveAreRefused() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipplace-") { dir in
            // An archive in the place whose entry would leave the folder: listing and extraction refuse it.
            try FileManager.default.createDirectory(atPath: dir + "/zips/P", withIntermediateDirectories: true)
            let ok = try Self.write(Self.dataSet(series: "1.2.3.1", sop: "1.2.3.1.1"), in: dir)
            try FileManager.default.copyItem(atPath: ok, toPath: dir + "/evil.dcm")
            let made = try await TestSupport.run(
                "bash",
                ["-c", "cd \(dir) && mkdir -p a && cp evil.dcm a/ && cd a && zip -q ../zips/P/1.2.3.zip ../evil.dcm"])
            #expect(made.status == 0, "\(made.output)")
            // Info-ZIP stores "../evil.dcm" as given: our reader refuses it by name.
            let place = ZipPlace(root: dir + "/zips")
            let placer = try InstancePlacer(
                root: dir + "/folder", layout: StorageLayout(), duplicates: .keep, fsync: false)
            #expect { try place.extract(study: "1.2.3", into: placer) } throws: {
                ($0 as? ZipError)?.code == .unsafeName
            }
            // The archive fails alone: px-sync's inventory holds it under its path, and asking about it fails.
            let held = try await place.studies(matching: DataSet())
            #expect(held.map(\.studyInstanceUID) == ["P/1.2.3.zip"])
            await #expect { _ = try await place.series(ofStudy: "P/1.2.3.zip") } throws: {
                ($0 as? PXError)?.code == .malformedFile
            }
            #expect(try place.listing().failures.map(\.error.code) == [.unsafeName])
            // Nothing was placed, and nothing is left in the staging folder.
            let left = FileManager.default.enumerator(atPath: dir + "/folder")?.allObjects as? [String] ?? []
            #expect(left.allSatisfy { !$0.hasSuffix(".dcm") && !$0.hasSuffix(".part") }, "\(left)")
        }
    }

    /// An instance of study 1.2.3 written to `path` as a Part 10 file, and its bytes: `samples` 16-bit samples,
    /// a ramp of `ramp` values with the bits of `noiseMask` of an xorshift stream (`noise`, carried from one
    /// instance to the next) added, so deflate has work past the header. `namedRLE`: its transfer syntax UID
    /// patched to RLE Lossless (PS3.5 §A.4.2; the data set is explicit VR little endian in both, and the UIDs
    /// are as long), a compressed transfer syntax, so stored, whatever the pixel data holds.
    static func noisyInstance(
        series: String, sop: String, samples count: Int, ramp: Int, noiseMask: UInt64, noise: inout UInt64,
        at path: String, namedRLE: Bool = false
    ) throws -> (dataSet: DataSet, bytes: [UInt8]) {
        var ds = dataSet(series: series, sop: sop)
        let samples = (0..<count).flatMap { n -> [UInt8] in
            noise ^= noise << 13
            noise ^= noise >> 7
            noise ^= noise << 17
            let value = 1000 + (n % ramp) + Int(noise & noiseMask)
            return [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        ds.set(DataElement(tag: .pixelData, vr: .OW, bytes: samples))
        try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).write(to: path)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        if namedRLE {
            let from = Array("1.2.840.10008.1.2.1\0".utf8)
            let start = try #require(bytes.indices.first { bytes[$0...].starts(with: from) })
            bytes.replaceSubrange(start..<start + from.count, with: Array("1.2.840.10008.1.2.5\0".utf8))
            try Data(bytes).write(to: URL(fileURLWithPath: path))
        }
        return (ds, bytes)
    }

    /// Instances placed through a placer with a ``ZipPrecompressor`` are deflated as they are placed: the
    /// archive made from their spool files holds each one byte for byte, as the archive deflating them itself
    /// does (same CRC-32, same compressed size); an instance of a compressed transfer syntax gets no spool and
    /// is stored; one placed twice at a path gets none either (the archive deflates it itself).
    @Test func instancesDeflatedAsTheyArePlacedMakeTheSameArchive() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipplace-") { dir in
            let tree = dir + "/tree"
            try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
            let precompressor = try ZipPrecompressor(spool: tree + "/.spool", workers: 2)
            let placer = try InstancePlacer(
                root: tree, layout: StorageLayout(), duplicates: .overwrite, fsync: false,
                observer: PlacementObserving(precompressor))
            var noise: UInt64 = 0x9E37_79B9
            var placed: [String] = []
            var sourceBySOP: [String: [UInt8]] = [:]
            for index in 0..<7 {
                let temporary = dir + "/incoming-\(index)"
                // 200 KB of 16-bit samples, a smooth ramp with noise in the low bits: past the header switch.
                let (ds, bytes) = try Self.noisyInstance(
                    series: "1.2.3.\(index % 2)", sop: "1.2.3.9.\(index)", samples: 100_000, ramp: 700,
                    noiseMask: 0x1F, noise: &noise, at: temporary, namedRLE: index == 3)
                if index == 3 {
                    #expect(try Part10File.readHeader(contentsOf: temporary).transferSyntax.isEncapsulated)
                }
                let placement = try placer.place(temporaryFile: temporary, dataSet: ds)
                placed.append(placement.path)
                sourceBySOP["1.2.3.9.\(index)"] = bytes
                if index == 5 {
                    // The same instance again at the same path (overwritten): its spool is not trusted.
                    try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).write(to: temporary)
                    #expect(try placer.place(temporaryFile: temporary, dataSet: ds).path == placement.path)
                }
            }
            let spooled = precompressor.finished()
            #expect(spooled.notDeflated.isEmpty)
            #expect(
                Set(spooled.spooled.keys)
                    == Set(placed.enumerated().filter { $0.offset != 3 && $0.offset != 5 }.map(\.element))
            )

            let withSpools = try ZipPlace(root: dir + "/a").archive(
                study: "1.2.3", files: placed, fsync: false, precompressed: spooled)
            let without = try ZipPlace(root: dir + "/b").archive(study: "1.2.3", files: placed, fsync: false)
            #expect(withSpools.added == 7 && without.added == 7)
            let a = try ZipReader(path: withSpools.path)
            let b = try ZipReader(path: without.path)
            #expect(a.entries.map(\.name) == b.entries.map(\.name))
            for entry in a.entries where entry.name.hasSuffix(".dcm") {
                let other = try #require(b.entry(named: entry.name))
                #expect(entry.method == other.method && entry.crc32 == other.crc32)
                #expect(entry.compressedSize == other.compressedSize, "\(entry.name)")
                let sop = String(entry.name.split(separator: "/")[1].dropLast(4))
                #expect(entry.method == (sop == "1.2.3.9.3" ? .stored : .deflate), "\(entry.name)")
                #expect(try a.contents(of: entry, maximumSize: 1 << 20) == sourceBySOP[sop])
            }
            let test = try await TestSupport.run("unzip", ["-tq", withSpools.path])
            #expect(test.status == 0, "\(test.output)")
            // The entries were copied from the spool files: one cut short fails the archive.
            let spool = try #require(spooled.spooled.values.first)
            #expect(truncate(spool.spoolPath, off_t(spool.compressedSize / 2)) == 0)
            #expect(throws: ZipError.self) {
                try ZipPlace(root: dir + "/c").archive(
                    study: "1.2.3", files: placed, fsync: false, precompressed: spooled)
            }
        }
    }

    /// A child archiving a 64 MB instance into an existing study archive is killed with SIGKILL while it
    /// writes: the old archive is still at the final name and whole, no other `.zip` appeared, and a rerun
    /// finishes the job.
    @Test func aKilledWriterLeavesNoPartialZip() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipplace-") { dir in
            let small = try Self.write(Self.dataSet(series: "1.2.3.1", sop: "1.2.3.1.1"), in: dir)
            let place = ZipPlace(root: dir + "/zips")
            let old = try place.archive(study: "1.2.3", files: [small], fsync: false)
            // A big instance: a small header, then 64 MB of random Pixel Data (OB), which deflates slowly.
            let big = dir + "/big.dcm"
            var header = try Part10File(
                dataSet: Self.dataSet(series: "1.2.3.2", sop: "1.2.3.2.1"), transferSyntax: .explicitVRLittleEndian
            ).encoded()
            let length = 64 << 20
            header += [0xE0, 0x7F, 0x10, 0x00, 0x4F, 0x42, 0, 0]
            header += [
                UInt8(length & 0xFF), UInt8((length >> 8) & 0xFF), UInt8((length >> 16) & 0xFF), UInt8(length >> 24),
            ]
            FileManager.default.createFile(atPath: big, contents: Data(header))
            let out = try FileHandle(forWritingTo: URL(fileURLWithPath: big))
            out.seekToEndOfFile()
            let random = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/urandom"))
            for _ in 0..<(length >> 20) { out.write(random.readData(ofLength: 1 << 20)) }
            try out.close()
            try random.close()

            let child = TestSupport.binDirectory + "/zip-archive-child"
            let writer = try PeerProcess(
                child, [dir + "/zips", "1.2.3", small, big], logFile: dir + "/child.out", errorFile: dir + "/child.err")
            defer { writer.kill() }
            let folder = dir + "/zips/P1-Doe_Jane"
            // Frozen (SIGSTOP) the moment its temporary archive holds 2 MB, then killed: mid-write whatever the
            // load. The watch runs on a thread of its own (``PeerProcess/send(signal:within:when:)``): the cooperative pool can be starved for
            // seconds beside the whole suite on 2 cores, and a 64 MB deflate then finished before a pool task
            // looked (CI, stop 26: exit 0 instead of SIGKILL).
            let started = await writer.send(signal: SIGSTOP, within: 60) { _ in
                let partial = (try? FileManager.default.contentsOfDirectory(atPath: folder))?.first {
                    $0.contains(".partial-")
                }
                guard let partial else { return false }
                var info = stat()
                return stat(folder + "/" + partial, &info) == 0 && info.st_size > 2 << 20
            }
            let status = await writer.stop(signal: SIGKILL)
            #expect(
                started,
                "the child never wrote 2 MB of its archive: \((try? String(contentsOfFile: dir + "/child.err", encoding: .utf8)) ?? "")"
            )
            #expect(status == 128 + SIGKILL)
            // The final name still holds the old archive, whole; the partial one is hidden and not a .zip.
            #expect(Self.zips(under: dir + "/zips") == ["P1-Doe_Jane/1.2.3.zip"])
            let reader = try ZipReader(path: old.path)
            #expect(reader.entries.count == 2)
            for entry in reader.entries { try reader.read(entry) { _ in } }
            #expect(try place.studies().map(\.instanceCount) == [1])
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder).contains { $0.contains(".partial-") })
            // The next run finishes the job, and removes the dead writer's temporary file.
            let rerun = try place.archive(study: "1.2.3", files: [small, big], fsync: false)
            #expect(rerun.added == 1 && rerun.instances == 2 && rerun.replaced)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["1.2.3.zip"])
        }
    }
}
