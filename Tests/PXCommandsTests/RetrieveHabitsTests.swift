import DICOMData
import Foundation
import PXCommandLine
import PXCommands
import PXCore
import PXTestSupport
import Testing

/// Retrieve habits of pypx users (issue 23) in the library: a whole patient, a series without its study.
@Suite(.timeLimit(.minutes(1))) struct RetrieveHabitsParsingTests {
    @Test func patientLevelRequestHasPatientKeysOnly() throws {
        let request = try MoveRequest(
            model: .patientRoot, destination: "DEST", patientID: "PAT001", studyInstanceUID: "")
        #expect(request.level == .patient)
        #expect(request.keys.map(\.keyword) == ["QueryRetrieveLevel", "PatientID"])
        #expect(request.keys.first?.value == "PATIENT")
        // Study root has no PATIENT level (PS3.4 §C.6.2): px expands the patient into its studies instead.
        #expect(throws: PXError.self) { try GetRequest(patientID: "PAT001", studyInstanceUID: "", root: "/tmp") }
        #expect(throws: PXError.self) {
            try MoveRequest(
                model: .patientRoot, destination: "DEST", patientID: "P", studyInstanceUID: "", seriesInstanceUID: "1.2"
            )
        }
    }

    @Test func selectionsOfAPatientAndOfASeries() {
        #expect(RetrieveSelection.patient("P").isPatient)
        #expect(!RetrieveSelection.patient("P").needsStudy)
        let series = RetrieveSelection(studyInstanceUID: "", seriesInstanceUID: "1.2")
        #expect(series.needsStudy && !series.isPatient)
        #expect(!RetrieveSelection(studyInstanceUID: "1").needsStudy)
    }

}

/// The command lines of those habits, run with the built commands: accepted (a closed port answers with
/// connectionRefused, not a usage error), or refused with a usage error that names the right thing.
@Suite(.tags(.integration), .timeLimit(.minutes(2))) struct RetrieveHabitsCommandLineTests {
    static let closedPeer = ["--serverIP", "127.0.0.1", "--serverPort", "1", "--aec", "PACS"]

    @Test func pypxLinesAreAccepted() async throws {
        for (command, arguments) in [
            ("px-move", ["--aetl", "PXLISTEN", "--seriesUID", "1.2.3"]),
            ("px-move", ["--aetl", "PXLISTEN", "--SOPInstanceUID", "1.2.3.4"]),
            ("px-move", ["--aetl", "PXLISTEN", "--model", "patient", "--PatientID", "PAT001"]),
            ("px-get", ["--PatientID", "PAT001"]),
            ("px-find", ["--then", "retrieve", "--aetl", "PXLISTEN"]),
            ("px-find", ["--then", "retrieve", "--move", "--aet", "PXLISTEN"]),
            ("px-find", ["--then", "retrieve", "--datadir", "/tmp/px-habits-unused"]),
        ] {
            let run = try await PeerHarness.run(command, Self.closedPeer + arguments, stdin: "")
            #expect(run.exitCode != 64, "\(command) \(arguments): \(run.stdout) \(run.stderr)")
            #expect(
                run.json?["error"]?["code"]?.stringValue == "connectionRefused",
                "\(command) \(arguments): \(run.stdout)")
        }
    }

    @Test func thenActionsOfChRISAreNotSupported() async throws {
        for action in ["push", "register", "status", "report", "retrieve,push"] {
            let run = try await PeerHarness.run("px-find", Self.closedPeer + ["--then", action])
            #expect(run.exitCode == 64)
            let message = run.json?["error"]?["message"]?.stringValue ?? ""
            #expect(run.json?["error"]?["code"]?.stringValue == "usage", "\(run.stdout)")
            #expect(message.contains("not supported"), "\(message)")
            #expect(!message.contains("peer"), "--then \(action) blames the peer arguments: \(message)")
        }
        let both = try await PeerHarness.run(
            "px-find", Self.closedPeer + ["--then", "retrieve", "--aetl", "X", "--datadir", "/tmp/x"])
        #expect(both.exitCode == 64, "\(both.stdout)")
    }

    @Test func versionOnTheRetrieveCommands() async throws {
        for command in ["px-move", "px-get"] {
            let run = try await PeerHarness.run(command, ["--version"])
            #expect(run.exitCode == 0 && !run.stdout.isEmpty, "\(command): \(run.stdout) \(run.stderr)")
        }
    }
}

/// Whole patients (`--PatientID` alone), series and instances without their study, and `px-find --then retrieve`,
/// on both backends, against Orthanc (which serves the Patient Root model) and pynetdicom's Q/R SCP (with and
/// without the Patient Root contexts): every instance of the patient's two studies arrives.
@Suite(
    "retrieve habits against Orthanc and pynetdicom", .tags(.integration), .integrationTier, .serialized,
    .timeLimit(.minutes(5)), OrthancCommandPeer())
struct RetrieveHabitsTests {
    static let patient = "PAT001"

    /// The SOP Instance UIDs of `patient` in the corpus (make-qr-corpus.py: two studies, three instances).
    static func instances(of patient: String, in corpus: OrthancCommandPeer.Corpus) throws -> Set<String> {
        let uids = Set(corpus.dataSets.filter { $0.value.string(.patientID) == patient }.keys)
        try #require(uids.count == 3)
        return uids
    }

    /// Empties `folder` (storescp keeps writing into it).
    static func empty(_ folder: String) throws {
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
            try FileManager.default.removeItem(atPath: folder + "/" + name)
        }
    }

    static func levels(_ run: PeerHarness.Run, _ key: String) -> [String] {
        (run.json?["data"]?[key]?.arrayValue ?? []).compactMap { $0["level"]?.stringValue }
    }

    @Test(arguments: ["native", "dcmtk"]) func wholePatientFromOrthanc(backend: String) async throws {
        guard PeerHarness.requireTools(["storescp", "movescu", "getscu"]) else { return }
        let context = try OrthancCommandTests.context()
        let expected = try Self.instances(of: Self.patient, in: context.corpus)
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-habits-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let moved = work + "/moved"
        try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", OrthancCommandPeer.listenAETitle, "-od", moved, String(context.listenPort)],
            logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: context.listenPort, aeTitle: OrthancCommandPeer.listenAETitle)

        // --model patient: one PATIENT-level retrieve; study root: the patient's two studies.
        for (model, level, count) in [("patient", "PATIENT", 1), ("study", "STUDY", 2)] {
            try Self.empty(moved)
            let move = try await PeerHarness.run(
                "px-move",
                [
                    context.peer, "--model", model, "--PatientID", Self.patient, "--destination",
                    OrthancCommandPeer.listenAETitle, "--backend", backend,
                ])
            #expect(move.exitCode == 0, "\(model): \(move.stdout) \(move.stderr)")
            #expect(Self.levels(move, "moves") == Array(repeating: level, count: count), "\(move.stdout)")
            #expect(move.json?["data"]?["completed"] == .number("3"), "\(move.stdout)")
            // A whole patient's entry names the patient, not an empty StudyInstanceUID.
            for entry in move.json?["data"]?["moves"]?.arrayValue ?? [] where level == "PATIENT" {
                #expect(entry["PatientID"]?.stringValue == Self.patient, "\(move.stdout)")
                #expect(entry["StudyInstanceUID"] == nil, "\(move.stdout)")
            }
            #expect(try RetrieveSessionTests.stored(moved) == expected, "\(model) move")

            let root = work + "/got-" + model
            let get = try await PeerHarness.run(
                "px-get",
                [context.peer, "--model", model, "--PatientID", Self.patient, "-d", root, "--backend", backend])
            #expect(get.exitCode == 0, "\(model): \(get.stdout) \(get.stderr)")
            #expect(Self.levels(get, "gets") == Array(repeating: level, count: count), "\(get.stdout)")
            #expect(try RetrieveSessionTests.stored(root) == expected, "\(model) get")
            for entry in get.json?["data"]?["gets"]?.arrayValue ?? [] where level == "PATIENT" {
                #expect(entry["PatientID"]?.stringValue == Self.patient, "\(get.stdout)")
                #expect(entry["StudyInstanceUID"] == nil, "\(get.stdout)")
            }
        }

        // pypx 0.8's line: --aetl, --seriesUID without the study, the peer as --serverIP/--serverPort.
        let series = try #require(context.corpus.series.first { $0.value.count == 2 })
        try Self.empty(moved)
        let pypx = try await PeerHarness.run(
            "px-move",
            [
                "--aet", OrthancCommandPeer.callingAETitle, "--aec", OrthancCommandPeer.orthancAETitle, "--serverIP",
                "127.0.0.1", "--serverPort", String(context.dicomPort), "--aetl", OrthancCommandPeer.listenAETitle,
                "--seriesUID", series.key, "--backend", backend,
            ])
        #expect(pypx.exitCode == 0, "\(pypx.stdout) \(pypx.stderr)")
        #expect(Self.levels(pypx, "moves") == ["SERIES"], "\(pypx.stdout)")
        #expect(
            try RetrieveSessionTests.stored(moved) == Set(series.value.compactMap { $0.string(.sopInstanceUID) }))

        // One instance by its SOPInstanceUID alone.
        let instance = try #require(series.value.first?.string(.sopInstanceUID))
        let one = try await PeerHarness.run(
            "px-get", [context.peer, "--SOPInstanceUID", instance, "-d", work + "/one", "--backend", backend])
        #expect(one.exitCode == 0, "\(one.stdout) \(one.stderr)")
        #expect(Self.levels(one, "gets") == ["IMAGE"], "\(one.stdout)")
        #expect(try RetrieveSessionTests.stored(work + "/one") == [instance])

        // pypx 3.x: find, then retrieve what was found, in one command.
        try Self.empty(moved)
        let then = try await PeerHarness.run(
            "px-find",
            [
                context.peer, "--PatientID", Self.patient, "--then", "retrieve", "--aetl",
                OrthancCommandPeer.listenAETitle, "--backend", backend,
            ])
        #expect(then.exitCode == 0, "\(then.stdout) \(then.stderr)")
        #expect(Self.levels(then, "moves") == ["SERIES", "SERIES"], "\(then.stdout)")
        #expect(try RetrieveSessionTests.stored(moved) == expected)
    }

    /// pynetdicom's Q/R SCP: a PATIENT-level retrieve; and the same peer refusing it (no Patient Root contexts, or
    /// a 0xC000 answer), where px retrieves the patient study by study in study root.
    @Test(arguments: ["native", "dcmtk"]) func wholePatientFromPynetdicom(backend: String) async throws {
        guard PeerHarness.requireTools(["storescp", "movescu", "getscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-habits-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        var expected = Set<String>()
        for name in try FileManager.default.contentsOfDirectory(atPath: folder) where name.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: folder + "/" + name).dataSet
            if ds.string(.patientID) == Self.patient { expected.insert(try #require(ds.string(.sopInstanceUID))) }
        }
        try #require(expected.count == 3)
        let storePort = try TestSupport.freePort()
        let moved = work + "/moved"
        try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", "DEST", "-od", moved, String(storePort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: storePort, aeTitle: "DEST")

        // As it is; without the Patient Root contexts; answering a PATIENT-level retrieve with 0xC000.
        for (index, refusal) in [[], ["--study-root-only"], ["--patient-level-status", "0xC000"]].enumerated() {
            let (scp, port) = try await RetrieveSessionTests.startQR(
                folder, log: work + "/qr-\(index).log", extra: ["--dest", "DEST=127.0.0.1:\(storePort)"] + refusal)
            defer { scp.kill() }
            let peer = "PYQR@127.0.0.1:\(port)"
            let (level, count) = refusal.isEmpty ? ("PATIENT", 1) : ("STUDY", 2)
            try Self.empty(moved)
            let move = try await PeerHarness.run(
                "px-move",
                [
                    peer, "--model", "patient", "--PatientID", Self.patient, "--destination", "DEST", "--backend",
                    backend,
                ])
            #expect(move.exitCode == 0, "\(refusal): \(move.stdout) \(move.stderr)")
            #expect(Self.levels(move, "moves") == Array(repeating: level, count: count), "\(move.stdout)")
            #expect(try RetrieveSessionTests.stored(moved) == expected, "move, \(refusal)")

            let root = work + "/got-\(index)"
            let get = try await PeerHarness.run(
                "px-get", [peer, "--model", "patient", "--PatientID", Self.patient, "-d", root, "--backend", backend])
            #expect(get.exitCode == 0, "\(refusal): \(get.stdout) \(get.stderr)")
            #expect(Self.levels(get, "gets") == Array(repeating: level, count: count), "\(get.stdout)")
            #expect(try RetrieveSessionTests.stored(root) == expected, "get, \(refusal)")
            if refusal.first == "--patient-level-status" {
                #expect(RetrieveSessionTests.count(scp, "refused") == 2, "\(scp.log)")
            }
            if refusal.isEmpty {
                // Study root: the patient's studies from one C-FIND, then one C-GET each.
                let studies = try await PeerHarness.run(
                    "px-get", [peer, "--PatientID", Self.patient, "-d", work + "/studies", "--backend", backend])
                #expect(studies.exitCode == 0, "\(studies.stdout) \(studies.stderr)")
                #expect(Self.levels(studies, "gets") == ["STUDY", "STUDY"], "\(studies.stdout)")
                #expect(try RetrieveSessionTests.stored(work + "/studies") == expected)
            }
            await scp.stop()
        }
    }
}
