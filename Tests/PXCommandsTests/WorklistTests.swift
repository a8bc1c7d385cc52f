import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-find --model worklist (Modality Worklist Information Model - FIND, PS3.4 Annex K) on both backends
/// against DCMTK's wlmscpfs and scripts/pynetdicom-worklist-scp.py, serving the same three scheduled
/// procedure steps (.wl files made by DCMTK's dump2dcm from the dump text below): the steps each query
/// selects, the same JSON from both backends.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(3)))
struct WorklistTests {
    static let backends = ["native", "dcmtk"]

    /// One worklist entry in dump2dcm's text (DCMTK's wlistdb sample format).
    struct Entry {
        var patientName: String
        var patientID: String
        var accession: String
        var modality: String
        var station: String
        var date: String
        var stepID: String

        var dump: String {
            """
            (0008,0005) CS  [ISO_IR 100]
            (0008,0050) SH  [\(accession)]
            (0008,0090) PN  [Referrer^Ann]
            (0010,0010) PN  [\(patientName)]
            (0010,0020) LO  [\(patientID)]
            (0010,0030) DA  [19700101]
            (0010,0040) CS  [O]
            (0020,000d) UI  [2.25.4242\(patientID.dropFirst(2))]
            (0032,1060) LO  [Procedure of \(patientID)]
            (0040,0100) SQ
            (fffe,e000) -
            (0008,0060) CS  [\(modality)]
            (0040,0001) AE  [\(station)]
            (0040,0002) DA  [\(date)]
            (0040,0003) TM  [090000]
            (0040,0006) PN  [Performer^Bob]
            (0040,0007) LO  [Step \(stepID)]
            (0040,0009) SH  [\(stepID)]
            (0040,0010) SH  [ROOM1]
            (0040,0011) SH  [WING1]
            (fffe,e00d) -
            (fffe,e0dd) -
            (0040,1001) SH  [RP\(stepID)]

            """
        }
    }

    static let entries = [
        Entry(
            patientName: "Doe^Jane", patientID: "WL001", accession: "A001", modality: "CT", station: "CT1",
            date: "20240301", stepID: "SPS1"),
        Entry(
            patientName: "Roe^John", patientID: "WL002", accession: "A002", modality: "MR", station: "MR1",
            date: "20240302", stepID: "SPS2"),
        Entry(
            patientName: "Poe^Edgar", patientID: "WL003", accession: "A003", modality: "CT", station: "CT2",
            date: "20240415", stepID: "SPS3"),
    ]

    /// The queries and the steps (ScheduledProcedureStepID) each selects.
    static let queries: [(arguments: [String], steps: Set<String>)] = [
        ([], ["SPS1", "SPS2", "SPS3"]),
        (["--Modality", "MR"], ["SPS2"]),
        (["-k", "ScheduledStationAETitle=CT1", "-k", "ScheduledProcedureStepStartDate=20240301-20240331"], ["SPS1"]),
        (["-k", "Modality=CT", "--PatientName", "P*"], ["SPS3"]),
        (["--PatientID", "WL002", "-k", "RequestedProcedureID"], ["SPS2"]),
    ]

    /// The worklist database: FOLDER/PXWL/*.wl and the lockfile wlmscpfs needs.
    static func makeDatabase(_ folder: String) async throws {
        let directory = folder + "/PXWL"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: directory + "/lockfile", contents: Data())
        for entry in entries {
            let dump = directory + "/\(entry.stepID).dump"
            try entry.dump.write(toFile: dump, atomically: true, encoding: .utf8)
            let made = try await PeerHarness.run(
                TestSupport.locate("dump2dcm") ?? "dump2dcm", ["-g", dump, directory + "/\(entry.stepID).wl"])
            try #require(made.exitCode == 0, "dump2dcm: \(made.stderr)")
            try FileManager.default.removeItem(atPath: dump)
        }
    }

    /// The ScheduledProcedureStepID of each match of a `--format dicom-json` answer.
    static func steps(_ data: [JSONValue]) -> [String] {
        data.compactMap {
            $0["00400100"]?["Value"]?.arrayValue?.first?["00400009"]?["Value"]?.arrayValue?.first?
                .stringValue
        }
    }

    /// Matches sorted by step, without SpecificCharacterSet, as one text.
    static func comparable(_ matches: [JSONValue]) -> String {
        let sorted = zip(steps(matches), matches).sorted { $0.0 < $1.0 }.map { pair in
            JSONValue.object((pair.1.objectValue ?? []).filter { $0.key != "00080005" })
        }
        return JSONValue.array(sorted).serialized()
    }

    /// Runs every query on both backends against `peer`; returns the JSON data per query (the same from both).
    static func check(peer: String) async throws -> [String] {
        var answers: [String] = []
        for query in queries {
            var data: [String: String] = [:]
            for backend in backends {
                let run = try await PeerHarness.run(
                    "px-find",
                    [peer, "--model", "worklist", "--backend", backend, "--format", "dicom-json"]
                        + query.arguments)
                #expect(run.exitCode == 0, "\(backend) \(query.arguments): \(run.stdout) \(run.stderr)")
                let matches = run.json?["data"]?.arrayValue ?? []
                #expect(
                    Set(steps(matches)) == query.steps && matches.count == query.steps.count,
                    "\(backend) \(peer) \(query.arguments): \(run.stdout)")
                data[backend] = run.json?["data"]?.serialized() ?? ""
                if backend == "native" { answers.append(comparable(matches)) }
            }
            #expect(data["native"] == data["dcmtk"], "\(peer) \(query.arguments): backends differ")
        }
        // The other formats show the step: ndjson nests the sequence's item; --limit keeps one.
        for backend in backends {
            let ndjson = try await PeerHarness.run(
                "px-find",
                [peer, "--model", "worklist", "--backend", backend, "--format", "ndjson", "--Modality", "MR"])
            let line = try JSONParser.parse(String(ndjson.stdout.split(separator: "\n").first ?? ""))
            #expect(
                line["ScheduledProcedureStepSequence"]?.arrayValue?.first?["ScheduledStationAETitle"]?.stringValue
                    == "MR1", "\(backend): \(ndjson.stdout)")
            let table = try await PeerHarness.run(
                "px-find", [peer, "--model", "worklist", "--backend", backend, "--format", "table", "--Modality", "MR"])
            let tableLines = table.stdout.split(separator: "\n")
            #expect(
                tableLines.count == 3 && tableLines[0].contains("ScheduledStationAETitle")
                    && tableLines[2].contains("MR1"),
                "\(backend): one row per step: \(table.stdout)")
            let limited = try await PeerHarness.run(
                "px-find", [peer, "--model", "worklist", "--backend", backend, "--limit", "1"])
            #expect(limited.exitCode == 0 && limited.json?["data"]?.arrayValue?.count == 1, "\(limited.stdout)")
        }
        return answers
    }

    @Test func worklistQueriesOnBothBackends() async throws {
        guard PeerHarness.requireTools(["wlmscpfs", "dump2dcm", "findscu", "echoscu"]) else { return }
        try await TestSupport.withTemporaryDirectory(prefix: "px-worklist-") { work in
            try await Self.makeDatabase(work + "/db")
            let port = try TestSupport.freePort()
            let wlmscpfs = try PeerProcess(
                "wlmscpfs", ["-dfp", work + "/db", String(port)], logFile: work + "/wlmscpfs.log")
            defer { wlmscpfs.kill() }
            try #require(try await TestSupport.waitForEcho(port: port, aeTitle: "PXWL"), "wlmscpfs did not start")
            let fromDCMTK = try await Self.check(peer: "PXWL@127.0.0.1:\(port)")

            let (python, pyPort) = try await PeerHarness.startPythonPeer(
                "pynetdicom-worklist-scp.py", [work + "/db/PXWL", "--aet", "PYWL"], log: work + "/pywl.log")
            let fromPynetdicom = try await Self.check(peer: "PYWL@127.0.0.1:\(pyPort)")
            await python.stop()
            // Both SCPs hold the same steps and answer the keys asked: the same matches, but for their order and
            // SpecificCharacterSet, which wlmscpfs 3.6.7 leaves out of its answers.
            #expect(fromDCMTK == fromPynetdicom)
        }
    }

    /// The worklist model has no levels, no C-MOVE or C-GET, and px-ls has no worklist: usage errors.
    @Test func worklistRefusals() async throws {
        let level = try await PeerHarness.run("px-find", ["127.0.0.1:1", "--model", "worklist", "--level", "study"])
        #expect(level.exitCode == 64, "\(level.stdout) \(level.stderr)")
        let move = try await PeerHarness.run(
            "px-move", ["127.0.0.1:1", "--model", "worklist", "--StudyInstanceUID", "1.2", "--destination", "X"])
        #expect(move.exitCode == 64, "\(move.stdout) \(move.stderr)")
    }
}
