import DICOMData
import Foundation
import PX
import PXTestSupport
import Testing

/// px-find `--queries` (issue 34): a cohort of queries in one process, against scripts/pynetdicom-qr-scp.py,
/// which reports each association and each C-FIND it answers. Both backends give the same lines; the native
/// backend asks every row on one association, reconnecting when the peer ends it between rows.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct CohortFindTests {
    /// The corpus's patients (5 studies of 4 patients) and a cohort file naming them with one row that matches
    /// nothing and one that cannot be read.
    static let rows = """
        PatientID,AccessionNumber
        PAT001,
        PAT002,ACC002
        NOSUCH,
        PAT003
        PAT004,ACC004

        """

    /// The output's lines without the envelope, each with its keys sorted, sorted.
    static func lines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("{\"status\"") }.sorted()
    }

    @Test(arguments: ["native", "dcmtk"]) func aCohortOverOneAssociation(backend: String) async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cohort-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        try Self.rows.write(toFile: work + "/rows.csv", atomically: true, encoding: .utf8)
        let find = try await PeerHarness.run(
            "px-find",
            ["PYQR@127.0.0.1:\(port)", "--queries", work + "/rows.csv", "--level", "study", "--backend", backend])
        // Row 4 has one cell where the header names two: that row fails, the others run.
        #expect(find.exitCode == 1, "\(find.stdout) \(find.stderr)")
        let envelope = try #require(find.json)
        #expect(envelope["error"]?["code"]?.stringValue == "partialFailure")
        #expect(envelope["data"]?["rows"] == .number("5"))
        #expect(envelope["data"]?["failed"] == .number("1"))
        // PAT001 has two studies; PAT002's matches its accession number; NOSUCH none; PAT004's one.
        #expect(envelope["data"]?["matches"] == .number("4"))
        let lines = try Self.lines(find.stdout).map { try JSONParser.parse($0) }
        let byRow = Dictionary(
            grouping: lines.compactMap { line -> (Int, JSONValue)? in
                guard case .number(let row)? = line["row"], let number = Int(row) else { return nil }
                return (number, line)
            }, by: \.0)
        #expect(byRow[1]?.count == 2)
        #expect(byRow[1]?.allSatisfy { $0.1["PatientID"]?.stringValue == "PAT001" } == true)
        #expect(byRow[2]?.map { $0.1["AccessionNumber"]?.stringValue } == ["ACC002"])
        #expect(byRow[3] == nil)
        #expect(byRow[4]?.first?.1["error"]?["code"]?.stringValue == "usage")
        #expect(byRow[5]?.map { $0.1["PatientID"]?.stringValue } == ["PAT004"])
        #expect(RetrieveSessionTests.count(scp, "find") == 4)
        // Native: the four queries on one association; DCMTK: one findscu (association) per query.
        #expect(RetrieveSessionTests.count(scp, "associated") == (backend == "native" ? 1 : 4), "\(scp.log)")
    }

    /// The same lines whichever backend asked, in the two-phase query (studies, then their series), rows read
    /// from stdin as NDJSON, two lanes at once.
    @Test func bothBackendsGiveTheSameLines() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cohort-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        let rows = """
            {"PatientID": "PAT001"}
            {"PatientID": ["PAT002", "PAT003"]}
            {"PatientID": "PAT004", "Modality": "CT"}

            """
        var outputs: [[String]] = []
        for backend in ["native", "dcmtk"] {
            let find = try await PeerHarness.run(
                "px-find", ["PYQR@127.0.0.1:\(port)", "--queries", "-", "--parallel", "2", "--backend", backend],
                stdin: rows)
            #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
            let envelope = try #require(find.json)
            #expect(envelope["backend"]?.stringValue == backend)
            // 5 studies and their 5 series.
            #expect(envelope["data"]?["matches"] == .number("10"), "\(find.stdout)")
            outputs.append(Self.lines(find.stdout))
        }
        #expect(outputs[0].count == 10)
        #expect(outputs[0] == outputs[1])
    }

    /// A peer that aborts an association when its second C-FIND arrives: every row after the first runs again
    /// on a new association, and none is lost.
    @Test func aPeerEndingTheAssociationBetweenRows() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cohort-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(
            folder, log: work + "/qr.log", extra: ["--abort-on-second-find"])
        defer { scp.kill() }
        let find = try await PeerHarness.run(
            "px-find", ["PYQR@127.0.0.1:\(port)", "--queries", "-", "--level", "study", "--backend", "native"],
            stdin: "PatientID\nPAT001\nPAT002\nPAT003\n")
        #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
        let envelope = try #require(find.json)
        #expect(envelope["data"]?["matches"] == .number("4"), "\(find.stdout)")
        #expect(RetrieveSessionTests.count(scp, "find") == 3)
        #expect(RetrieveSessionTests.count(scp, "aborted") == 2, "\(scp.log)")
        #expect(RetrieveSessionTests.count(scp, "associated") == 3, "\(scp.log)")
    }

    /// The documented cohort download: px-find --queries piped into px-sync, which takes the peer from
    /// px-find's envelope and retrieves every study found.
    @Test func aCohortPipedIntoPxSync() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cohort-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, instances) = try await RetrieveSessionTests.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        let find = try await PeerHarness.run(
            "px-find", ["PYQR@127.0.0.1:\(port)", "--queries", "-", "--level", "study"],
            stdin: "PatientID\nPAT001\nPAT003\n")
        #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
        let sync = try await PeerHarness.run("px-sync", [work + "/cohort"], stdin: find.stdout)
        #expect(sync.exitCode == 0, "\(sync.stdout) \(sync.stderr)")
        let stored = try RetrieveSessionTests.stored(work + "/cohort")
        // PAT001's two studies (3 instances) and PAT003's one.
        #expect(stored.count == 4)
        #expect(stored.isSubset(of: instances))
    }

    /// The library's cohort (``Endpoint/findEach(_:_:returning:)``): every row on one association, each match
    /// with its row; a row with an unknown key ends the stream with its error.
    @Test func theLibrarysFindEach() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cohort-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (folder, _, _) = try await RetrieveSessionTests.corpus(work)
        let (scp, port) = try await RetrieveSessionTests.startQR(folder, log: work + "/qr.log")
        defer { scp.kill() }
        let pacs = try await PX.place("PYQR@127.0.0.1:\(port)", config: PXConfig())
        var found: [(Int, String)] = []
        for try await (row, study) in pacs.findEach(.study, [["PatientID": "PAT002"], ["PatientID": "PAT001"]]) {
            found.append((row, study.string(.patientID) ?? ""))
        }
        #expect(found.map(\.0) == [0, 1, 1])
        #expect(found.map(\.1) == ["PAT002", "PAT001", "PAT001"])
        #expect(RetrieveSessionTests.count(scp, "associated") == 1, "\(scp.log)")
        var rows: [Int] = []
        await #expect(throws: PXError.self) {
            for try await (row, _) in pacs.findEach(.study, [["PatientID": "PAT003"], ["NoSuchKey": "x"]]) {
                rows.append(row)
            }
        }
        #expect(rows == [0])
    }

    @Test func usageErrors() async throws {
        for (arguments, message) in [
            (["--queries", "/nonexistent.csv"], "cannot open"),
            (["--queries", "/"], "not a regular file or a pipe"),
            (["--queries", "-", "--format", "table"], "use --format ndjson"),
            (["--parallel", "2"], "--parallel goes with --queries"),
            (["--queries", "-", "--then", "retrieve"], "--then retrieve takes one query"),
        ] {
            let find = try await PeerHarness.run("px-find", ["PYQR@127.0.0.1:1"] + arguments, stdin: "")
            #expect(find.exitCode == 64, "\(arguments): \(find.stdout) \(find.stderr)")
            #expect((find.stdout + find.stderr).contains(message), "\(arguments): \(find.stdout) \(find.stderr)")
        }
    }
}
