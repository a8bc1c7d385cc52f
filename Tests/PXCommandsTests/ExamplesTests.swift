import DICOMData
import Foundation
import PX
import PXTestSupport
import Testing

/// The programs of Examples/ (built by `make examples`, which `make test` runs) against Orthanc loaded with
/// scripts/make-qr-corpus.py's corpus (``OrthancCommandPeer``): each is run as a user runs it, and what it
/// printed and wrote is checked against the corpus.
@Suite(
    "Examples/ against Orthanc", .tags(.integration), .integrationTier, .serialized, OrthancCommandPeer(),
    .timeLimit(.minutes(10)))
struct ExamplesTests {
    /// Examples/.build/debug, where `make examples` puts the programs.
    static let binDirectory = TestSupport.repositoryRoot + "/Examples/.build/debug"

    /// Runs one example to its end.
    static func run(_ example: String, _ arguments: [String]) async throws -> PeerHarness.Run {
        let path = binDirectory + "/" + example
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is not built: run make examples")
        return try await PeerHarness.runAsync(path, arguments)
    }

    /// The JSON lines a run printed.
    static func jsonLines(_ run: PeerHarness.Run) -> [JSONValue] {
        run.stdout.split(separator: "\n").compactMap { line in
            line.hasPrefix("{") || line.hasPrefix("[") ? try? JSONParser.parse(String(line)) : nil
        }
    }

    /// SOP Instance UID -> path of every DICOM file under `root` (px's own folders left out).
    static func instances(under root: String) throws -> [String: String] {
        var out: [String: String] = [:]
        for path in SyncTests.files(under: root) where path.hasSuffix(".dcm") {
            out[try Part10File(contentsOf: path).dataSet.string(.sopInstanceUID) ?? path] = path
        }
        return out
    }

    @Test("echo-and-find: px-echo's data, each study of the patient as it arrives, then px-find's data")
    func echoAndFind() async throws {
        let context = try OrthancCommandTests.context()
        let corpus = context.corpus
        let patient = try #require(corpus.studies[context.largestStudy]?.first?.string(.patientID))
        let expected = Set(corpus.studies.filter { $0.value.first?.string(.patientID) == patient }.keys)
        let run = try await Self.run("echo-and-find", [context.peer, patient])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let echo = try #require(lines.first.flatMap { try? JSONParser.parse($0) }, "no echo line: \(run.stdout)")
        #expect(echo["dimseStatus"]?["code"]?.stringValue == "0x0000")
        #expect(echo["calledAETitle"]?.stringValue == OrthancCommandPeer.orthancAETitle)
        #expect(echo["port"] == .number(String(context.dicomPort)))
        let streamed = lines.dropFirst().dropLast().map { String($0.prefix { $0 != "\t" }) }
        #expect(Set(streamed) == expected, "\(run.stdout)")
        let found = try #require(lines.last.flatMap { try? JSONParser.parse($0) }?.arrayValue, "\(run.stdout)")
        #expect(Set(found.compactMap { $0["StudyInstanceUID"]?["value"]?.stringValue }) == expected)
        #expect(found.allSatisfy { $0["PatientID"]?["value"]?.stringValue == patient })
    }

    @Test("retrieve-a-study: the study's files in the folder, each SOP Instance UID of the corpus; again: none")
    func retrieveAStudy() async throws {
        let context = try OrthancCommandTests.context()
        let study = context.largestStudy
        let expected = Set(context.corpus.studies[study]?.compactMap { $0.string(.sopInstanceUID) } ?? [])
        let folder = context.work + "/example-retrieved"
        let run = try await Self.run("retrieve-a-study", [context.peer, study, folder])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let summary = try #require(Self.jsonLines(run).last, "no summary: \(run.stdout)")
        #expect(summary["transferred"] == .number("1"), "\(run.stdout)")
        #expect(summary["instancesTransferred"] == .number(String(expected.count)), "\(run.stdout)")
        let files = try Self.instances(under: folder)
        #expect(Set(files.keys) == expected)
        for (uid, path) in files {
            let original = try #require(context.corpus.dataSets[uid])
            let copy = try Part10File(contentsOf: path).dataSet
            #expect(copy.string(.studyInstanceUID) == study, "\(path)")
            #expect(OrthancCommandTests.differences(original, copy).isEmpty, "\(path)")
        }
        let again = try await Self.run("retrieve-a-study", [context.peer, study, folder])
        #expect(again.exitCode == 0, "\(again.stderr)")
        #expect(Self.jsonLines(again).last?["alreadyPresent"] == .number("1"), "\(again.stdout)")
    }

    @Test("sync-to-zip: one archive per study of the patient, holding its instances; a second run skips them")
    func syncToZip() async throws {
        let context = try OrthancCommandTests.context()
        let corpus = context.corpus
        let patient = try #require(corpus.studies[context.largestStudy]?.first?.string(.patientID))
        let studies = corpus.studies.filter { $0.value.first?.string(.patientID) == patient }
        let zips = context.work + "/example-zips"
        let run = try await Self.run("sync-to-zip", [context.peer, zips, patient])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let events = Self.jsonLines(run)
        #expect(
            Set(
                events.filter { $0["event"]?.stringValue == "studyFinished" }.compactMap {
                    $0["StudyInstanceUID"]?.stringValue
                }) == Set(studies.keys), "\(run.stdout)")
        #expect(events.last?["event"]?.stringValue == "finished")
        #expect(events.last?["transferred"] == .number(String(studies.count)), "\(run.stdout)")
        let place = try Endpoint.zip(at: zips)
        let held = try await place.inventory.studies(matching: DataSet())
        #expect(Set(held.map(\.studyInstanceUID)) == Set(studies.keys))
        for (study, instances) in studies {
            let bySeries = try await place.inventory.instancesBySeries(ofStudy: study)
            #expect(
                bySeries.values.reduce(into: Set<String>()) { $0.formUnion($1) }
                    == Set(instances.compactMap { $0.string(.sopInstanceUID) }), "\(study)")
        }
        let again = try await Self.run("sync-to-zip", [context.peer, zips, patient])
        #expect(Self.jsonLines(again).last?["alreadyPresent"] == .number(String(studies.count)), "\(again.stdout)")
    }

    @Test("storage-scp: storescu sends a study to it: an instanceReceived line and a file per instance")
    func storageSCP() async throws {
        let context = try OrthancCommandTests.context()
        let study = context.largestStudy
        let expected = Set(context.corpus.studies[study]?.compactMap { $0.string(.sopInstanceUID) } ?? [])
        let files = context.corpus.files.filter { path in
            (try? Part10File.readHeader(contentsOf: path).dataSet.string(.studyInstanceUID)) == study
        }
        try #require(files.count == expected.count)
        let folder = context.work + "/example-scp"
        let log = context.work + "/example-scp.ndjson"
        let path = Self.binDirectory + "/storage-scp"
        try #require(FileManager.default.isExecutableFile(atPath: path), "\(path) is not built: run make examples")
        let port = try TestSupport.freePort()
        // It stops by itself after the study's instances.
        let scp = try PeerProcess(
            path, [String(port), folder, String(expected.count)], logFile: log, errorFile: log + ".stderr")
        let ready = try await TestSupport.waitForEcho(port: port, aeTitle: OrthancCommandPeer.listenAETitle)
        try #require(ready, "storage-scp did not answer C-ECHO on port \(port): \(scp.log)")
        let store = try await PeerHarness.runAsync(
            TestSupport.locate("storescu") ?? "storescu",
            ["-aet", "STORESCU", "-aec", OrthancCommandPeer.listenAETitle, "127.0.0.1", String(port)] + files)
        #expect(store.exitCode == 0, "\(store.stdout) \(store.stderr); storage-scp: \(scp.log)")
        // It exits once it has the study's instances (its output is written then).
        let exited = await TestSupport.poll(seconds: 60) { !scp.isRunning }
        let status = exited ? await scp.waitForExit() : await scp.stop()
        #expect(exited && status == 0, "\(scp.log)")
        let events = scp.events
        #expect(events.first?["event"]?.stringValue == "listening", "\(scp.log)")
        let received = events.filter { $0["event"]?.stringValue == "instanceReceived" }
        #expect(Set(received.compactMap { $0["SOPInstanceUID"]?.stringValue }) == expected, "\(scp.log)")
        #expect(Set(try Self.instances(under: folder).keys) == expected)
    }
}
