import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Several C-GETs and C-MOVEs of one run share an association (issue 12): px-get and px-move with several
/// studies against scripts/pynetdicom-qr-scp.py, which reports every association it accepts; and a peer that
/// aborts the association when the second request on it arrives, which the native backend's session answers
/// with one new association per request, losing none.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct RetrieveSessionTests {
    /// The corpus of make-qr-corpus.py (5 studies, 6 instances) and the StudyInstanceUID arguments of all.
    static func corpus(_ work: String) async throws -> (
        folder: String, arguments: [String], sopInstanceUIDs: Set<String>
    ) {
        let folder = work + "/corpus"
        let made = try await PeerHarness.run(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", folder])
        try #require(made.exitCode == 0, "make-qr-corpus.py failed: \(made.stderr)")
        var studies: [String] = []
        var instances = Set<String>()
        for file in try FileManager.default.contentsOfDirectory(atPath: folder).sorted() where file.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: folder + "/" + file).dataSet
            let study = try #require(ds.string(.studyInstanceUID))
            if !studies.contains(study) { studies.append(study) }
            instances.insert(try #require(ds.string(.sopInstanceUID)))
        }
        try #require(studies.count == 5 && instances.count == 6)
        return (folder, studies.flatMap { ["--StudyInstanceUID", $0] }, instances)
    }

    static func startQR(_ folder: String, log: String, extra: [String] = []) async throws -> (PeerProcess, Int) {
        try await PeerHarness.startPythonPeer("pynetdicom-qr-scp.py", [folder] + extra, log: log)
    }

    static func count(_ scp: PeerProcess, _ event: String) -> Int {
        scp.events.filter { $0["event"]?.stringValue == event }.count
    }

    /// The SOP Instance UIDs of the files under `root`.
    static func stored(_ root: String) throws -> Set<String> {
        var out = Set<String>()
        for file in FileManager.default.subpaths(atPath: root) ?? [] where !file.hasPrefix(".") && !file.hasSuffix("/")
        {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: root + "/" + file, isDirectory: &isDirectory),
                !isDirectory.boolValue
            else { continue }
            out.insert(try Part10File(contentsOf: root + "/" + file).dataSet.string(.sopInstanceUID) ?? "?")
        }
        return out
    }

    @Test(arguments: ["native", "dcmtk"]) func severalGetsOnOneAssociation(backend: String) async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-session-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        let (scp, port) = try await Self.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        let get = try await PeerHarness.runAsync(
            "px-get", ["PYQR@127.0.0.1:\(port)"] + studies + ["-d", work + "/got", "--backend", backend])
        #expect(get.exitCode == 0, "\(get.stdout) \(get.stderr)")
        #expect(get.json?["data"]?["gets"]?.arrayValue?.count == 5)
        #expect(get.json?["data"]?["completed"] == .number("6"))
        #expect(try Self.stored(work + "/got") == instances)
        #expect(Self.count(scp, "retrieve") == 5)
        // The native backend's session: one association; the DCMTK backend: one getscu run (association) each.
        #expect(Self.count(scp, "associated") == (backend == "native" ? 1 : 5), "\(scp.log)")
    }

    @Test func severalMovesOnOneAssociation() async throws {
        guard PeerHarness.requireTools(["storescp"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-session-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        let storePort = try TestSupport.freePort()
        try FileManager.default.createDirectory(atPath: work + "/moved", withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", "DEST", "-od", work + "/moved", String(storePort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: storePort, aeTitle: "DEST")
        let (scp, port) = try await Self.startQR(
            folder, log: work + "/qr.log", extra: ["--dest", "DEST=127.0.0.1:\(storePort)"])
        defer { scp.kill() }
        let move = try await PeerHarness.runAsync(
            "px-move", ["PYQR@127.0.0.1:\(port)", "--destination", "DEST"] + studies + ["--backend", "native"])
        #expect(move.exitCode == 0, "\(move.stdout) \(move.stderr)")
        #expect(move.json?["data"]?["moves"]?.arrayValue?.count == 5)
        #expect(move.json?["data"]?["completed"] == .number("6"))
        #expect(try Self.stored(work + "/moved") == instances)
        #expect(Self.count(scp, "associated") == 1, "\(scp.log)")
    }

    /// A peer that aborts every association when its second request arrives: each request after the first
    /// finds the association gone, runs again once on a new one, and every study arrives.
    @Test func peerEndingTheAssociationBetweenRequests() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-session-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, studies, instances) = try await Self.corpus(work)
        let (scp, port) = try await Self.startQR(folder, log: work + "/qr.log", extra: ["--abort-on-second-request"])
        defer { scp.kill() }
        let get = try await PeerHarness.runAsync(
            "px-get", ["PYQR@127.0.0.1:\(port)"] + studies + ["-d", work + "/got", "--backend", "native"])
        #expect(get.exitCode == 0, "\(get.stdout) \(get.stderr)")
        #expect(get.json?["data"]?["completed"] == .number("6"))
        #expect(try Self.stored(work + "/got") == instances)
        #expect(Self.count(scp, "retrieve") == 5)
        #expect(Self.count(scp, "aborted") == 4, "\(scp.log)")
        #expect(Self.count(scp, "associated") == 5, "\(scp.log)")
    }
}
