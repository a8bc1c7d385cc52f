import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-listen on both backends against a tree with planted links, UIDs that used to share a name, and
/// senders whose command and data set disagree (issue 14 items 5, 6 and 9): never Success without the
/// file under its own name, never a byte outside the root.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(5))) struct PlacementSafetyTests {
    static let backends = ["native", "dcmtk"]
    static let tools = ["storescu", "echoscu"]
    /// C-STORE statuses as pynetdicom-scu.py reports them.
    static let outOfResources = 0xA700
    static let dataSetDoesNotMatchSOPClass = 0xA900

    /// A Secondary Capture instance as a Part 10 file in `directory`.
    static func instance(
        _ directory: String, sop: String, patientID: String = "P1", patientName: String = "Doe^Jane"
    ) throws -> String {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.7")
        ds.set(.sopInstanceUID, vr: .UI, string: sop)
        ds.set(.patientID, vr: .LO, string: patientID)
        ds.set(.patientName, vr: .PN, string: patientName)
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.826.0.1.3680043.8.498.1")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.826.0.1.3680043.8.498.1.1")
        ds.set(.instanceNumber, vr: .IS, string: "1")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + UUID().uuidString + ".dcm"
        try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).write(to: path)
        return path
    }

    /// Sends `files` with pynetdicom-scu.py (one association); returns the C-STORE status of each.
    static func send(_ port: Int, _ files: [String], extra: [String] = []) async throws -> [Int?] {
        let run = try await PeerHarness.runAsync(
            TestSupport.python,
            [TestSupport.repositoryRoot + "/scripts/pynetdicom-scu.py", "store", "127.0.0.1", String(port)] + files + [
                "--aec", "PXLISTEN",
            ] + extra)
        let results = try #require(run.json?["results"]?.arrayValue, "\(run.stdout) \(run.stderr)")
        return results.map { $0["status"]?.intValue }
    }

    /// Every entry under `path` (links not followed).
    static func entries(_ path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    /// Issue 14 item 5: `ROOT/EVIL-Evil -> outside` where the patient folder goes. The instance is not
    /// stored (native: a failure status; dcmtk: storescp already answered, so only `storeFailed`), no
    /// byte lands outside the root, and the receiver goes on storing other patients.
    @Test(arguments: backends) func aLinkWhereThePatientFolderGoesIsRefused(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: root + "/EVIL-Evil", withDestinationPath: outside)
        let evil = try Self.instance(
            work + "/corpus", sop: "1.2.826.0.1.3680043.8.498.1.1.1", patientID: "EVIL", patientName: "Evil")
        let good = try Self.instance(work + "/corpus", sop: "1.2.826.0.1.3680043.8.498.1.1.2")
        let listener = try await ListenerProcess.start(backend: backend, root: root, work: work)
        let statuses = try await Self.send(listener.port, [evil, good])
        #expect(statuses == [backend == "native" ? Self.outOfResources : 0, 0])
        #expect(
            await listener.waitFor(seconds: 20) { events in
                events.contains { $0["event"]?.stringValue == "storeFailed" }
                    && events.contains { $0["event"]?.stringValue == "instanceReceived" }
            })
        await listener.stop()
        let failed = listener.events("storeFailed")
        #expect(failed.count == 1)
        #expect(failed.first?["error"]?["message"]?.stringValue?.contains("symbolic link") == true, "\(failed)")
        let received = listener.events("instanceReceived")
        #expect(
            received.count == 1 && received.first?["SOPInstanceUID"]?.stringValue == "1.2.826.0.1.3680043.8.498.1.1.2",
            "\(received)")
        #expect(Self.entries(outside).isEmpty, "written outside the root: \(Self.entries(outside))")
        #expect(ListenerFiles.placed(under: root).count == 1)
    }

    /// Issue 14 item 6a: a dangling link at the final name is not a kept duplicate.
    @Test(arguments: backends) func aDanglingLinkAtTheFinalNameIsNotSuccess(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let sop = "1.2.826.0.1.3680043.8.498.1.1.3"
        let file = try Self.instance(work + "/corpus", sop: sop)
        let series =
            root
            + "/P1-Doe_Jane/unknown-unknown-1.2.826.0.1.3680043.8.498.1/unknown-unknown-1.2.826.0.1.3680043.8.498.1.1"
        try FileManager.default.createDirectory(atPath: series, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: series + "/00001-\(sop).dcm", withDestinationPath: outside + "/gone.dcm")
        let listener = try await ListenerProcess.start(backend: backend, root: root, work: work)
        let statuses = try await Self.send(listener.port, [file])
        #expect(statuses == [backend == "native" ? Self.outOfResources : 0])
        #expect(await listener.waitFor(seconds: 20) { $0.contains { $0["event"]?.stringValue == "storeFailed" } })
        await listener.stop()
        #expect(listener.events("instanceReceived").isEmpty, "\(listener.events("instanceReceived"))")
        #expect(listener.events("storeFailed").first?["error"]?["message"]?.stringValue?.contains("final name") == true)
        #expect(Self.entries(outside).isEmpty)
    }

    /// Issue 14 item 6b: `1.2.3.4+5` and `1.2.3.4/5` shared one file (both answered Success, one
    /// dropped). With them, two 64-character UIDs whose encoded names are too long and end in a hash
    /// (senders refuse longer UIDs; the placer's tests cover those, and 32-bit hash collisions).
    @Test(arguments: backends) func uidsThatSharedANameAreFourFiles(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = work + "/root"
        var prefix = "1.2.826.0.1.3680043.8.498.1+"
        while prefix.count < 63 { prefix += "9" }
        let uids = ["1.2.3.4+5", "1.2.3.4/5", prefix + "1", prefix + "2"]
        let files = try uids.map { try Self.instance(work + "/corpus", sop: $0) }
        let listener = try await ListenerProcess.start(backend: backend, root: root, work: work)
        #expect(try await Self.send(listener.port, files) == [0, 0, 0, 0])
        let allFour = await listener.waitFor(seconds: 20) {
            $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count == 4
        }
        #expect(allFour, "\(listener.events()) \(listener.stderr().suffix(4000))")
        await listener.stop()
        let received = listener.events("instanceReceived")
        #expect(received.allSatisfy { $0["duplicate"] == .null }, "\(received)")
        let paths = received.compactMap { $0["path"]?.stringValue }
        #expect(Set(paths).count == 4, "\(paths)")
        #expect(paths.filter { $0.contains("~") }.count == 2, "\(paths)")
        let placed = ListenerFiles.placed(under: root)
        #expect(placed.count == 4, "\(placed)")
        #expect(
            Set(try placed.map { try Part10File.readHeader(contentsOf: $0).dataSet.string(.sopInstanceUID) ?? "" })
                == Set(uids))
    }

    /// Issue 14 item 9: the C-STORE-RQ's Affected SOP Instance UID and the data set's differ. The native
    /// receiver answers 0xA900 and stores nothing; with the dcmtk backend storescp answers 0xA900 and px
    /// drops the file storescp wrote. Both report `storeFailed` with the request's UID.
    @Test(arguments: backends) func aRequestWhoseUIDIsNotTheDataSetsIsRefused(backend: String) async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let root = work + "/root"
        let file = try Self.instance(work + "/corpus", sop: "1.2.826.0.1.3680043.8.498.1.1.6")
        let claimed = "1.2.826.0.1.3680043.8.498.1.1.5"
        let listener = try await ListenerProcess.start(backend: backend, root: root, work: work)
        let statuses = try await Self.send(listener.port, [file], extra: ["--affected-sop-instance", claimed])
        #expect(statuses == [Self.dataSetDoesNotMatchSOPClass])
        // The same file with an agreeing request is stored.
        #expect(try await Self.send(listener.port, [file]) == [0])
        #expect(await listener.waitFor(seconds: 20) { $0.contains { $0["event"]?.stringValue == "instanceReceived" } })
        await listener.stop()
        let failed = listener.events("storeFailed")
        #expect(failed.count == 1)
        #expect(failed.first?["SOPInstanceUID"]?.stringValue == claimed, "\(failed)")
        #expect(failed.first?["error"]?["message"]?.stringValue?.contains("0xA900") == true, "\(failed)")
        let received = listener.events("instanceReceived")
        #expect(
            received.count == 1 && received.first?["SOPInstanceUID"]?.stringValue == "1.2.826.0.1.3680043.8.498.1.1.6")
        #expect(ListenerFiles.placed(under: root).count == 1)
        #expect(ListenerFiles.temporaries(under: root).filter { !$0.hasSuffix("/.px-incoming") }.isEmpty)
    }

    /// Issue 14 item 9: `--layout` starting with `/`, and one whose folder names can exceed 255 bytes,
    /// are usage errors before anything listens.
    @Test(arguments: [
        ("/{PatientID}/{SOPInstanceUID}.dcm", "may not start with /"),
        ("{PatientName}-{StudyDescription}-{SeriesDescription}-{PatientID}/{SOPInstanceUID}.dcm", "259 bytes"),
    ])
    func badLayoutsAreUsageErrors(layout: String, message: String) async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // Under timeout(1): a px-listen that accepts the layout listens until it is stopped (exit 124).
        let run = try await PeerHarness.runAsync(
            "/usr/bin/timeout",
            [
                "20", TestSupport.binDirectory + "/px-listen", "--port", "0", "-d", work + "/root", "--layout", layout,
                "--backend", "native",
            ])
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)")
        #expect((run.stdout + run.stderr).contains(message), "\(run.stdout) \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: work + "/root"))
    }
}
