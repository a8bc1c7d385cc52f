import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Issue 32, outcomes lost in batches: px-get and px-move go on after a study that fails and list every
/// target with its outcome (exit 1), and px-find's answer of no match piped into them is nothing to do
/// (exit 0, zero counts), against scripts/pynetdicom-qr-scp.py, which answers the retrieve of one study with
/// a failure status (`--study-status`).
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct RetrieveOutcomesTests {
    /// The corpus of make-qr-corpus.py, the StudyInstanceUIDs in order, and the SOP Instance UIDs by study.
    static func corpus(_ work: String) async throws -> (
        folder: String, studies: [String], instances: [String: Set<String>]
    ) {
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        var studies: [String] = []
        var instances: [String: Set<String>] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where file.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: folder + "/" + file).dataSet
            let study = try #require(ds.string(.studyInstanceUID))
            if !studies.contains(study) { studies.append(study) }
            instances[study, default: []].insert(try #require(ds.string(.sopInstanceUID)))
        }
        return (folder, studies, instances)
    }

    /// Checks the targets of a run whose first study the peer failed with 0xC000 and whose others it served.
    static func expectFirstFailedOthersServed(
        _ run: PeerHarness.Run, studies: [String], instances: [String: Set<String>], list: String, what: String
    ) throws {
        #expect(run.exitCode == 1, "\(what): \(run.stdout) \(run.stderr)")
        let json = try #require(run.json, "\(what): \(run.stdout) \(run.stderr)")
        #expect(json["status"]?.stringValue == "error")
        #expect(json["error"]?["code"]?.stringValue == "dimseFailure", "\(what): \(run.stdout)")
        let data = try #require(json["data"])
        let targets = try #require(data["targets"]?.arrayValue, "\(what): \(run.stdout)")
        #expect(targets.map { $0["StudyInstanceUID"]?.stringValue ?? "" } == studies, "\(what): \(run.stdout)")
        let failed = try #require(targets.first)
        #expect(failed["status"]?.stringValue == "failed", "\(what): \(failed)")
        #expect(failed["error"]?["code"]?.stringValue == "dimseFailure", "\(what): \(failed)")
        #expect(failed["error"]?["details"]?["status"]?.stringValue == "0xc000", "\(what): \(failed)")
        for (target, study) in zip(targets.dropFirst(), studies.dropFirst()) {
            #expect(target["status"]?.stringValue == "success", "\(what): \(target)")
            #expect(target["error"] == .null, "\(what): \(target)")
            #expect(
                target["completed"] == .number(String(instances[study]?.count ?? -1)), "\(what): \(target)")
        }
        // Every study was retrieved, the failed one first: the run went on after it.
        #expect(data[list]?.arrayValue?.count == studies.count, "\(what): \(run.stdout)")
        let served = studies.dropFirst().reduce(0) { $0 + (instances[$1]?.count ?? 0) }
        #expect(data["completed"] == .number(String(served)), "\(what): \(run.stdout)")
        // The peer announced one sub-operation for the failed study and counts it failed: once.
        #expect(failed["failed"] == .number("1"), "\(what): \(failed)")
        #expect(data["failed"] == .number("1"), "\(what): \(run.stdout)")
    }

    @Test(arguments: ["native", "dcmtk"]) func getGoesOnAfterAFailedStudy(backend: String) async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-outcomes-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        try #require(studies.count == 5)
        let bad = studies[0]
        let (scp, port) = try await RetrieveSessionTests.startQR(
            folder, log: work + "/qr.log", extra: ["--study-status", "\(bad)=0xC000"])
        defer { scp.kill() }
        let get = try await PeerHarness.run(
            "px-get",
            ["PYQR@127.0.0.1:\(port)"] + studies.flatMap { ["--StudyInstanceUID", $0] }
                + ["-d", work + "/got", "--backend", backend])
        try Self.expectFirstFailedOthersServed(
            get, studies: studies, instances: instances, list: "gets", what: backend)
        let expected = studies.dropFirst().reduce(into: Set<String>()) { $0.formUnion(instances[$1] ?? []) }
        #expect(try RetrieveSessionTests.stored(work + "/got") == expected)
        #expect(RetrieveSessionTests.count(scp, "refused") == 1, "\(scp.log)")
        #expect(RetrieveSessionTests.count(scp, "retrieve") == 5, "\(scp.log)")
    }

    @Test func moveGoesOnAfterAFailedStudy() async throws {
        guard PeerHarness.requireTools(["storescp"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-outcomes-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        try #require(studies.count == 5)
        let storePort = try TestSupport.freePort()
        try FileManager.default.createDirectory(atPath: work + "/moved", withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", "DEST", "-od", work + "/moved", String(storePort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: storePort, aeTitle: "DEST")
        let (scp, port) = try await RetrieveSessionTests.startQR(
            folder, log: work + "/qr.log",
            extra: ["--dest", "DEST=127.0.0.1:\(storePort)", "--study-status", "\(studies[0])=0xC000"])
        defer { scp.kill() }
        for backend in ["native", "dcmtk"] {
            let move = try await PeerHarness.run(
                "px-move",
                ["PYQR@127.0.0.1:\(port)", "--destination", "DEST"] + studies.flatMap { ["--StudyInstanceUID", $0] }
                    + ["--backend", backend])
            try Self.expectFirstFailedOthersServed(
                move, studies: studies, instances: instances, list: "moves", what: backend)
        }
        let expected = studies.dropFirst().reduce(into: Set<String>()) { $0.formUnion(instances[$1] ?? []) }
        #expect(try RetrieveSessionTests.stored(work + "/moved") == expected)
    }

    /// A C-STORE sub-operation px refuses (its Affected SOP Instance UID is not the data set's: 0xA900) is one
    /// failed sub-operation, counted once though the peer counts it and names it too, and the failure names
    /// the instance, the status px answered and why, in the JSON (not only in a log line).
    @Test func aRefusedSubOperationIsCountedOnce() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-outcomes-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        let study = try #require(studies.first { instances[$0]?.count == 2 })
        let refused = try #require(instances[study]?.sorted().first)
        let claimed = refused + ".9"
        let (scp, port) = try await RetrieveSessionTests.startQR(
            folder, log: work + "/qr.log", extra: ["--claim-other-uid", refused])
        defer { scp.kill() }
        let get = try await PeerHarness.run(
            "px-get",
            ["PYQR@127.0.0.1:\(port)", "--StudyInstanceUID", study, "-d", work + "/got", "--backend", "native"])
        #expect(get.exitCode == 1, "\(get.stdout) \(get.stderr)")
        let json = try #require(get.json, "\(get.stdout) \(get.stderr)")
        let error = try #require(json["error"])
        #expect(error["code"]?.stringValue == "partialFailure", "\(get.stdout)")
        let message = error["message"]?.stringValue ?? ""
        #expect(message.hasPrefix("C-GET: 1 of 2 sub-operations failed"), "\(message)")
        #expect(message.contains(claimed) && message.contains("0xa900"), "\(message)")
        let data = try #require(json["data"])
        #expect(data["completed"] == .number("1") && data["failed"] == .number("1"), "\(get.stdout)")
        let result = try #require(data["gets"]?.arrayValue?.first)
        #expect(result["failed"] == .number("1"), "\(result)")
        let failure = try #require(result["storeFailures"]?.arrayValue?.first, "\(result)")
        #expect(failure["SOPInstanceUID"]?.stringValue == claimed, "\(failure)")
        #expect(failure["dimseStatus"]?["code"]?.stringValue == "0xa900", "\(failure)")
        #expect(failure["error"]?["message"]?.stringValue?.contains(refused) == true, "\(failure)")
        let target = try #require(data["targets"]?.arrayValue?.first)
        #expect(target["status"]?.stringValue == "failed" && target["failed"] == .number("1"), "\(target)")
        #expect(target["error"]?["details"]?["notStored"]?.stringValue?.contains(claimed) == true, "\(target)")
        #expect(try RetrieveSessionTests.stored(work + "/got") == (instances[study] ?? []).subtracting([refused]))
    }

    /// px-find's answer of no match, in each of its JSON formats, piped into px-get and px-move: exit 0, the
    /// normal envelope, zero counts, no target, and no retrieve sent.
    @Test func noMatchPipedIsNothingToDo() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-outcomes-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await Self.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        let peer = "PYQR@127.0.0.1:\(port)"
        var inputs: [(String, String)] = [("bare []", "[]\n")]
        for format in ["pypx", "dicom-json", "ndjson"] {
            let find = try await PeerHarness.run(
                "px-find", [peer, "--PatientID", "NOBODY", "--format", format, "--backend", "native"])
            #expect(find.exitCode == 0, "\(format): \(find.stdout) \(find.stderr)")
            inputs.append((format, find.stdout))
        }
        for (name, stdin) in inputs {
            for backend in ["native", "dcmtk"] {
                let get = try await PeerHarness.run(
                    "px-get", [peer, "-d", work + "/got", "--backend", backend], stdin: stdin)
                #expect(get.exitCode == 0, "\(name) \(backend): \(stdin) -> \(get.stdout) \(get.stderr)")
                #expect(get.json?["status"]?.stringValue == "success", "\(name) \(backend): \(get.stdout)")
                let data = get.json?["data"]
                #expect(data?["gets"]?.arrayValue?.isEmpty == true, "\(name): \(get.stdout)")
                #expect(data?["targets"]?.arrayValue?.isEmpty == true, "\(name): \(get.stdout)")
                #expect(data?["completed"] == .number("0") && data?["failed"] == .number("0"))
                #expect(data?["instances"] == .number("0"))
                let move = try await PeerHarness.run(
                    "px-move", [peer, "--destination", "DEST", "--backend", backend], stdin: stdin)
                #expect(move.exitCode == 0, "\(name) \(backend): \(stdin) -> \(move.stdout) \(move.stderr)")
                #expect(move.json?["data"]?["moves"]?.arrayValue?.isEmpty == true, "\(name): \(move.stdout)")
                #expect(move.json?["data"]?["failed"] == .number("0"))
            }
        }
        #expect(RetrieveSessionTests.count(scp, "retrieve") == 0, "\(scp.log)")
        // Text that is not px-find's answer of no match is still a usage error.
        let empty = try await PeerHarness.run("px-get", [peer, "-d", work + "/got"], stdin: "{\"foo\": 1}\n")
        #expect(empty.exitCode == 64, "\(empty.stdout)")
    }
}
