import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Storage commitment (PS3.4 Annex J, Push Model) between px and Orthanc, which implements both roles: px-push
/// `--commit` as SCU with Orthanc as SCP (Orthanc sends its report on a new association, to the AE its
/// DicomModalities name), and px-listen as SCP with Orthanc as SCU (driven by its REST API,
/// `POST /modalities/{id}/storage-commitment`, report in `GET /storage-commitment/{transaction}`).
///
/// Orthanc knows px's AE `PXLISTEN` at the suite's listen port (``OrthancCommandPeer``): px-push listens for the
/// report there under that AE title, and px-listen answers there.
@Suite(
    "storage commitment against Orthanc", .tags(.integration), .integrationTier, .serialized, OrthancCommandPeer(),
    .timeLimit(.minutes(10)))
struct StorageCommitmentOrthancTests {
    static func context() throws -> OrthancCommandPeer.Context {
        try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
    }

    /// Copies of `count` corpus files with new SOP Instance UIDs, so that Orthanc holds them only once px-push
    /// has stored them.
    static func freshInstances(_ context: OrthancCommandPeer.Context, count: Int, into folder: String) throws
        -> [(path: String, sopClassUID: String, sopInstanceUID: String)]
    {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var made: [(String, String, String)] = []
        for (index, source) in context.corpus.files.prefix(count).enumerated() {
            var file = try Part10File(contentsOf: source)
            let uid = "2.25.\(UInt64.random(in: 1...UInt64.max))\(index)"
            file.dataSet.set(.sopInstanceUID, vr: .UI, string: uid)
            file.meta.set(.mediaStorageSOPInstanceUID, vr: .UI, string: uid)
            let path = folder + "/\(index).dcm"
            try file.write(to: path)
            made.append((path, file.dataSet.string(.sopClassUID) ?? "", uid))
        }
        return made
    }

    @Test("px-push --commit of 3 new instances to Orthanc: all 3 committed on a new association, exit 0")
    func pushCommit() async throws {
        let context = try Self.context()
        let files = try Self.freshInstances(context, count: 3, into: context.work + "/commit-push")
        let run = try await PeerHarness.runAsync(
            "px-push",
            [
                context.peer, "--aet", OrthancCommandPeer.listenAETitle, "--commit", "--commit-port",
                String(context.listenPort), "--commit-timeout", "60",
            ] + files.map(\.path))
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["backend"]?.stringValue == "native", "--commit makes auto run the native backend")
        let data = try #require(run.json?["data"], "px-push printed no JSON: \(run.stdout)")
        #expect(data["completed"] == .number("3"), "\(run.stdout)")
        let commitment = try #require(data["commitment"], "no commitment in \(run.stdout)")
        #expect(commitment["transactionUID"]?.stringValue?.hasPrefix("2.25.") == true)
        let committed = commitment["committed"]?.arrayValue ?? []
        #expect(
            Set(committed.compactMap { $0["sopInstanceUID"]?.stringValue }) == Set(files.map(\.sopInstanceUID)),
            "\(run.stdout)")
        #expect(
            committed.allSatisfy { entry in
                files.contains {
                    $0.sopInstanceUID == entry["sopInstanceUID"]?.stringValue
                        && $0.sopClassUID == entry["sopClassUID"]?.stringValue
                }
            })
        #expect(commitment["failed"]?.arrayValue?.isEmpty == true, "\(run.stdout)")
        // Orthanc reports on an association of its own (its SCU proposes no role selection back).
        #expect(commitment["sameAssociation"] == .bool(false))
    }

    @Test("px-sync FOLDER Orthanc --commit: the 3 instances it stored committed, the summary says so, exit 0")
    func syncCommit() async throws {
        let context = try Self.context()
        let files = try Self.freshInstances(context, count: 3, into: context.work + "/commit-sync")
        let run = try await PeerHarness.runAsync(
            "px-sync",
            [
                context.work + "/commit-sync", context.peer, "--aet", OrthancCommandPeer.listenAETitle, "--commit",
                "--commit-port", String(context.listenPort), "--commit-timeout", "60",
            ])
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        let summary = try #require(run.json?["data"], "no summary in \(run.stdout)")
        #expect(summary["instancesTransferred"] == .number("3"), "\(run.stdout)")
        let commitments = summary["commitment"]?.arrayValue ?? []
        #expect(commitments.count == 1, "\(run.stdout.split(separator: "\n").last ?? "")")
        let report = commitments.first?["report"]
        #expect(report?["requested"] == .number("3"), "\(run.stdout)")
        #expect(
            Set((report?["committed"]?.arrayValue ?? []).compactMap { $0["sopInstanceUID"]?.stringValue })
                == Set(files.map(\.sopInstanceUID)), "\(run.stdout)")
        #expect(report?["failed"]?.arrayValue?.isEmpty == true)

        // A second run stores nothing (all present): nothing to commit, no commitment member, exit 0.
        let again = try await PeerHarness.runAsync(
            "px-sync",
            [
                context.work + "/commit-sync", context.peer, "--aet", OrthancCommandPeer.listenAETitle, "--commit",
                "--commit-port", String(context.listenPort),
            ])
        #expect(again.exitCode == 0, "\(again.stdout) \(again.stderr)")
        #expect(!again.stdout.contains("\"commitment\""), "\(again.stdout)")
    }

    @Test("px-push --commit without a port to listen on: a storage commitment timeout, exit 75")
    func pushCommitTimeout() async throws {
        let context = try Self.context()
        let files = try Self.freshInstances(context, count: 1, into: context.work + "/commit-timeout")
        // A config without a local port: px listens nowhere, and Orthanc's report (sent to PXLISTEN's port,
        // where nothing listens now) never reaches it.
        let config = context.work + "/commit-timeout/config.toml"
        try Data("[local]\nae_title = \"PXLISTEN\"\n".utf8).write(to: URL(fileURLWithPath: config))
        let run = try await PeerHarness.runAsync(
            "px-push",
            [context.peer, "--aet", OrthancCommandPeer.listenAETitle, "--commit", "--commit-timeout", "2"]
                + files.map(\.path),
            environment: ["PX_CONFIG": config])
        #expect(run.exitCode == 75, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["error"]?["code"]?.stringValue == "timeout", "\(run.stdout)")
        #expect(run.json?["error"]?["details"]?["timeout"]?.stringValue == "storage commitment", "\(run.stdout)")
        #expect(run.json?["data"]?["completed"] == .number("1"))
    }

    @Test("px-push --commit --backend dcmtk is a usage error before anything is sent")
    func pushCommitDCMTK() async throws {
        let context = try Self.context()
        let run = try await PeerHarness.runAsync(
            "px-push", ["--backend", "dcmtk", context.peer, "--commit", context.corpus.files[0]])
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["error"]?["code"]?.stringValue == "usage")
        #expect(run.json?["error"]?["message"]?.stringValue?.contains("unsupportedByBackend") == true)
    }

    @Test("Orthanc asks px-listen to commit 2 instances it holds and 1 it does not: 2 success, 1 failure 0x0112")
    func listenCommit() async throws {
        let context = try Self.context()
        let received = context.work + "/commit-listen"
        let events = context.work + "/commit-listen.ndjson"
        let listener = try PeerProcess(
            TestSupport.binDirectory + "/px-listen",
            [
                "--backend", "native", "--port", String(context.listenPort), "--aet", OrthancCommandPeer.listenAETitle,
                "-d", received, "--commit-destination",
                "\(OrthancCommandPeer.orthancAETitle)=127.0.0.1:\(context.dicomPort)",
            ],
            logFile: events, errorFile: events + ".stderr")
        do {
            let ready = try await TestSupport.waitForEcho(
                port: context.listenPort, aeTitle: OrthancCommandPeer.listenAETitle)
            try #require(ready, "px-listen did not answer C-ECHO on port \(context.listenPort)")
            let held = Array(context.corpus.files.prefix(2))
            let push = try await PeerHarness.runAsync(
                "px-push", ["\(OrthancCommandPeer.listenAETitle)@127.0.0.1:\(context.listenPort)"] + held)
            try #require(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
            let heldUIDs = try held.map { try Part10File(contentsOf: $0).dataSet }
            let missing = try Part10File(contentsOf: context.corpus.files[2]).dataSet
            let asked = (heldUIDs + [missing]).map {
                ($0.string(.sopClassUID) ?? "", $0.string(.sopInstanceUID) ?? "")
            }
            let report = try await Self.orthancCommitment(context: context, asking: asked)
            #expect(report.status == "Failure", "\(report.raw)")
            #expect(Set(report.success) == Set(heldUIDs.compactMap { $0.string(.sopInstanceUID) }), "\(report.raw)")
            #expect(report.failures.map(\.uid) == [missing.string(.sopInstanceUID) ?? "?"], "\(report.raw)")
            #expect(report.failures.first?.reason == 0x0112, "\(report.raw)")

            // px-listen reported what it answered, and that the report reached Orthanc.
            let reported = await TestSupport.poll(seconds: 20) {
                Self.events(in: events, "storageCommitmentReported").count >= 1
            }
            #expect(reported, "no storageCommitmentReported event")
        } catch {
            await listener.stop(signal: SIGINT)
            throw error
        }
        await listener.stop(signal: SIGINT)
        let answered = Self.events(in: events, "storageCommitment")
        #expect(answered.count == 1)
        #expect(answered.first?["callingAETitle"]?.stringValue == OrthancCommandPeer.orthancAETitle)
        #expect(answered.first?["committed"]?.arrayValue?.count == 2)
        #expect(answered.first?["failed"]?.arrayValue?.first?["failureReason"] == .number("274"))
        let delivered = Self.events(in: events, "storageCommitmentReported")
        #expect(delivered.first?["dimseStatus"]?["code"]?.stringValue == "0x0000", "\(delivered)")
        #expect(delivered.first?["error"] == .null)
    }

    @Test("px-push --commit to px-listen: the report comes on the storage association (SCP role), both committed")
    func pushCommitToListen() async throws {
        let context = try Self.context()
        let received = context.work + "/commit-px"
        let events = context.work + "/commit-px.ndjson"
        let listener = try PeerProcess(
            TestSupport.binDirectory + "/px-listen",
            [
                "--backend", "native", "--port", String(context.listenPort), "--aet",
                OrthancCommandPeer.listenAETitle, "-d", received,
            ],
            logFile: events, errorFile: events + ".stderr")
        let files = try Self.freshInstances(context, count: 2, into: context.work + "/commit-px-files")
        let run: PeerHarness.Run
        do {
            let ready = try await TestSupport.waitForEcho(
                port: context.listenPort, aeTitle: OrthancCommandPeer.listenAETitle)
            try #require(ready, "px-listen did not answer C-ECHO on port \(context.listenPort)")
            run = try await PeerHarness.runAsync(
                "px-push",
                ["\(OrthancCommandPeer.listenAETitle)@127.0.0.1:\(context.listenPort)", "--commit"]
                    + files.map(\.path))
        } catch {
            await listener.stop(signal: SIGINT)
            throw error
        }
        await listener.stop(signal: SIGINT)
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
        let commitment = try #require(run.json?["data"]?["commitment"], "no commitment in \(run.stdout)")
        #expect(commitment["sameAssociation"] == .bool(true), "\(run.stdout)")
        #expect(run.json?["data"]?["associations"] == .number("1"))
        #expect(
            Set((commitment["committed"]?.arrayValue ?? []).compactMap { $0["sopInstanceUID"]?.stringValue })
                == Set(files.map(\.sopInstanceUID)), "\(run.stdout)")
        #expect(commitment["failed"]?.arrayValue?.isEmpty == true)
        let answered = Self.events(in: events, "storageCommitment")
        #expect(answered.count == 1)
        #expect(answered.first?["committed"]?.arrayValue?.count == 2)
        #expect(answered.first?["transactionUID"] == commitment["transactionUID"])
        // On the same association: no report on a new one.
        #expect(Self.events(in: events, "storageCommitmentReported").isEmpty)
    }

    /// Orthanc's report of a storage commitment it asked px-listen for: `Status`, the SOP Instance UIDs of
    /// `Success`, and those of `Failures` with their `FailureReason`.
    struct OrthancReport {
        var status: String
        var success: [String]
        var failures: [(uid: String, reason: Int)]
        var raw: String
    }

    /// Asks Orthanc (as storage commitment SCU) to have px-listen commit `instances`, then polls (max 30 s) its
    /// report until it is no longer pending.
    static func orthancCommitment(context: OrthancCommandPeer.Context, asking instances: [(String, String)])
        async throws -> OrthancReport
    {
        let body = JSONValue.object([
            JSONMember(
                "DicomInstances",
                .array(
                    instances.map {
                        .object([JSONMember("SOPClassUID", .string($0.0)), JSONMember("SOPInstanceUID", .string($0.1))])
                    })),
            JSONMember("Timeout", .number("30")),
        ])
        let run = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                "-c",
                """
                import json, sys, time, urllib.request
                base = "http://127.0.0.1:" + sys.argv[1]
                request = urllib.request.Request(base + "/modalities/pxlisten/storage-commitment",
                                                 data=sys.argv[2].encode(), method="POST")
                started = json.load(urllib.request.urlopen(request))
                transaction = started["ID"]
                deadline = time.monotonic() + 30
                while True:
                    report = json.load(urllib.request.urlopen(base + "/storage-commitment/" + transaction))
                    if report.get("Status") != "Pending" or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                print(json.dumps(report))
                """,
                String(context.httpPort), body.serialized(),
            ])
        try #require(run.exitCode == 0, "Orthanc's storage commitment request failed: \(run.stderr)")
        let report = try JSONParser.parse(run.stdout)
        return OrthancReport(
            status: report["Status"]?.stringValue ?? "",
            success: (report["Success"]?.arrayValue ?? []).compactMap { $0["SOPInstanceUID"]?.stringValue },
            failures: (report["Failures"]?.arrayValue ?? []).map {
                (
                    $0["SOPInstanceUID"]?.stringValue ?? "",
                    Self.integer($0["FailureReason"]) ?? -1
                )
            },
            raw: run.stdout)
    }

    /// A JSON number as an Int.
    static func integer(_ value: JSONValue?) -> Int? {
        guard case .number(let text)? = value else { return nil }
        return Int(text)
    }

    /// The NDJSON events named `name` in `file`.
    static func events(in file: String, _ name: String) -> [JSONValue] {
        let text = String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self)
        return text.split(separator: "\n").compactMap { line -> JSONValue? in
            guard let value = try? JSONParser.parse(String(line)), value["event"]?.stringValue == name else {
                return nil
            }
            return value
        }
    }
}
