import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-get --parallel against the suite's Orthanc (WADO-RS): the same files, byte for byte, whatever
/// the number of requests in flight; a study alone is split into its series.
extension DICOMWebCommandTests {
    /// Every file under `root` (relative path → bytes), temporary files included.
    static func tree(_ root: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? [] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + name, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            let bytes = try #require(FileManager.default.contents(atPath: root + "/" + name))
            out[name] = bytes
        }
        return out
    }

    /// Writes a study of two series (three instances each, new UIDs) made from one corpus file, for
    /// the study-split path; returns the study's UID and its files.
    static func twoSeriesStudy(_ context: OrthancCommandPeer.Context, from file: String) async throws -> (
        String, [String]
    ) {
        let folder = context.work + "/two-series"
        let script = #"""
            import sys, pydicom
            from pydicom.uid import generate_uid
            source, folder = sys.argv[1], sys.argv[2]
            study = generate_uid(entropy_srcs=["px-web2-parallel-study"])
            print(study)
            for s in range(2):
                series = generate_uid(entropy_srcs=["px-web2-parallel-series", str(s)])
                for i in range(3):
                    ds = pydicom.dcmread(source)
                    sop = generate_uid(entropy_srcs=["px-web2-parallel", str(s), str(i)])
                    ds.StudyInstanceUID, ds.SeriesInstanceUID, ds.SOPInstanceUID = study, series, sop
                    ds.file_meta.MediaStorageSOPInstanceUID = sop
                    ds.SeriesNumber, ds.InstanceNumber = s + 1, i + 1
                    path = f"{folder}/s{s}-{i}.dcm"
                    ds.save_as(path, enforce_file_format=True)
                    print(path)
            """#
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let made = try await PeerHarness.runAsync(TestSupport.python, ["-c", script, file, folder])
        try #require(made.exitCode == 0, "\(made.stdout) \(made.stderr)")
        let lines = made.stdout.split(separator: "\n").map(String.init)
        return (try #require(lines.first), Array(lines.dropFirst()))
    }

    /// Deletes a study from the suite's Orthanc (its REST API: /tools/lookup, then DELETE /studies/ID).
    static func deleteStudy(_ uid: String, context: OrthancCommandPeer.Context) async {
        let script = #"""
            import json, sys, urllib.request
            base, uid = sys.argv[1], sys.argv[2]
            found = json.load(urllib.request.urlopen(urllib.request.Request(base + "/tools/lookup", data=uid.encode())))
            for item in found:
                if item["Type"] == "Study":
                    urllib.request.urlopen(urllib.request.Request(base + "/studies/" + item["ID"], method="DELETE"))
            """#
        do {
            let done = try await PeerHarness.runAsync(
                TestSupport.python, ["-c", script, "http://127.0.0.1:\(context.httpPort)", uid])
            #expect(done.exitCode == 0, "could not delete study \(uid) from Orthanc: \(done.stderr)")
        } catch {
            Issue.record("could not delete study \(uid) from Orthanc: \(error)")
        }
    }

    /// px-get of `study` with --parallel 1 and 4: the files each placed.
    static func getSplitStudy(_ context: OrthancCommandPeer.Context, _ study: String) async throws
        -> [Int: [String: Data]]
    {
        var split: [Int: [String: Data]] = [:]
        for parallel in [1, 4] {
            let root = context.work + "/parallel-study-\(parallel)"
            let run = try await PeerHarness.runAsync(
                "px-get", [Self.url(context), "--StudyInstanceUID", study, "-d", root, "--parallel", String(parallel)])
            #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
            let get = run.json?["data"]?["gets"]?.arrayValue?.first
            #expect(get?["completed"] == .number("6"), "\(run.stdout)")
            // WADO-RS requests made: the study (1), or its two series.
            #expect(get?["responses"] == .number(parallel == 1 ? "1" : "2"), "\(run.stdout)")
            split[parallel] = try Self.tree(root)
        }
        #expect(split[1]?.count == 6)
        return split
    }

    @Test(
        "px-get --parallel 4 retrieves the same files, byte for byte, as --parallel 1 (every study; one study of two series)"
    )
    func parallelEqualsSequential() async throws {
        let context = try Self.context()
        let url = Self.url(context)
        let found = try await PeerHarness.runAsync("px-find", [url, "--level", "study"])
        #expect(found.exitCode == 0, "\(found.stdout) \(found.stderr)")
        var runs: [Int: PeerHarness.Run] = [:]
        var trees: [Int: [String: Data]] = [:]
        for parallel in [1, 4] {
            let root = context.work + "/parallel-\(parallel)"
            let run = try await PeerHarness.runAsync(
                "px-get", [url, "-d", root, "--parallel", String(parallel)], stdin: found.stdout)
            #expect(run.exitCode == 0, "--parallel \(parallel): \(run.stdout) \(run.stderr)")
            runs[parallel] = run
            trees[parallel] = try Self.tree(root)
            #expect(run.json?["data"]?["instances"] == .number(String(trees[parallel]?.count ?? -1)), "\(run.stdout)")
        }
        // Other tests of the suite may have stored more (STOW-RS): the loaded corpus is a part.
        let sequential = try #require(trees[1])
        #expect(sequential.count >= context.corpus.dataSets.count, "\(sequential.keys.sorted())")
        #expect(trees[4] == sequential, "--parallel 4 placed other files than --parallel 1")
        // One entry per target, in the targets' order, whatever finished first.
        func studies(_ run: PeerHarness.Run?) -> [String] {
            (run?.json?["data"]?["gets"]?.arrayValue ?? []).compactMap { $0["StudyInstanceUID"]?.stringValue }
        }
        #expect(studies(runs[4]) == studies(runs[1]))
        #expect(Set(studies(runs[1])).isSuperset(of: context.corpus.studies.keys))

        // A study alone: with --parallel 4 it is fetched as its two series, side by side.
        let source = try #require(context.corpus.files.first)
        let (study, files) = try await Self.twoSeriesStudy(context, from: source)
        let push = try await PeerHarness.runAsync("px-push", [url] + files)
        try #require(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
        // The study goes again when the test ends: the suite's other tests count Orthanc's studies.
        let outcome: Result<[Int: [String: Data]], any Error>
        do {
            outcome = .success(try await Self.getSplitStudy(context, study))
        } catch {
            outcome = .failure(error)
        }
        await Self.deleteStudy(study, context: context)
        let split = try outcome.get()
        #expect(split[4] == split[1], "the study split into series placed other files")
    }

    @Test("px-get --parallel: 0, 33 and a non-number are usage errors (exit 64); with a DIMSE peer too")
    func parallelUsage() async throws {
        let context = try Self.context()
        for (peer, value) in [
            (Self.url(context), "0"), (Self.url(context), "33"), (Self.url(context), "x"), (context.peer, "2"),
        ] {
            let run = try await PeerHarness.runAsync(
                "px-get", [peer, "--StudyInstanceUID", "1.2.3", "-d", context.work + "/usage", "--parallel", value])
            #expect(run.exitCode == 64, "\(peer) --parallel \(value): \(run.stdout) \(run.stderr)")
        }
        #expect(Self.files(under: context.work + "/usage").isEmpty)
    }

    @Test("px-get --parallel 4 from a server that stops mid-multipart on every request: error, no partial file")
    func parallelTruncated() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "parallel-truncating")
        defer { server.kill() }
        let root = context.work + "/parallel-truncated"
        let targets = (1...6).map { "{\"StudyInstanceUID\": {\"value\": \"1.2.3.\($0)\"}}" }
        let run = try await PeerHarness.runAsync(
            "px-get", ["http://127.0.0.1:\(port)/eof", "-d", root, "--parallel", "4"],
            stdin: "{\"status\": \"success\", \"data\": [\(targets.joined(separator: ","))]}")
        #expect(run.exitCode != 0, "\(run.stdout)")
        #expect(run.json?["status"]?.stringValue == "error", "\(run.stdout)")
        let left = Self.files(under: root)
        #expect(!left.contains { $0.contains("px-web-") }, "a temporary file was left: \(left)")
        for name in left {
            #expect(
                FileManager.default.contents(atPath: root + "/" + name) == FileManager.default.contents(atPath: file),
                "\(name) is not a complete first part")
        }
        #expect(!FileManager.default.fileExists(atPath: root + "/.px-incoming"))
    }
}
