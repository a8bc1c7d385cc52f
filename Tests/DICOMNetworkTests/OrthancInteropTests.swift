import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// ``DICOMClient`` against Orthanc (started by hand with scripts/orthanc-start.sh, DefaultEncoding Utf8) on
/// 127.0.0.1: C-STORE of scripts/make-qr-corpus.py's corpus, C-ECHO, C-FIND at every level, C-MOVE to our own
/// ``DICOMServer`` (registered in Orthanc as a modality) and C-GET, with every retrieved data set compared to the
/// one loaded.
///
/// Orthanc, the corpus and our C-MOVE destination are set up once for the suite by ``OrthancPeer``; the corpus is
/// loaded during that setup, with our C-STORE, and ``storedCorpus()`` checks how that went.
@Suite(
    "DICOMClient against Orthanc", .tags(.integration), .integrationTier, .serialized, OrthancPeer(),
    .timeLimit(.minutes(10)))
struct OrthancInteropTests {
    static func client() -> DICOMClient {
        DICOMClient(
            configuration: .init(
                callingAETitle: OrthancPeer.callingAETitle, connectTimeout: .seconds(5), acseTimeout: .seconds(10),
                dimseTimeout: .seconds(30)),
            logger: TestSupport.logger("px.test.client")
        )
    }

    static func context() throws -> OrthancPeer.Context {
        try #require(OrthancPeer.current, "the suite's Orthanc is not running")
    }

    /// Runs one C-FIND on its own association and returns the matches; the final status must be success.
    static func find(
        _ keys: DataSet, level: QueryRetrieveLevel, model: QueryRetrieveModel = .studyRoot, peer: DICOMPeer
    ) async throws -> [DataSet] {
        try await Self.client().withAssociation(to: peer, proposing: [.find(model)]) { association in
            var matches: [DataSet] = []
            var final: DIMSEStatus?
            for try await response in try await association.find(keys, model: model, level: level) {
                if let identifier = response.identifier {
                    matches.append(identifier)
                } else {
                    final = response.status
                }
            }
            #expect(final == .success, "final C-FIND status at \(level)")
            return matches
        }
    }

    static func tag(_ keyword: String) -> DICOMData.Tag {
        guard let tag = DataDictionary.tag(forKeyword: keyword) else { fatalError("no keyword \(keyword)") }
        return tag
    }

    @Test("C-STORE of the corpus with our client: every instance accepted, Orthanc counts what was sent")
    func storedCorpus() async throws {
        let context = try Self.context()
        #expect(context.storeResults.count == context.corpus.files.count)
        for result in context.storeResults {
            #expect(
                result.status == .success,
                "\(result.path): \(result.status.map { "\($0)" } ?? "not sent") \(result.error ?? "")")
        }
        // Orthanc's own view of what it stored (REST /statistics).
        let statistics = try await OrthancPeer.rest(context, "/statistics")
        let corpus = context.corpus
        #expect(statistics["CountInstances"] == .number(String(corpus.files.count)))
        #expect(statistics["CountSeries"] == .number(String(corpus.series.count)))
        #expect(statistics["CountStudies"] == .number(String(corpus.studies.count)))
        #expect(
            statistics["CountPatients"]
                == .number(String(Set(corpus.dataSets.values.compactMap { $0.string(.patientID) }).count)))
    }

    @Test("C-ECHO")
    func echo() async throws {
        let context = try Self.context()
        #expect(try await Self.client().echo(context.peer) == .success)
    }

    @Test("C-FIND at STUDY level: every study once, names decoded as loaded (Latin-1 and UTF-8 originals)")
    func findStudies() async throws {
        let context = try Self.context()
        var keys = DataSet()
        for (keyword, vr) in [
            ("StudyDate", VR.DA), ("AccessionNumber", .SH), ("ModalitiesInStudy", .CS), ("StudyDescription", .LO),
            ("PatientName", .PN), ("PatientID", .LO), ("StudyInstanceUID", .UI), ("NumberOfStudyRelatedSeries", .IS),
            ("NumberOfStudyRelatedInstances", .IS),
        ] {
            keys.set(Self.tag(keyword), vr: vr, string: "")
        }
        let matches = try await Self.find(keys, level: .study, peer: context.peer)
        let corpus = context.corpus
        #expect(matches.count == corpus.studies.count)
        #expect(Set(matches.compactMap { $0.string(.studyInstanceUID) }) == Set(corpus.studies.keys))
        for match in matches {
            let uid = match.string(.studyInstanceUID) ?? "?"
            guard let instances = corpus.studies[uid], let first = instances.first else {
                Issue.record("unexpected study \(uid)")
                continue
            }
            // Orthanc answers in UTF-8 whatever the stored instance used (DefaultEncoding Utf8).
            #expect(match.strings(.specificCharacterSet) == ["ISO_IR 192"], "\(uid)")
            for keyword in ["PatientName", "PatientID", "StudyDescription", "StudyDate", "AccessionNumber"] {
                #expect(match.string(Self.tag(keyword)) == first.string(Self.tag(keyword)), "\(keyword) of \(uid)")
            }
            let seriesUIDs = Set(instances.compactMap { $0.string(.seriesInstanceUID) })
            #expect(match.integer(Self.tag("NumberOfStudyRelatedSeries")) == seriesUIDs.count, "\(uid)")
            #expect(match.integer(Self.tag("NumberOfStudyRelatedInstances")) == instances.count, "\(uid)")
            #expect(
                Set(match.strings(Self.tag("ModalitiesInStudy")) ?? [])
                    == Set(instances.compactMap { $0.string(.modality) }), "\(uid)")
        }
        // The decoded names themselves, not only their agreement with our own reading of the originals.
        let names = Set(matches.compactMap { $0.string(.patientName) })
        #expect(names.contains("Müller^Jürgen"))
        #expect(names.contains("山田^太郎=やまだ^たろう"))
    }

    @Test("C-FIND at PATIENT level (Patient Root) with a non-ASCII wildcard key finds exactly that patient")
    func findPatientsByName() async throws {
        let context = try Self.context()
        var patients: [String: String] = [:]  // PatientID -> PatientName
        for dataSet in context.corpus.dataSets.values {
            patients[dataSet.string(.patientID) ?? ""] = dataSet.string(.patientName) ?? ""
        }
        #expect(patients.values.contains { $0.unicodeScalars.contains { !$0.isASCII } })
        for (id, name) in patients.sorted(by: { $0.key < $1.key }) {
            // The family name (first component) and a wildcard; set() makes the query ISO_IR 192 when needed.
            let family = String(name.prefix { $0 != "^" && $0 != "=" })
            var keys = DataSet()
            keys.set(.patientName, vr: .PN, string: family + "*")
            keys.set(.patientID, vr: .LO, string: "")
            let matches = try await Self.find(keys, level: .patient, model: .patientRoot, peer: context.peer)
            #expect(matches.map { $0.string(.patientID) } == [id], "PatientName \(family)*")
            #expect(matches.first?.string(.patientName) == name, "PatientName \(family)*")
        }
    }

    @Test("C-FIND at SERIES level under each study: descriptions in three scripts, counts, numbers")
    func findSeries() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        var seen: Set<String> = []
        for study in corpus.studies.keys.sorted() {
            var keys = DataSet()
            keys.set(.studyInstanceUID, vr: .UI, string: study)
            keys.set(.seriesInstanceUID, vr: .UI, string: "")
            keys.set(.modality, vr: .CS, string: "")
            keys.set(.seriesDescription, vr: .LO, string: "")
            keys.set(Self.tag("SeriesNumber"), vr: .IS, string: "")
            keys.set(Self.tag("NumberOfSeriesRelatedInstances"), vr: .IS, string: "")
            let matches = try await Self.find(keys, level: .series, peer: context.peer)
            let expected = Set((corpus.studies[study] ?? []).compactMap { $0.string(.seriesInstanceUID) })
            #expect(Set(matches.compactMap { $0.string(.seriesInstanceUID) }) == expected, "series of \(study)")
            for match in matches {
                let uid = match.string(.seriesInstanceUID) ?? "?"
                guard let instances = corpus.series[uid], let first = instances.first else {
                    Issue.record("unexpected series \(uid)")
                    continue
                }
                seen.insert(uid)
                #expect(match.string(.studyInstanceUID) == study)
                #expect(match.string(.modality) == first.string(.modality), "\(uid)")
                #expect(match.string(.seriesDescription) == first.string(.seriesDescription), "\(uid)")
                #expect(match.integer(Self.tag("SeriesNumber")) == first.integer(Self.tag("SeriesNumber")), "\(uid)")
                #expect(match.integer(Self.tag("NumberOfSeriesRelatedInstances")) == instances.count, "\(uid)")
            }
        }
        #expect(seen == Set(corpus.series.keys))
        let descriptions = Set(
            corpus.series.keys.compactMap { uid in corpus.series[uid]?.first?.string(.seriesDescription) })
        #expect(descriptions.contains("頭部 MR"))
        #expect(descriptions.contains("Thorax Übersicht"))
    }

    @Test("C-FIND at IMAGE level under each series: every instance with its class and number")
    func findImages() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        var found: [String] = []
        for (seriesUID, instances) in corpus.series.sorted(by: { $0.key < $1.key }) {
            var keys = DataSet()
            keys.set(.studyInstanceUID, vr: .UI, string: instances.first?.string(.studyInstanceUID) ?? "")
            keys.set(.seriesInstanceUID, vr: .UI, string: seriesUID)
            keys.set(.sopInstanceUID, vr: .UI, string: "")
            keys.set(.sopClassUID, vr: .UI, string: "")
            keys.set(.instanceNumber, vr: .IS, string: "")
            let matches = try await Self.find(keys, level: .image, peer: context.peer)
            #expect(matches.count == instances.count, "instances of \(seriesUID)")
            for match in matches {
                let uid = match.string(.sopInstanceUID) ?? "?"
                found.append(uid)
                let original = try #require(corpus.dataSets[uid], "unexpected instance \(uid)")
                #expect(match.string(.seriesInstanceUID) == seriesUID)
                #expect(match.string(.sopClassUID) == original.string(.sopClassUID), "\(uid)")
                #expect(match.integer(.instanceNumber) == original.integer(.instanceNumber), "\(uid)")
            }
        }
        #expect(found.sorted() == corpus.dataSets.keys.sorted())
    }

    @Test("C-MOVE of every study to our DICOMServer: counts, AE titles, data sets equal to the originals")
    func move() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        let before = context.moveDestination.instances.count
        try await Self.client().withAssociation(to: context.peer, proposing: [.move(.studyRoot)]) { association in
            for (study, instances) in corpus.studies.sorted(by: { $0.key < $1.key }) {
                var keys = DataSet()
                keys.set(.studyInstanceUID, vr: .UI, string: study)
                var pending: [SubOperationCounts] = []
                let result = try await association.move(
                    keys, model: .studyRoot, level: .study, destination: OrthancPeer.destinationAETitle
                ) { pending.append($0) }
                #expect(result.status == .success, "C-MOVE of \(study): \(result)")
                #expect(result.subOperations.completed.map(Int.init) == instances.count, "\(study)")
                #expect((result.subOperations.failed ?? 0) == 0 && (result.subOperations.warning ?? 0) == 0, "\(study)")
                #expect(result.failedSOPInstanceUIDs.isEmpty)
                for counts in pending {
                    let total = [counts.remaining, counts.completed, counts.failed, counts.warning].compactMap { $0 }
                        .map(Int.init).reduce(0, +)
                    #expect(total == instances.count, "pending counts \(counts) of \(study)")
                }
            }
        }
        let received = Array(context.moveDestination.instances.dropFirst(before))
        #expect(received.count == corpus.files.count)
        #expect(Set(received.map(\.sopInstanceUID)) == Set(corpus.dataSets.keys))
        for instance in received {
            #expect(instance.callingAETitle == OrthancPeer.orthancAETitle)
            #expect(instance.calledAETitle == OrthancPeer.destinationAETitle)
            #expect(instance.moveOriginatorAETitle == OrthancPeer.callingAETitle)
            let original = try #require(corpus.paths[instance.sopInstanceUID])
            let differences = try DataSetComparison.differences(expectedFile: original, actualFile: instance.path)
            #expect(differences.isEmpty, "\(instance.sopInstanceUID) moved: \(differences.joined(separator: "; "))")
        }
    }

    @Test("C-GET of every patient (Patient Root) on one association: counts and data sets equal to the originals")
    func get() async throws {
        let context = try Self.context()
        let corpus = context.corpus
        var byPatient: [String: Int] = [:]
        for dataSet in corpus.dataSets.values { byPatient[dataSet.string(.patientID) ?? "", default: 0] += 1 }
        try await TestSupport.withTemporaryDirectory { dir in
            let storage = RecordingStorage(directory: dir + "/got")
            let incoming = dir + "/incoming"
            try FileManager.default.createDirectory(atPath: incoming, withIntermediateDirectories: true)
            try await Self.client().withAssociation(
                to: context.peer, proposing: ProposedPresentationContext.get(.patientRoot)
            ) {
                association in
                for (patient, count) in byPatient.sorted(by: { $0.key < $1.key }) {
                    var keys = DataSet()
                    keys.set(.patientID, vr: .LO, string: patient)
                    let result = try await association.get(
                        keys, model: .patientRoot, level: .patient, storage: storage, directory: incoming)
                    #expect(result.status == .success, "C-GET of \(patient): \(result)")
                    #expect(result.subOperations.completed.map(Int.init) == count, "\(patient)")
                    #expect((result.subOperations.failed ?? 0) == 0, "\(patient)")
                }
            }
            let received = storage.instances
            #expect(received.count == corpus.files.count)
            #expect(Set(received.map(\.sopInstanceUID)) == Set(corpus.dataSets.keys))
            for instance in received {
                #expect(instance.callingAETitle == OrthancPeer.orthancAETitle)
                let original = try #require(corpus.paths[instance.sopInstanceUID])
                let differences = try DataSetComparison.differences(expectedFile: original, actualFile: instance.path)
                #expect(differences.isEmpty, "\(instance.sopInstanceUID) got: \(differences.joined(separator: "; "))")
            }
        }
    }
}

/// The query/retrieve corpus of scripts/make-qr-corpus.py, read back with DICOMData.
struct QRCorpus: Sendable {
    /// The .dcm files.
    var files: [String]
    /// SOP Instance UID -> file.
    var paths: [String: String]
    /// SOP Instance UID -> data set.
    var dataSets: [String: DataSet]
    /// Study Instance UID -> its instances.
    var studies: [String: [DataSet]]
    /// Series Instance UID -> its instances.
    var series: [String: [DataSet]]

    /// Generates the corpus into `directory` with the venv's Python.
    static func make(in directory: String) async throws -> QRCorpus {
        let generated = try await TestSupport.run(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", directory])
        guard generated.status == 0 else {
            throw TestSupport.ScriptFailed(
                script: "make-qr-corpus.py", status: generated.status, output: generated.output)
        }
        var corpus = QRCorpus(
            files: TestSupport.dicomFiles(in: directory), paths: [:], dataSets: [:], studies: [:], series: [:])
        for file in corpus.files {
            let dataSet = try Part10File(contentsOf: file).dataSet
            let uid = dataSet.string(.sopInstanceUID) ?? ""
            corpus.paths[uid] = file
            corpus.dataSets[uid] = dataSet
            corpus.studies[dataSet.string(.studyInstanceUID) ?? "", default: []].append(dataSet)
            corpus.series[dataSet.string(.seriesInstanceUID) ?? "", default: []].append(dataSet)
        }
        guard corpus.files.count >= 6, corpus.studies.count >= 2 else {
            throw TestSupport.ScriptFailed(
                script: "make-qr-corpus.py", status: 0, output: "only \(corpus.files.count) files in \(directory)")
        }
        return corpus
    }
}

/// Orthanc for a whole suite: the corpus, our ``DICOMServer`` as C-MOVE destination (bound first, so that its port
/// can be registered in Orthanc's DicomModalities), Orthanc itself on free ports, and the corpus stored into it with
/// our client. Everything is stopped and removed when the suite ends, whether it passed or not; a missing Orthanc
/// fails the suite with an install hint.
struct OrthancPeer: SuiteTrait, TestScoping {
    static let callingAETitle = "PXSCU"
    static let destinationAETitle = "PXSCP"
    static let orthancAETitle = "ORTHANC"

    struct Context: Sendable {
        var peer: DICOMPeer
        var httpPort: Int
        var corpus: QRCorpus
        var storeResults: [StoreResult]
        /// Our C-MOVE destination's record of what arrived.
        var moveDestination: RecordingStorage
    }

    @TaskLocal static var current: Context?

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSupport.requirePeers(["Orthanc", "python3"], pythonModules: ["pydicom"])
        try await TestSupport.withTemporaryDirectory { work in
            let corpus = try await QRCorpus.make(in: work + "/corpus")
            for folder in ["incoming", "moved"] {
                try FileManager.default.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true)
            }
            let destination = RecordingStorage(directory: work + "/moved")
            try await TestSupport.withServer(
                aeTitle: Self.destinationAETitle, storage: destination, directory: work + "/incoming"
            ) { server in
                let orthanc = work + "/orthanc"
                do {
                    let modalities = [
                        "pxscp=\(Self.destinationAETitle)@127.0.0.1:\(server.localPort)",
                        "pxscu=\(Self.callingAETitle)@127.0.0.1:104",  // a caller only; Orthanc refuses port 0
                    ]
                    let output = try await TestSupport.script(
                        "orthanc-start.sh", [orthanc],
                        environment: [
                            "PX_ORTHANC_MODALITIES": modalities.joined(separator: ","),
                            "PX_ORTHANC_AET": Self.orthancAETitle,
                        ])
                    let ports = (output.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
                    guard ports.count == 2 else {
                        throw TestSupport.ScriptFailed(
                            script: "orthanc-start.sh", status: 0, output: "no ports in: \(output)")
                    }
                    let peer = DICOMPeer(host: "127.0.0.1", port: ports[0], aeTitle: Self.orthancAETitle)
                    let results = try await OrthancInteropTests.client().store(files: corpus.files, to: peer)
                    let context = Context(
                        peer: peer, httpPort: ports[1], corpus: corpus, storeResults: results,
                        moveDestination: destination)
                    try await Self.$current.withValue(context) { try await function() }
                } catch {
                    await Self.stop(orthanc)
                    throw error
                }
                await Self.stop(orthanc)
            }
        }
    }

    /// scripts/peer-stop.sh on the pid file (a missing one is fine: the start failed before writing it).
    static func stop(_ orthanc: String) async {
        do {
            let result = try await TestSupport.run(
                "bash", [TestSupport.repositoryRoot + "/scripts/peer-stop.sh", orthanc + "/orthanc.pid"])
            if result.status != 0 { Issue.record("peer-stop.sh could not stop Orthanc: \(result.output)") }
        } catch {
            Issue.record("cannot run peer-stop.sh: \(error)")
        }
    }

    /// GET on Orthanc's REST API (localhost only), parsed as JSON.
    static func rest(_ context: Context, _ path: String) async throws -> JSONValue {
        let script =
            "import sys, urllib.request\nwith urllib.request.urlopen(sys.argv[1], timeout=10) as r: sys.stdout.write(r.read().decode())"
        let result = try await TestSupport.run(
            "python3", ["-c", script, "http://127.0.0.1:\(context.httpPort)\(path)"], separateErrorOutput: true)
        guard result.status == 0 else {
            throw TestSupport.ScriptFailed(script: "GET \(path)", status: result.status, output: result.errorOutput)
        }
        return try JSONParser.parse(result.output)
    }
}
