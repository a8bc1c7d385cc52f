import DICOMData
import Foundation
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// px-sync's "present" means every SOP Instance UID of the source, whoever else writes the place (issue 32):
/// equal counts of other instances, an instance held twice, concurrent runs into one zip or folder place, a
/// study split over two zips, and a place another px holds locked.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10)))
struct SyncTrustTests {
    /// A CT instance of study `1.2.826.0.77.<study>`, series `.1`, instance `.<number>`; `fill` varies its pixels.
    static func instance(study: Int, number: Int, fill: UInt8? = nil) throws -> [UInt8] {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: "1.2.826.0.77.\(study).1.\(number)")
        ds.set(.studyDate, vr: .DA, string: "20240315")
        ds.set(.modality, vr: .CS, string: "CT")
        ds.set(.patientName, vr: .PN, string: "TRUST^P\(study)")
        ds.set(.patientID, vr: .LO, string: "TRUST\(study)")
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.826.0.77.\(study)")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.826.0.77.\(study).1")
        ds.set(.instanceNumber, vr: .IS, string: String(number))
        ds.set(
            DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: fill ?? UInt8(number % 256), count: 256)))
        return try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    /// Writes instances `numbers` of `study` into `folder` as `<study>-<number><suffix>.dcm`.
    static func write(study: Int, _ numbers: some Sequence<Int>, into folder: String, suffix: String = "") throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for number in numbers {
            try Data(try instance(study: study, number: number)).write(
                to: URL(fileURLWithPath: folder + "/\(study)-\(number)\(suffix).dcm"))
        }
    }

    /// The SOP Instance UIDs held under `root` (px's own folders left out).
    static func uids(under root: String) throws -> Set<String> {
        Set(
            try SyncTests.files(under: root).map {
                try Part10File.readHeader(contentsOf: $0).dataSet.string(.sopInstanceUID) ?? "?"
            })
    }

    /// The SOP Instance UIDs a place lists at IMAGE level (px-ls, NDJSON).
    static func listed(_ place: String) async throws -> [String] {
        let run = try await PeerHarness.run("px-ls", [place, "--level", "image", "--format", "ndjson"])
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        return run.stdout.split(separator: "\n").compactMap { line in
            (try? JSONParser.parse(String(line)))?["SOPInstanceUID"]?.stringValue
        }
    }

    static func uid(_ study: Int, _ number: Int) -> String { "1.2.826.0.77.\(study).1.\(number)" }

    @Test("equal counts of other instances are not 'present': folder and zip destinations get all 6")
    func equalCountsAreNotPresence() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-") { work in
            let source = work + "/source"
            try Self.write(study: 1, 1...6, into: source)
            // The destination holds 3 of the source's instances and 3 others of the same study and series:
            // the same numbers of series and instances.
            let seed = work + "/seed"
            try Self.write(study: 1, [1, 2, 3, 7, 8, 9], into: seed)
            let wanted = Set((1...9).map { Self.uid(1, $0) })
            for destination in [work + "/folder", "zip:" + work + "/zips"] {
                let seeded = try await SyncTests.sync([seed, destination])
                #expect(seeded.exitCode == 0, "\(seeded.stdout) \(seeded.stderr)")
                let run = try await SyncTests.sync([source, destination])
                #expect(run.exitCode == 0, "\(destination): \(run.stdout) \(run.stderr)")
                #expect(run.json?["data"]?["alreadyPresent"] == .number("0"), "\(run.stdout)")
                #expect(run.json?["data"]?["instancesTransferred"] == .number("3"), "\(run.stdout)")
                #expect(Set(try await Self.listed(destination)) == wanted, "\(destination)")
                let again = try await SyncTests.sync([source, destination])
                #expect(again.json?["data"]?["alreadyPresent"] == .number("1"), "\(again.stdout)")
                #expect(again.json?["data"]?["instancesTransferred"] == .number("0"), "\(again.stdout)")
            }
        }
    }

    @Test("an instance held twice counts once: px-serve's C-FIND says 1, and px-sync sends the missing one")
    func duplicateCountsOnce() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-dup-") { work in
            let source = work + "/source"
            try Self.write(study: 2, [1, 2], into: source)
            // The served place holds instance 1 twice (two names) and not instance 2.
            let place = work + "/place"
            try Self.write(study: 2, [1], into: place + "/a")
            try Self.write(study: 2, [1], into: place + "/b", suffix: "-copy")
            let listed = try await PeerHarness.run("px-ls", [place, "--level", "study", "--format", "ndjson"])
            #expect(listed.stdout.contains("\"NumberOfStudyRelatedInstances\":\"1\""), "\(listed.stdout)")
            let (server, port) = try await ServeCommandTests.start(place, work: work)
            defer { server.kill() }
            let found = try await PeerHarness.run(
                "px-find",
                [
                    "PXSERVE@127.0.0.1:\(port)", "--StudyInstanceUID", "1.2.826.0.77.2", "-k",
                    "NumberOfStudyRelatedInstances", "--format", "ndjson",
                ])
            #expect(found.stdout.contains("\"NumberOfStudyRelatedInstances\":\"1\""), "\(found.stdout)")
            let run = try await SyncTests.sync([source, "PXSERVE@127.0.0.1:\(port)"])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.json?["data"]?["instancesTransferred"] == .number("1"), "\(run.stdout)")
            #expect(try Self.uids(under: place).contains(Self.uid(2, 2)))
        }
    }

    /// Starts `runs` px-syncs at once: each waits on its own FIFO before it starts, and the FIFOs are closed
    /// together once every run has opened its own (a barrier, not a sleep).
    static func syncTogether(_ runs: [[String]], work: String) async throws -> [PeerHarness.Run] {
        let fifos = runs.indices.map { work + "/barrier-\($0)" }
        for fifo in fifos {
            unlink(fifo)
            try #require(mkfifo(fifo, 0o600) == 0)
        }
        return try await withThrowingTaskGroup(of: (Int, PeerHarness.Run).self) { group in
            for (index, arguments) in runs.enumerated() {
                group.addTask {
                    let run = try await PeerHarness.run(
                        "/bin/sh",
                        ["-c", "cat \"$0\" >/dev/null && exec \"$@\"", fifos[index], PeerHarness.path("px-sync")]
                            + arguments)
                    return (index, run)
                }
            }
            // Each open for writing returns once that run's shell has opened the FIFO for reading.
            let writers = fifos.map { open($0, O_WRONLY | O_CLOEXEC) }
            for writer in writers where writer >= 0 { close(writer) }
            var results = [PeerHarness.Run?](repeating: nil, count: runs.count)
            for try await (index, run) in group { results[index] = run }
            return results.compactMap { $0 }
        }
    }

    @Test("two px-syncs into one zip place and three into one folder, started together: every instance, 3 rounds")
    func concurrentWriters() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-race-") { work in
            // Three sources, each with other instances of the same study.
            let sources = (0..<3).map { work + "/source-\($0)" }
            for (index, source) in sources.enumerated() {
                try Self.write(study: 3, (index * 40 + 1)...(index * 40 + 40), into: source)
            }
            for round in 1...3 {
                let zips = "zip:" + work + "/zips-\(round)"
                let zipRuns = try await Self.syncTogether(
                    [[sources[0], zips, "--parallel", "2"], [sources[1], zips, "--parallel", "2"]], work: work)
                for run in zipRuns { #expect(run.exitCode == 0, "round \(round): \(run.stdout) \(run.stderr)") }
                #expect(Set(try await Self.listed(zips)) == Set((1...80).map { Self.uid(3, $0) }), "round \(round)")

                let folder = work + "/folder-\(round)"
                let folderRuns = try await Self.syncTogether(sources.map { [$0, folder] }, work: work)
                for run in folderRuns { #expect(run.exitCode == 0, "round \(round): \(run.stdout) \(run.stderr)") }
                #expect(try Self.uids(under: folder) == Set((1...120).map { Self.uid(3, $0) }), "round \(round)")
            }
        }
    }

    /// A zip of `files` written by Python's zipfile (another tool's archive: no px manifest).
    static func zip(_ files: [String], to path: String) async throws {
        let made = try await PeerHarness.run(
            TestSupport.python,
            [
                "-c",
                "import sys, zipfile, os\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
                    + "    [z.write(f, os.path.basename(f)) for f in sys.argv[2:]]",
                path,
            ] + files)
        try #require(made.exitCode == 0, "\(made.stderr)")
    }

    @Test("a study split over two zips is one study of 5; one UID with two contents fails and names it")
    func splitStudy() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-split-") { work in
            let files = work + "/files"
            try Self.write(study: 4, 1...5, into: files)
            let place = work + "/split"
            try FileManager.default.createDirectory(atPath: place + "/TRUST4", withIntermediateDirectories: true)
            try await Self.zip((1...2).map { files + "/4-\($0).dcm" }, to: place + "/TRUST4/part1.zip")
            try await Self.zip((3...5).map { files + "/4-\($0).dcm" }, to: place + "/TRUST4/part2.zip")
            #expect(try await Self.listed("zip:" + place).count == 5)
            let folder = work + "/out"
            let run = try await SyncTests.sync(["zip:" + place, folder])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.json?["data"]?["instancesTransferred"] == .number("5"), "\(run.stdout)")
            #expect(try Self.uids(under: folder) == Set((1...5).map { Self.uid(4, $0) }))
            let again = try await SyncTests.sync(["zip:" + place, folder])
            #expect(again.json?["data"]?["alreadyPresent"] == .number("1"), "\(again.stdout)")

            // Instance 5 again in a third archive, with other pixels: reported, never dropped silently.
            try Data(try Self.instance(study: 4, number: 5, fill: 0xEE)).write(
                to: URL(fileURLWithPath: work + "/other-5.dcm"))
            try await Self.zip([work + "/other-5.dcm"], to: place + "/TRUST4/part3.zip")
            let conflicted = try await SyncTests.sync(["zip:" + place, work + "/out2"])
            #expect(conflicted.exitCode == 1, "\(conflicted.stdout)")
            #expect(conflicted.stdout.contains(Self.uid(4, 5)), "\(conflicted.stdout)")
            #expect(try Self.uids(under: work + "/out2") == Set((1...5).map { Self.uid(4, $0) }))
        }
    }

    @Test("a destination another px holds locked: --lock-timeout 1 fails with placeBusy (exit 75), then it runs")
    func lockedPlace() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-lock-") { work in
            let source = work + "/source"
            try Self.write(study: 5, 1...2, into: source)
            let destination = work + "/dest"
            try FileManager.default.createDirectory(atPath: destination + "/.px", withIntermediateDirectories: true)
            let lock = open(destination + "/.px/lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            try #require(lock >= 0)
            try #require(flock(lock, LOCK_EX) == 0)
            let busy = try await SyncTests.sync([source, destination, "--lock-timeout", "1"])
            #expect(busy.exitCode == 75, "\(busy.stdout) \(busy.stderr)")
            #expect(busy.json?["error"]?["code"]?.stringValue == "placeBusy", "\(busy.stdout)")
            #expect(busy.stderr.contains("another px is writing"), "\(busy.stderr)")
            #expect(try Self.uids(under: destination).isEmpty)
            // A dry run takes no lock.
            let dry = try await SyncTests.sync([source, destination, "--dry-run", "--lock-timeout", "0"])
            #expect(dry.exitCode == 0, "\(dry.stdout) \(dry.stderr)")
            close(lock)
            let run = try await SyncTests.sync([source, destination, "--lock-timeout", "0"])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            #expect(try Self.uids(under: destination) == [Self.uid(5, 1), Self.uid(5, 2)])
        }
    }

    @Test("--verify: copies whose bytes differ under one UID fail with contentMismatch; equal copies pass")
    func verifyComparesContent() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-verify-") { work in
            let source = work + "/source"
            try Self.write(study: 6, 1...3, into: source)
            // Folder and zip destinations holding instance 2 with other pixels (same UID, same size).
            let variant = work + "/variant"
            try FileManager.default.createDirectory(atPath: variant, withIntermediateDirectories: true)
            try Data(try Self.instance(study: 6, number: 2, fill: 0xEE)).write(
                to: URL(fileURLWithPath: variant + "/6-2.dcm"))
            // --verify straight after the seeding: the differing copy fails the study, but only after the two
            // missing instances were transferred.
            for destination in [work + "/first-folder", "zip:" + work + "/first-zips"] {
                let seeded = try await SyncTests.sync([variant, destination])
                #expect(seeded.exitCode == 0, "\(seeded.stdout) \(seeded.stderr)")
                let audit = try await SyncTests.sync([source, destination, "--verify"])
                #expect(audit.exitCode == 1, "\(destination): \(audit.stdout) \(audit.stderr)")
                #expect(audit.stdout.contains("contentMismatch"), "\(audit.stdout)")
                #expect(audit.json?["data"]?["instancesTransferred"] == .number("2"), "\(audit.stdout)")
                let again = try await SyncTests.sync([source, destination])
                #expect(again.json?["data"]?["instancesTransferred"] == .number("0"), "\(again.stdout)")
                #expect(again.json?["data"]?["alreadyPresent"] == .number("1"), "\(again.stdout)")
            }
            for destination in [work + "/folder", "zip:" + work + "/zips"] {
                let seeded = try await SyncTests.sync([variant, destination])
                #expect(seeded.exitCode == 0, "\(seeded.stdout) \(seeded.stderr)")
                // By UIDs instance 2 is there: the two others are transferred, the study counts as synced.
                let plain = try await SyncTests.sync([source, destination])
                #expect(plain.exitCode == 0, "\(destination): \(plain.stdout) \(plain.stderr)")
                #expect(plain.json?["data"]?["instancesTransferred"] == .number("2"), "\(plain.stdout)")
                let audit = try await SyncTests.sync([source, destination, "--verify"])
                #expect(audit.exitCode == 1, "\(destination): \(audit.stdout) \(audit.stderr)")
                #expect(audit.stdout.contains("contentMismatch"), "\(audit.stdout)")
                #expect(audit.stdout.contains(Self.uid(6, 2)), "\(audit.stdout)")
                #expect(!audit.stdout.contains(Self.uid(6, 1) + " ("), "\(audit.stdout)")
            }
            // Equal copies pass the audit: folder -> zip, then --verify.
            let copied = "zip:" + work + "/copied"
            let first = try await SyncTests.sync([source, copied])
            #expect(first.exitCode == 0, "\(first.stdout)")
            let audit = try await SyncTests.sync([source, copied, "--verify"])
            #expect(audit.exitCode == 0, "\(audit.stdout) \(audit.stderr)")
            #expect(audit.json?["data"]?["alreadyPresent"] == .number("1"), "\(audit.stdout)")
        }
    }

    /// Every entry below `root` (relative paths), px's own folders included.
    static func entries(under root: String) -> Set<String> {
        Set(FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [])
    }

    @Test("a source folder is never written into (its index is in px's cache); a dry run makes no folder or index")
    func sourcesAreReadOnly() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-ro-") { work in
            let source = work + "/source"
            try Self.write(study: 7, 1...3, into: source)
            let before = Self.entries(under: source)
            let cache = ["XDG_CACHE_HOME": work + "/cache"]
            let run = try await PeerHarness.run("px-sync", [source, work + "/dest"], environment: cache)
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            let listed = try await PeerHarness.run("px-ls", [source, "--format", "ndjson"], environment: cache)
            #expect(listed.exitCode == 0, "\(listed.stderr)")
            #expect(Self.entries(under: source) == before, "px wrote into the source")
            #expect(!Self.entries(under: work + "/cache/px/index").isEmpty, "no index in the cache")
            let again = try await PeerHarness.run("px-sync", [source, work + "/dest"], environment: cache)
            #expect(again.json?["data"]?["alreadyPresent"] == .number("1"), "\(again.stdout)")

            // A dry run into a folder that does not exist plans everything and makes nothing.
            let dry = try await PeerHarness.run(
                "px-sync", [source, work + "/missing", "--dry-run"], environment: cache)
            #expect(dry.exitCode == 0, "\(dry.stdout) \(dry.stderr)")
            #expect(dry.json?["data"]?["planned"] == .number("1"), "\(dry.stdout)")
            #expect(!FileManager.default.fileExists(atPath: work + "/missing"))
            let dryZip = try await PeerHarness.run(
                "px-sync", [source, "zip:" + work + "/missing-zips", "--dry-run"], environment: cache)
            #expect(dryZip.json?["data"]?["planned"] == .number("1"), "\(dryZip.stdout)")
            #expect(!FileManager.default.fileExists(atPath: work + "/missing-zips"))
            // Into an existing folder without an index: nothing is added to it.
            let plain = work + "/plain"
            try Self.write(study: 7, [1], into: plain)
            let plainBefore = Self.entries(under: plain)
            let dryPlain = try await PeerHarness.run("px-sync", [source, plain, "--dry-run"], environment: cache)
            #expect(dryPlain.exitCode == 0, "\(dryPlain.stdout) \(dryPlain.stderr)")
            #expect(dryPlain.stdout.contains("\"SOPInstanceUIDs\":2"), "\(dryPlain.stdout)")
            #expect(Self.entries(under: plain) == plainBefore, "the dry run wrote into the destination")
        }
    }

    @Test("dcm's Keyword=value among the places selects studies: px-sync SRC DEST PatientID=TRUST9")
    func keywordValueSelects() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-trust-keys-") { work in
            let source = work + "/source"
            try Self.write(study: 8, 1...2, into: source)
            try Self.write(study: 9, 1...3, into: source)
            let run = try await SyncTests.sync([source, "PatientID=TRUST9", work + "/dest"])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            #expect(run.json?["data"]?["found"] == .number("1"), "\(run.stdout)")
            #expect(try Self.uids(under: work + "/dest") == Set((1...3).map { Self.uid(9, $0) }))
            let unknown = try await SyncTests.sync([source, work + "/dest", "NoSuchKeyword=1"])
            #expect(unknown.exitCode == 64, "\(unknown.stdout) \(unknown.stderr)")
            let alone = try await SyncTests.sync([source, "StudyDate=20240315"])
            #expect(alone.exitCode == 64, "\(alone.stdout) \(alone.stderr)")
        }
    }
}
