import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Zips from other tools (issue 21): dicomsync 1.3.0's `<patient>/<study>.zip` read by px-ls and px-sync from
/// their entries' headers, px's own archives read back by dicomsync and Python's zipfile, and broken archives
/// that fail alone, each named, while the good ones sync. The corpus is pydicom's test files: explicit and
/// implicit little endian, big endian, deflated, JPEG, JPEG 2000, RLE, and ISO 2022, GB18030, Arabic and
/// Cyrillic character sets.
@Suite(
    .tags(.integration), .integrationTier, .timeLimit(.minutes(2)),
    .requires(pythonModules: ["pydicom", "dicomsync"]))
struct ForeignZipTests {
    /// pydicom's test files, each its own instance (no two share a SOP Instance UID); the three SC_rgb files
    /// are one series of one study.
    static let corpus = [
        "test_files/CT_small.dcm", "test_files/MR_small_bigendian.dcm", "test_files/image_dfl.dcm",
        "test_files/693_J2KI.dcm", "test_files/SC_rgb_rle.dcm", "test_files/SC_rgb_jpeg_dcmtk.dcm",
        "test_files/SC_rgb_dcmtk_+eb+cr.dcm", "test_files/rtdose_1frame.dcm", "test_files/test-SR.dcm",
        "charset_files/chrH31.dcm", "charset_files/chrX2.dcm", "charset_files/chrArab.dcm",
        "charset_files/chrRuss.dcm",
    ]

    static var dicomsync: String { TestSupport.venv + "/bin/dicomsync" }

    /// Copies the corpus into `flat` (one folder) and into `tree`, dicomsync's source layout
    /// `<patient>/<study>/` (one file of the three-instance study in a nested folder, and a DICOMDIR and a
    /// README beside its files: entries px skips). Prints `{StudyInstanceUID: [series, instances]}`.
    static func makeCorpus(flat: String, tree: String) async throws -> [String: [Int]] {
        let made = try await TestSupport.run(
            TestSupport.python,
            [
                "-c",
                """
                import json, os, shutil, sys, pydicom, pydicom.data
                data = os.path.dirname(pydicom.data.__file__)
                flat, tree, names = sys.argv[1], sys.argv[2], sys.argv[3:]
                os.makedirs(flat)
                studies, folders = {}, {}
                for name in names:
                    path = os.path.join(data, name)
                    ds = pydicom.dcmread(path, stop_before_pixels=True)
                    uid = str(ds.StudyInstanceUID)
                    if uid not in folders:
                        folders[uid] = os.path.join(tree, "patient%d" % len(folders), "study%d" % len(folders))
                    folder = folders[uid]
                    series = studies.setdefault(uid, {})
                    series.setdefault(str(ds.SeriesInstanceUID), []).append(name)
                    if len(series[str(ds.SeriesInstanceUID)]) == 2:
                        folder = os.path.join(folder, "nested")
                        shutil.copyfile(os.path.join(data, "test_files/dicomdirtests/DICOMDIR"), os.path.join(folders[uid], "DICOMDIR"))
                        with open(os.path.join(folders[uid], "README.txt"), "w") as f: f.write("not DICOM")
                    os.makedirs(folder, exist_ok=True)
                    shutil.copyfile(path, os.path.join(folder, os.path.basename(name)))
                    shutil.copyfile(path, os.path.join(flat, os.path.basename(name)))
                print(json.dumps({u: [len(s), sum(len(f) for f in s.values())] for u, s in studies.items()}))
                """,
                flat, tree,
            ] + corpus, separateErrorOutput: true)
        try #require(made.status == 0, "\(made.output) \(made.errorOutput)")
        let json = try JSONParser.parse(Array(made.output.utf8))
        var counts: [String: [Int]] = [:]
        for member in json.objectValue ?? [] {
            counts[member.key] = member.value.arrayValue?.compactMap { value -> Int? in
                if case .number(let number) = value { return Int(number) }
                return nil
            }
        }
        return counts
    }

    /// Runs dicomsync in `settings` (its settings file lives in the current folder), `commands` after `init`.
    static func dicomsync(in settings: String, _ commands: [[String]]) async throws -> String {
        try FileManager.default.createDirectory(atPath: settings, withIntermediateDirectories: true)
        let script = ([["init"]] + commands).map { arguments in
            ([dicomsync] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        }.joined(separator: " && ")
        let run = try await TestSupport.run("bash", ["-c", "cd '\(settings)' && " + script])
        try #require(run.status == 0, "dicomsync: \(run.output)")
        return run.output
    }

    /// The bytes of every file under `root` but px's own (the index, pypx's info files).
    static func contents(under root: String) throws -> [Data] {
        try SyncTests.files(under: root).map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    }

    /// The study-level rows of px-ls: StudyInstanceUID -> [series, instances].
    static func listedCounts(_ place: String) async throws -> (PeerHarness.Run, [String: [Int]]) {
        let ls = try await PeerHarness.runAsync(
            "px-ls",
            [
                place, "--format", "dicom-json", "--level", "study", "--QueryReturnTags",
                "StudyInstanceUID,NumberOfStudyRelatedSeries,NumberOfStudyRelatedInstances",
            ])
        var counts: [String: [Int]] = [:]
        for row in ls.json?["data"]?.arrayValue ?? [] {
            func value(_ key: String) -> String? {
                switch row[key]?["Value"]?.arrayValue?.first {
                case .number(let number)?: return number
                case .string(let text)?: return text
                default: return nil
                }
            }
            guard let uid = value("0020000D") else { continue }
            counts[uid] = [value("00201206"), value("00201208")].compactMap { $0.flatMap { Int($0) } }
        }
        return (ls, counts)
    }

    @Test("dicomsync's zips: px-ls counts them, px-sync extracts them byte for byte")
    func readsDicomsyncZips() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-foreign-zip-") { work in
            let expected = try await Self.makeCorpus(flat: work + "/flat", tree: work + "/tree")
            #expect(expected.count == 11 && expected.values.map { $0[1] }.reduce(0, +) == Self.corpus.count)
            _ = try await Self.dicomsync(
                in: work + "/settings",
                [
                    ["place", "add", "dicom_root", "src", work + "/tree"],
                    ["place", "add", "zipped_root", "zipped", work + "/zips"],
                    ["send", "src:*", "zipped"],
                ])
            let zips = SyncTests.files(under: work + "/zips").filter { $0.hasSuffix(".zip") }
            #expect(zips.count == expected.count, "\(zips)")

            let (ls, listed) = try await Self.listedCounts("zip:" + work + "/zips")
            #expect(ls.exitCode == 0, "\(ls.stdout) \(ls.stderr)")
            #expect(listed == expected, "\(ls.stdout)")

            let synced = try await PeerHarness.runAsync("px-sync", ["zip:" + work + "/zips", work + "/back"])
            #expect(synced.exitCode == 0, "\(synced.stdout) \(synced.stderr)")
            #expect(
                synced.json?["data"]?["instancesTransferred"] == .number(String(Self.corpus.count)), "\(synced.stdout)")
            // Every instance came out as dicomsync zipped it; the DICOMDIR and the README did not.
            let back = try Self.contents(under: work + "/back")
            let sources = try Self.contents(under: work + "/flat")
            #expect(back.count == sources.count)
            #expect(Set(back) == Set(sources))
            let again = try await PeerHarness.runAsync("px-sync", ["zip:" + work + "/zips", work + "/back"])
            #expect(again.json?["data"]?["alreadyPresent"] == .number(String(expected.count)), "\(again.stdout)")
        }
    }

    @Test("px's zips: dicomsync lists them, Python's zipfile and pydicom read every data set back equal")
    func dicomsyncReadsPxZips() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-foreign-zip-") { work in
            let expected = try await Self.makeCorpus(flat: work + "/flat", tree: work + "/tree")
            let archived = try await PeerHarness.runAsync("px-sync", [work + "/flat", "zip:" + work + "/zips"])
            #expect(archived.exitCode == 0, "\(archived.stdout) \(archived.stderr)")
            let found = try await Self.dicomsync(
                in: work + "/settings",
                [["place", "add", "zipped_root", "pxzips", work + "/zips"], ["find", "pxzips:*"]])
            #expect(found.contains("found \(expected.count):"), "\(found)")
            // What dicomsync would hand on (its zipped study is the file at <patient>/<study>.zip), read as
            // any unzipper does: every entry checks, every DICOM entry is an original, byte for byte and as a
            // data set.
            let read = try await TestSupport.run(
                TestSupport.python,
                [
                    "-c",
                    """
                    import glob, io, json, os, sys, zipfile, pydicom
                    flat, zips = sys.argv[1], sys.argv[2]
                    originals = {}
                    for path in glob.glob(flat + "/*.dcm"):
                        ds = pydicom.dcmread(path)
                        originals[str(ds.SOPInstanceUID)] = (open(path, "rb").read(), ds)
                    equal, studies = 0, 0
                    for path in sorted(glob.glob(zips + "/*/*.zip")):
                        studies += 1
                        with zipfile.ZipFile(path) as z:
                            assert z.testzip() is None, path
                            for name in z.namelist():
                                if name == "px-study.json":
                                    continue
                                data = z.read(name)
                                ds = pydicom.dcmread(io.BytesIO(data))
                                raw, original = originals[str(ds.SOPInstanceUID)]
                                assert data == raw and ds == original, name
                                equal += 1
                    print(json.dumps({"studies": studies, "equal": equal}))
                    """,
                    work + "/flat", work + "/zips",
                ], separateErrorOutput: true)
            #expect(read.status == 0, "\(read.output) \(read.errorOutput)")
            let summary = try JSONParser.parse(Array(read.output.utf8))
            #expect(summary["studies"] == .number(String(expected.count)), "\(read.output)")
            #expect(summary["equal"] == .number(String(Self.corpus.count)), "\(read.output)")
        }
    }

    @Test("broken archives fail alone, each by name; the good one syncs; the exit code says so")
    func brokenArchivesFailAlone() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-foreign-zip-") { work in
            let root = work + "/zips"
            // A good zip of two studies (entries in a folder), a truncated zip, a text file named .zip, a zip
            // whose entry would leave the folder, and a zip with a decompression bomb beside a DICOM entry.
            let made = try await TestSupport.run(
                TestSupport.python,
                [
                    "-c",
                    """
                    import os, sys, zipfile, pydicom.data
                    data = os.path.dirname(pydicom.data.__file__)
                    root = sys.argv[1]
                    for folder in ("good", "text", "hostile"):
                        os.makedirs(os.path.join(root, folder))
                    ct = open(os.path.join(data, "test_files/CT_small.dcm"), "rb").read()
                    x2 = open(os.path.join(data, "charset_files/chrX2.dcm"), "rb").read()
                    mr = open(os.path.join(data, "test_files/MR_small.dcm"), "rb").read()
                    with zipfile.ZipFile(os.path.join(root, "good/study.zip"), "w", zipfile.ZIP_DEFLATED) as z:
                        z.writestr("images/ct.dcm", ct)
                        z.writestr("images/x2.dcm", x2)
                    with zipfile.ZipFile(os.path.join(root, "whole.tmp"), "w", zipfile.ZIP_DEFLATED) as z:
                        z.writestr("mr.dcm", mr)
                    whole = open(os.path.join(root, "whole.tmp"), "rb").read()
                    os.remove(os.path.join(root, "whole.tmp"))
                    open(os.path.join(root, "truncated.zip"), "wb").write(whole[: len(whole) // 2])
                    open(os.path.join(root, "text/notazip.zip"), "w").write("this is not a zip archive\\n")
                    with zipfile.ZipFile(os.path.join(root, "hostile/slip.zip"), "w") as z:
                        z.writestr("../../escaped.dcm", mr)
                    with zipfile.ZipFile(os.path.join(root, "hostile/bomb.zip"), "w", zipfile.ZIP_DEFLATED) as z:
                        z.writestr("mr.dcm", mr)
                        z.writestr("zeros.dcm", bytes(64 << 20))
                    """,
                    root,
                ], separateErrorOutput: true)
            try #require(made.status == 0, "\(made.output) \(made.errorOutput)")
            let bad = ["truncated.zip", "text/notazip.zip", "hostile/slip.zip", "hostile/bomb.zip"]

            let (ls, listed) = try await Self.listedCounts("zip:" + root)
            #expect(ls.exitCode != 0, "\(ls.stdout)")
            #expect(listed.count == 2 && listed.values.allSatisfy { $0 == [1, 1] }, "\(ls.stdout)")
            let lsError = ls.json?["error"]?["message"]?.stringValue ?? ""
            for name in bad { #expect(lsError.contains(name), "\(name): \(ls.stdout)") }

            let synced = try await PeerHarness.runAsync("px-sync", ["zip:" + root, work + "/back"])
            #expect(synced.exitCode != 0, "\(synced.stdout)")
            #expect(synced.json?["data"]?["instancesTransferred"] == .number("2"), "\(synced.stdout)")
            var failed: [String: String] = [:]
            for study in synced.json?["data"]?["studies"]?.arrayValue ?? [] where study["result"] == .string("failed") {
                failed[study["StudyInstanceUID"]?.stringValue ?? ""] = study["error"]?["message"]?.stringValue
            }
            #expect(Set(failed.keys) == Set(bad), "\(synced.stdout)")
            #expect(failed["truncated.zip"]?.contains("zip truncated") == true, "\(failed)")
            #expect(failed["hostile/slip.zip"]?.contains("zip unsafeName") == true, "\(failed)")
            #expect(failed["hostile/bomb.zip"]?.contains("zip tooLarge") == true, "\(failed)")
            let back = try Self.contents(under: work + "/back")
            #expect(back.count == 2)
            // Nothing was written outside the destination.
            #expect(!FileManager.default.fileExists(atPath: work + "/escaped.dcm"))
            #expect(!FileManager.default.fileExists(atPath: root + "/escaped.dcm"))
        }
    }

    @Test("a foreign zip's bad entries are named, its good ones transferred, and the study fails (exit 1)")
    func badEntriesOfAForeignZip() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-foreign-zip-") { work in
            let root = work + "/zips"
            // One study's three instances (pydicom's SC_rgb series), a README (skipped quietly), a .dcm cut
            // short inside its header, and a stored copy of an instance whose bytes no longer match its CRC-32.
            let made = try await TestSupport.run(
                TestSupport.python,
                [
                    "-c",
                    """
                    import os, sys, zipfile, pydicom.data
                    data = os.path.join(os.path.dirname(pydicom.data.__file__), "test_files")
                    root = sys.argv[1]
                    os.makedirs(os.path.join(root, "patient"))
                    path = os.path.join(root, "patient/study.zip")
                    names = ["SC_rgb_rle.dcm", "SC_rgb_jpeg_dcmtk.dcm", "SC_rgb_dcmtk_+eb+cr.dcm"]
                    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                        for name in names:
                            z.writestr("study/" + name, open(os.path.join(data, name), "rb").read())
                        z.writestr("study/README.txt", "not DICOM")
                        z.writestr("study/cut.dcm", open(os.path.join(data, "CT_small.dcm"), "rb").read()[:300])
                        z.writestr("study/crc.dcm", open(os.path.join(data, "SC_rgb_rle.dcm"), "rb").read(),
                                   zipfile.ZIP_STORED)
                    with zipfile.ZipFile(path) as z:
                        info = z.getinfo("study/crc.dcm")
                    raw = bytearray(open(path, "rb").read())
                    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
                    raw[start + info.file_size - 1] ^= 0xFF
                    open(path, "wb").write(bytes(raw))
                    """,
                    root,
                ], separateErrorOutput: true)
            try #require(made.status == 0, "\(made.output) \(made.errorOutput)")

            let synced = try await PeerHarness.runAsync("px-sync", ["zip:" + root, work + "/back"])
            #expect(synced.exitCode == 1, "\(synced.stdout) \(synced.stderr)")
            #expect(synced.json?["data"]?["instancesTransferred"] == .number("3"), "\(synced.stdout)")
            let studies = synced.json?["data"]?["studies"]?.arrayValue ?? []
            #expect(studies.count == 1, "\(synced.stdout)")
            let study = studies.first
            #expect(study?["result"] == .string("failed"), "\(synced.stdout)")
            let message = study?["error"]?["message"]?.stringValue ?? ""
            #expect(message.contains("study/cut.dcm") && message.contains("not a readable DICOM file"), "\(message)")
            #expect(message.contains("study/crc.dcm") && message.contains("CRC-32"), "\(message)")
            #expect(!message.contains("README"), "\(message)")
            #expect(try Self.contents(under: work + "/back").count == 3)
            // A second run has nothing to transfer (every readable UID is there) and still fails, naming the
            // entry it cannot read: never a Success while the source holds what px could not move.
            let again = try await PeerHarness.runAsync("px-sync", ["zip:" + root, work + "/back"])
            #expect(again.exitCode == 1, "\(again.stdout) \(again.stderr)")
            #expect(again.json?["data"]?["instancesTransferred"] == .number("0"), "\(again.stdout)")
            let second = again.json?["data"]?["studies"]?.arrayValue?.first
            #expect(second?["result"] == .string("failed"), "\(again.stdout)")
            #expect(second?["error"]?["message"]?.stringValue?.contains("study/cut.dcm") == true, "\(again.stdout)")
        }
    }
}
