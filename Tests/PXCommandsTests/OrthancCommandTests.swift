import DICOMData
import Foundation
import PXTestSupport
import Testing

/// The built px commands with the DCMTK backend against Orthanc (scripts/orthanc-start.sh, DefaultEncoding Utf8) on
/// free loopback ports, loaded with scripts/make-qr-corpus.py's corpus by DCMTK's storescu: px-echo, px-find at
/// study level (with series) and image level, and px-move into px-listen, which Orthanc knows as a modality.
///
/// Orthanc is started once for the suite by ``OrthancCommandPeer`` and stopped when the suite ends, also on failure.
@Suite(
    "px commands against Orthanc", .tags(.integration), .integrationTier, .serialized, OrthancCommandPeer(),
    .timeLimit(.minutes(10)))
struct OrthancCommandTests {
    static func context() throws -> OrthancCommandPeer.Context {
        try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
    }

    /// The `value` of a pypx `{tag, value, label}` entry.
    static func value(_ entry: JSONValue?, _ keyword: String) -> String? {
        entry?[keyword]?["value"]?.stringValue
    }

    @Test("px-echo: success status from Orthanc")
    func echo() async throws {
        let context = try Self.context()
        let run = try await PeerHarness.runAsync("px-echo", ["--backend", "dcmtk", context.peer])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let json = try #require(run.json, "px-echo printed no JSON: \(run.stdout)")
        #expect(json["status"]?.stringValue == "success")
        #expect(json["backend"]?.stringValue == "dcmtk")
        #expect(json["data"]?["dimseStatus"]?["code"]?.stringValue == "0x0000")
        #expect(json["data"]?["calledAETitle"]?.stringValue == OrthancCommandPeer.orthancAETitle)
        #expect(json["data"]?["port"] == .number(String(context.dicomPort)))
    }

    @Test("px-find at study level with series: every study, names and descriptions as loaded, counts")
    func findStudiesWithSeries() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        let run = try await PeerHarness.runAsync("px-find", ["--backend", "dcmtk", context.peer])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let studies = try #require(run.json?["data"]?.arrayValue, "px-find printed no data: \(run.stdout)")
        #expect(studies.count == corpus.studies.count)
        #expect(Set(studies.compactMap { Self.value($0, "StudyInstanceUID") }) == Set(corpus.studies.keys))
        for study in studies {
            let uid = Self.value(study, "StudyInstanceUID") ?? "?"
            guard let instances = corpus.studies[uid], let first = instances.first else {
                Issue.record("unexpected study \(uid)")
                continue
            }
            #expect(Self.value(study, "SpecificCharacterSet") == "ISO_IR 192", "\(uid)")
            #expect(Self.value(study, "PatientName") == first.string(.patientName), "\(uid)")
            #expect(Self.value(study, "PatientID") == first.string(.patientID), "\(uid)")
            #expect(Self.value(study, "StudyDescription") == first.string(.studyDescription), "\(uid)")
            #expect(Self.value(study, "StudyDate") == first.string(.studyDate), "\(uid)")
            #expect(Self.value(study, "NumberOfStudyRelatedInstances") == String(instances.count), "\(uid)")
            let series = study["series"]?.arrayValue ?? []
            let expectedSeries = Set(instances.compactMap { $0.string(.seriesInstanceUID) })
            #expect(
                Set(series.compactMap { Self.value($0, "SeriesInstanceUID") }) == expectedSeries, "series of \(uid)")
            for entry in series {
                let seriesUID = Self.value(entry, "SeriesInstanceUID") ?? "?"
                guard let members = corpus.series[seriesUID], let member = members.first else {
                    Issue.record("unexpected series \(seriesUID)")
                    continue
                }
                #expect(Self.value(entry, "StudyInstanceUID") == uid)
                #expect(Self.value(entry, "Modality") == member.string(.modality), "\(seriesUID)")
                #expect(Self.value(entry, "SeriesDescription") == member.string(.seriesDescription), "\(seriesUID)")
                #expect(Self.value(entry, "NumberOfSeriesRelatedInstances") == String(members.count), "\(seriesUID)")
            }
        }
        let names = Set(studies.compactMap { Self.value($0, "PatientName") })
        #expect(names.contains("Müller^Jürgen"))
        #expect(names.contains("山田^太郎=やまだ^たろう"))
        let descriptions = Set(
            studies.flatMap { $0["series"]?.arrayValue ?? [] }.compactMap { Self.value($0, "SeriesDescription") })
        #expect(descriptions.contains("頭部 MR"))
        #expect(descriptions.contains("Thorax Übersicht"))
    }

    @Test("px-find at image level: every instance with its series, class and number")
    func findImages() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        let run = try await PeerHarness.runAsync("px-find", ["--backend", "dcmtk", context.peer, "--level", "image"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let images = try #require(run.json?["data"]?.arrayValue, "px-find printed no data: \(run.stdout)")
        #expect(images.count == corpus.dataSets.count)
        #expect(images.compactMap { Self.value($0, "SOPInstanceUID") }.sorted() == corpus.dataSets.keys.sorted())
        for image in images {
            let uid = Self.value(image, "SOPInstanceUID") ?? "?"
            let original = try #require(corpus.dataSets[uid], "unexpected instance \(uid)")
            #expect(Self.value(image, "QueryRetrieveLevel") == "IMAGE")
            #expect(Self.value(image, "SeriesInstanceUID") == original.string(.seriesInstanceUID), "\(uid)")
            #expect(Self.value(image, "StudyInstanceUID") == original.string(.studyInstanceUID), "\(uid)")
            #expect(Self.value(image, "SOPClassUID") == original.string(.sopClassUID), "\(uid)")
            #expect(Self.value(image, "InstanceNumber") == original.string(.instanceNumber), "\(uid)")
        }
    }

    @Test("px-move of one study, then of px-find's whole answer, into px-listen: counts and data sets as loaded")
    func moveIntoListen() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        let received = context.work + "/received"
        let events = context.work + "/listen-events.ndjson"
        let listener = try PeerProcess(
            TestSupport.binDirectory + "/px-listen",
            [
                "--backend", "dcmtk", "--port", String(context.listenPort), "--aet", OrthancCommandPeer.listenAETitle,
                "-d", received,
            ],
            logFile: events, errorFile: events + ".stderr")
        // The study moved first, then everything again: the first study's instances arrive twice.
        let expectedEvents = corpus.dataSets.count + (corpus.studies[context.largestStudy]?.count ?? 0)
        do {
            try await Self.moves(context: context, corpus: corpus)
            // px-listen reports an instance once storescp has written it; stop it only after the last one.
            try await Self.waitForLines(in: events, atLeast: expectedEvents)
        } catch {
            await listener.stop(signal: SIGINT)
            throw error
        }
        await listener.stop(signal: SIGINT)

        let lines = String(decoding: FileManager.default.contents(atPath: events) ?? Data(), as: UTF8.self).split(
            separator: "\n")
        let parsed = lines.compactMap { try? JSONParser.parse(String($0)) }
        let instances = parsed.filter { $0["event"]?.stringValue == "instanceReceived" }
        #expect(instances.count == expectedEvents)
        #expect(Set(instances.compactMap { $0["SOPInstanceUID"]?.stringValue }) == Set(corpus.dataSets.keys))
        #expect(instances.allSatisfy { $0["callingAETitle"]?.stringValue == OrthancCommandPeer.orthancAETitle })
        for event in instances {
            let path = try #require(event["path"]?.stringValue)
            #expect(path.hasPrefix(received + "/"))
            let dataSet = try Part10File(contentsOf: path).dataSet
            let uid = dataSet.string(.sopInstanceUID) ?? "?"
            #expect(event["SOPInstanceUID"]?.stringValue == uid)
            let original = try #require(corpus.dataSets[uid], "unexpected instance \(uid) in \(path)")
            let differences = Self.differences(original, dataSet)
            #expect(differences.isEmpty, "\(path) differs from the loaded instance in \(differences)")
        }
    }

    /// Waits for px-listen to answer, then moves the largest study by UID and px-find's full answer through stdin.
    static func moves(context: OrthancCommandPeer.Context, corpus: OrthancCommandPeer.Corpus) async throws {
        let ready = try await TestSupport.waitForEcho(
            port: context.listenPort, aeTitle: OrthancCommandPeer.listenAETitle)
        try #require(ready, "px-listen did not answer C-ECHO on port \(context.listenPort)")

        let study = context.largestStudy
        let one = try await PeerHarness.runAsync(
            "px-move",
            [
                "--backend", "dcmtk", context.peer, "--destination", OrthancCommandPeer.listenAETitle,
                "--StudyInstanceUID", study,
            ])
        #expect(one.exitCode == 0, "\(one.stdout) \(one.stderr)")
        #expect(one.json?["data"]?["completed"] == .number(String(corpus.studies[study]?.count ?? -1)), "\(one.stdout)")
        #expect(one.json?["data"]?["failed"] == .number("0"))
        let oneMoves = one.json?["data"]?["moves"]?.arrayValue ?? []
        #expect(oneMoves.count == 1, "\(one.stdout)")
        #expect(oneMoves.first?["dimseStatus"]?["code"]?.stringValue == "0x0000", "\(one.stdout)")
        #expect(oneMoves.first?["level"]?.stringValue == "STUDY")

        let find = try await PeerHarness.runAsync("px-find", ["--backend", "dcmtk", context.peer])
        try #require(find.exitCode == 0, "\(find.stderr)")
        let all = try await PeerHarness.runAsync(
            "px-move", ["--backend", "dcmtk", context.peer, "--destination", OrthancCommandPeer.listenAETitle],
            stdin: find.stdout)
        #expect(all.exitCode == 0, "\(all.stdout) \(all.stderr)")
        #expect(all.json?["data"]?["completed"] == .number(String(corpus.dataSets.count)), "\(all.stdout)")
        #expect(all.json?["data"]?["failed"] == .number("0"))
        // A px-find answer with series lists is moved series by series.
        let allMoves = all.json?["data"]?["moves"]?.arrayValue ?? []
        #expect(allMoves.count == corpus.series.count, "\(all.stdout)")
        #expect(Set(allMoves.compactMap { $0["SeriesInstanceUID"]?.stringValue }) == Set(corpus.series.keys))
        #expect(allMoves.allSatisfy { $0["dimseStatus"]?["code"]?.stringValue == "0x0000" }, "\(all.stdout)")
    }

    /// The DICOM JSON members (tags) whose values differ between two data sets.
    static func differences(_ expected: DataSet, _ actual: DataSet) -> [String] {
        let left = expected.dicomJSON().objectValue ?? []
        let right = actual.dicomJSON().objectValue ?? []
        let keys = Set(left.map(\.key)).union(right.map(\.key)).sorted()
        return keys.filter { key in left.first { $0.key == key }?.value != right.first { $0.key == key }?.value }
    }

    /// Waits (max 20 s) until `file` has `count` instanceReceived lines.
    static func waitForLines(in file: String, atLeast count: Int) async throws {
        let reached = await TestSupport.poll(seconds: 20) {
            let text = String(decoding: FileManager.default.contents(atPath: file) ?? Data(), as: UTF8.self)
            return text.components(separatedBy: "\"instanceReceived\"").count - 1 >= count
        }
        if !reached { Issue.record("px-listen reported fewer than \(count) instances") }
    }

}

/// Orthanc for a whole suite of command tests: the corpus, a free port for px-listen (registered in Orthanc's
/// DicomModalities before Orthanc starts), Orthanc on free ports, and the corpus loaded with storescu. Stopped and
/// removed when the suite ends, passed or not; a missing Orthanc, DCMTK tool or venv fails the suite with an
/// install hint (never a skip).
struct OrthancCommandPeer: SuiteTrait, TestScoping {
    static let orthancAETitle = "ORTHANC"
    static let listenAETitle = "PXLISTEN"
    static let callingAETitle = "PXSCU"  // px's default calling AE title

    /// scripts/make-qr-corpus.py's instances, read with DICOMData.
    struct Corpus: Sendable {
        var files: [String] = []
        var dataSets: [String: DataSet] = [:]
        var studies: [String: [DataSet]] = [:]
        var series: [String: [DataSet]] = [:]
    }

    struct Context: Sendable {
        var work: String
        var dicomPort: Int
        /// Orthanc's HTTP port; with ``OrthancCommandPeer/dicomWeb`` it answers DICOMweb under `/dicom-web`.
        var httpPort: Int
        var listenPort: Int
        var corpus: Corpus
        /// `ORTHANC@127.0.0.1:port`
        var peer: String { "\(OrthancCommandPeer.orthancAETitle)@127.0.0.1:\(self.dicomPort)" }
        /// The study with the most instances.
        var largestStudy: String {
            self.corpus.studies.max { ($0.value.count, $1.key) < ($1.value.count, $0.key) }?.key ?? ""
        }
    }

    struct SetupFailed: Error, CustomStringConvertible {
        var description: String
    }

    @TaskLocal static var current: Context?

    var isRecursive: Bool { false }

    /// Loads Orthanc's DICOMweb plugin (scripts/orthanc-start.sh with PX_ORTHANC_DICOMWEB=1).
    var dicomWeb = false

    /// PATH with the sbin directories, where Debian puts Orthanc.
    static var path: String {
        var directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(
            String.init)
        for extra in ["/usr/local/sbin", "/usr/sbin", "/sbin"] where !directories.contains(extra) {
            directories.append(extra)
        }
        return directories.joined(separator: ":")
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let hint = "run scripts/setup-test-env.sh as root (installs DCMTK, Orthanc and the Python venv)"
        for tool in ["Orthanc", "storescu", "storescp", "echoscu", "findscu", "movescu", "python3"] {
            let found = Self.path.split(separator: ":").contains {
                FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
            }
            guard found else { throw SetupFailed(description: "\(tool) is not installed: \(hint)") }
        }
        let python = ProcessInfo.processInfo.environment["PX_VENV"].map { $0 + "/bin/python" } ?? TestSupport.python
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw SetupFailed(description: "no venv with pydicom at \(python): \(hint)")
        }
        let scripts = TestSupport.repositoryRoot + "/scripts/"
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }

        let made = try await PeerHarness.runAsync(python, [scripts + "make-qr-corpus.py", work + "/corpus"])
        guard made.exitCode == 0 else { throw SetupFailed(description: "make-qr-corpus.py failed: \(made.stderr)") }
        var corpus = Corpus()
        for name in try FileManager.default.contentsOfDirectory(atPath: work + "/corpus").sorted()
        where name.hasSuffix(".dcm") {
            let path = work + "/corpus/" + name
            let dataSet = try Part10File(contentsOf: path).dataSet
            corpus.files.append(path)
            corpus.dataSets[dataSet.string(.sopInstanceUID) ?? ""] = dataSet
            corpus.studies[dataSet.string(.studyInstanceUID) ?? "", default: []].append(dataSet)
            corpus.series[dataSet.string(.seriesInstanceUID) ?? "", default: []].append(dataSet)
        }

        // Reserved for the suite's lifetime: its tests bind and unbind it, and Orthanc's modalities name it.
        let block = try TestPortBlock.shared()
        let listenPort = try block.reserve()
        defer { block.unreserve(listenPort) }
        let orthanc = work + "/orthanc"
        let environment = [
            "PATH": Self.path,
            "PX_ORTHANC_AET": Self.orthancAETitle,
            "PX_ORTHANC_MODALITIES":
                "pxlisten=\(Self.listenAETitle)@127.0.0.1:\(listenPort),pxscu=\(Self.callingAETitle)@127.0.0.1:104",
            "PX_ORTHANC_DICOMWEB": dicomWeb ? "1" : "0",
        ]
        do {
            let start = try await PeerHarness.runAsync(
                scripts + "orthanc-start.sh", [orthanc], environment: environment)
            guard start.exitCode == 0 else {
                throw SetupFailed(description: "orthanc-start.sh failed: \(start.stderr)")
            }
            let ports = (start.stdout.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
            guard ports.count == 2 else {
                throw SetupFailed(description: "orthanc-start.sh printed no ports: \(start.stdout)")
            }
            let load = try await PeerHarness.runAsync(
                "/usr/bin/env",
                ["storescu", "-aet", Self.callingAETitle, "-aec", Self.orthancAETitle, "127.0.0.1", String(ports[0])]
                    + corpus.files)
            guard load.exitCode == 0 else {
                throw SetupFailed(description: "storescu could not load the corpus into Orthanc: \(load.stderr)")
            }
            let context = Context(
                work: work, dicomPort: ports[0], httpPort: ports[1], listenPort: listenPort, corpus: corpus)
            try await Self.$current.withValue(context) { try await function() }
        } catch {
            await Self.stop(orthanc)
            throw error
        }
        await Self.stop(orthanc)
    }

    static func stop(_ orthanc: String) async {
        do {
            let stop = try await PeerHarness.runAsync(
                TestSupport.repositoryRoot + "/scripts/peer-stop.sh", [orthanc + "/orthanc.pid"])
            if stop.exitCode != 0 { Issue.record("peer-stop.sh could not stop Orthanc: \(stop.stderr)") }
        } catch {
            Issue.record("cannot run peer-stop.sh: \(error)")
        }
    }
}
