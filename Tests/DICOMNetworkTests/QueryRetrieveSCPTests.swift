import DICOMData
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

@testable import DICOMNetwork

/// DCMTK's findscu, movescu and getscu as clients of ``DICOMServer`` serving Query/Retrieve from a
/// ``DirectoryArchive`` of the QR corpus (scripts/make-qr-corpus.py), on 127.0.0.1 (PS3.4 Annex C).
///
/// Expected records are computed here from the corpus files themselves, not through the archive.
@Suite(
    "Query/Retrieve SCP with DCMTK clients", .tags(.integration), .integrationTier, .serialized,
    .requires("findscu", "movescu", "getscu", "storescp", pythonModules: ["pydicom"]), .timeLimit(.minutes(10))
)
struct QueryRetrieveSCPTests {
    /// One corpus instance's attributes, read with the data layer.
    struct CorpusInstance {
        var path: String
        var patientID: String
        var patientName: String
        var studyUID: String
        var studyDate: String
        var seriesUID: String
        var modality: String
        var sopUID: String
    }

    /// Generates the QR corpus into `directory` and reads it back with the data layer.
    static func makeCorpus(_ directory: String) async throws -> [CorpusInstance] {
        let generated = try await TestSupport.run(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", directory])
        try #require(generated.status == 0, "\(generated.output)")
        var instances: [CorpusInstance] = []
        for path in TestSupport.dicomFiles(in: directory) {
            let ds = try Part10File(contentsOf: path).dataSet
            instances.append(
                CorpusInstance(
                    path: path, patientID: ds.string(.patientID) ?? "", patientName: ds.string(.patientName) ?? "",
                    studyUID: ds.string(.studyInstanceUID) ?? "", studyDate: ds.string(.studyDate) ?? "",
                    seriesUID: ds.string(.seriesInstanceUID) ?? "", modality: ds.string(.modality) ?? "",
                    sopUID: ds.string(.sopInstanceUID) ?? ""))
        }
        try #require(instances.count == 6)
        return instances
    }

    /// Generates the corpus and runs our server with a ``DirectoryArchive`` of it (optionally wrapped) and
    /// `destinations`; `body` gets the server, a scratch directory and the corpus.
    static func withQRServer<R: Sendable>(
        destinations: [String: DICOMPeer] = [:],
        wrap: @escaping @Sendable (DirectoryArchive) -> any QueryRetrieveProvider = { $0 },
        idleTimeout: TimeAmount = .seconds(60),
        _ body: @escaping @Sendable (DICOMServer, String, [CorpusInstance]) async throws -> R
    ) async throws -> R {
        try await TestSupport.withTemporaryDirectory { dir in
            let corpus = try await Self.makeCorpus(dir + "/corpus")
            let archive = try DirectoryArchive(
                directory: dir + "/corpus", moveDestinations: destinations,
                logger: TestSupport.logger("px.test.archive"))
            #expect(archive.instances.count == 6)
            let scratch = dir + "/scratch"
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            return try await TestSupport.withServer(aeTitle: "PXQR", directory: scratch) { configuration in
                configuration.queryRetrieve = QueryRetrieveSCPConfiguration(
                    provider: wrap(archive), connectTimeout: .seconds(3), acseTimeout: .seconds(5),
                    dimseTimeout: .seconds(10))
                configuration.idleTimeout = idleTimeout
            } _: { server in
                try await body(server, scratch, corpus)
            }
        }
    }

    /// Runs findscu with `-X` into a fresh directory and returns the response data sets (in file order).
    static func find(_ server: DICOMServer, _ directory: String, model: String, _ keys: [String], extra: [String] = [])
        async throws
        -> (TestSupport.ProcessResult, [DataSet])
    {
        let out = directory + "/find-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        let arguments =
            ["-v", model, "-X", "-od", out, "-aec", "PXQR"] + extra + keys.flatMap { ["-k", $0] } + [
                "127.0.0.1", "\(server.localPort)",
            ]
        let result = try await TestSupport.run("findscu", arguments)
        var responses: [DataSet] = []
        for path in TestSupport.dicomFiles(in: out) {
            responses.append(try Part10File(contentsOf: path).dataSet)
        }
        return (result, responses)
    }

    /// The responses as sorted rows of the given keys' values (multi-valued joined with backslashes).
    static func rows(_ responses: [DataSet], _ tags: [DICOMData.Tag]) -> [[String]] {
        responses.map { ds in tags.map { (ds.strings($0) ?? ["<absent>"]).joined(separator: "\\") } }.sorted {
            $0.lexicographicallyPrecedes($1)
        }
    }

    static func sortedRows(_ rows: [[String]]) -> [[String]] {
        Array(Set(rows.map { $0.joined(separator: "|") })).sorted().map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }

    // MARK: - C-FIND

    @Test("findscu at every level of both models: wildcard, exact, UID list and date range matching")
    func findLevels() async throws {
        try await Self.withQRServer { server, dir, corpus in
            // Patient Root, PATIENT level, wildcard on Patient ID; names decoded through each response's charset.
            var (result, responses) = try await Self.find(
                server, dir, model: "-P",
                ["QueryRetrieveLevel=PATIENT", "PatientID=PAT00*", "PatientName", "NumberOfPatientRelatedStudies"])
            #expect(result.status == 0, "\(result.output)")
            let patientRows = Self.sortedRows(corpus.map { [$0.patientID, $0.patientName] })
            #expect(Self.rows(responses, [.patientID, .patientName]) == patientRows)
            #expect(
                Self.rows(responses, [.patientID, Tag(0x0020, 0x1200)]) == [
                    ["PAT001", "2"], ["PAT002", "1"], ["PAT003", "1"], ["PAT004", "1"],
                ])
            #expect(responses.allSatisfy { $0.string(.queryRetrieveLevel) == "PATIENT" })
            let latin1 = try #require(responses.first { $0.string(.patientID) == "PAT002" })
            #expect(latin1.string(.specificCharacterSet) == "ISO_IR 100")
            // Exactly the requested keys, the level, and Specific Character Set where the record has one.
            let charsets = ["PAT002": "ISO_IR 100", "PAT003": "ISO_IR 192"]
            for response in responses {
                var expected: Set<DICOMData.Tag> = [.queryRetrieveLevel, .patientID, .patientName, Tag(0x0020, 0x1200)]
                if charsets[response.string(.patientID) ?? ""] != nil { expected.insert(.specificCharacterSet) }
                #expect(Set(response.elements.map(\.tag)) == expected)
                #expect(response.string(.specificCharacterSet) == charsets[response.string(.patientID) ?? ""])
            }

            // Patient Root, PATIENT level, wildcard on the name with `?`: one patient.
            (result, responses) = try await Self.find(
                server, dir, model: "-P", ["QueryRetrieveLevel=PATIENT", "PatientName=D?e^*", "PatientID"])
            #expect(Self.rows(responses, [.patientID]) == [["PAT001"]], "\(result.output)")

            // Study Root, STUDY level, exact Patient ID: the two studies of PAT001 with their modalities.
            (result, responses) = try await Self.find(
                server, dir, model: "-S",
                ["QueryRetrieveLevel=STUDY", "PatientID=PAT001", "StudyInstanceUID", "StudyDate", "ModalitiesInStudy"])
            let pat001Studies = Self.sortedRows(
                corpus.filter { $0.patientID == "PAT001" }.map { [$0.studyUID, $0.studyDate, $0.modality] })
            #expect(
                Self.rows(responses, [.studyInstanceUID, .studyDate, Tag(0x0008, 0x0061)]) == pat001Studies,
                "\(result.output)")

            // Study Root, STUDY level, date range: only the study of 2024-01-16.
            (result, responses) = try await Self.find(
                server, dir, model: "-S", ["QueryRetrieveLevel=STUDY", "StudyDate=20240116-", "StudyInstanceUID"])
            #expect(
                Self.rows(responses, [.studyInstanceUID])
                    == Self.sortedRows(corpus.filter { $0.studyDate >= "20240116" }.map { [$0.studyUID] }))

            // Study Root, SERIES level, list of UID matching on two studies.
            let twoStudies = Array(Set(corpus.map(\.studyUID))).sorted().prefix(2)
            (result, responses) = try await Self.find(
                server, dir, model: "-S",
                [
                    "QueryRetrieveLevel=SERIES", "StudyInstanceUID=" + twoStudies.joined(separator: "\\"),
                    "SeriesInstanceUID", "Modality",
                ])
            let seriesRows = Self.sortedRows(
                corpus.filter { twoStudies.contains($0.studyUID) }.map { [$0.studyUID, $0.seriesUID, $0.modality] })
            #expect(
                Self.rows(responses, [.studyInstanceUID, .seriesInstanceUID, .modality]) == seriesRows,
                "\(result.output)")
            #expect(responses.allSatisfy { $0.string(.queryRetrieveLevel) == "SERIES" })

            // Patient Root, IMAGE level under one series: its instances, with the unique key returned.
            let ctSeries = try #require(corpus.first { $0.patientID == "PAT001" && $0.modality == "CT" })
            (result, responses) = try await Self.find(
                server, dir, model: "-P",
                [
                    "QueryRetrieveLevel=IMAGE", "PatientID=PAT001", "StudyInstanceUID=\(ctSeries.studyUID)",
                    "SeriesInstanceUID=\(ctSeries.seriesUID)", "InstanceNumber",
                ])
            let instanceRows = Self.sortedRows(corpus.filter { $0.seriesUID == ctSeries.seriesUID }.map { [$0.sopUID] })
            #expect(instanceRows.count == 2)
            #expect(Self.rows(responses, [.sopInstanceUID]) == instanceRows, "\(result.output)")
            // The level's unique key is returned although it was not asked for.
            let imageTags: Set<DICOMData.Tag> = [
                .queryRetrieveLevel, .patientID, .studyInstanceUID, .seriesInstanceUID, .instanceNumber,
                .sopInstanceUID,
            ]
            #expect(responses.allSatisfy { Set($0.elements.map(\.tag)) == imageTags })
            #expect(Set(responses.compactMap { $0.string(.instanceNumber) }) == ["1", "2"])

            // Study Root, IMAGE level, SOP Instance UID list.
            let threeInstances = corpus.map(\.sopUID).sorted().prefix(3)
            (result, responses) = try await Self.find(
                server, dir, model: "-S",
                ["QueryRetrieveLevel=IMAGE", "SOPInstanceUID=" + threeInstances.joined(separator: "\\"), "PatientID"])
            #expect(Self.rows(responses, [.sopInstanceUID]) == threeInstances.map { [$0] })

            // UTF-8 key (Specific Character Set ISO_IR 192) with a wild card, against the UTF-8 record of PAT003.
            (result, responses) = try await Self.find(
                server, dir, model: "-P",
                ["QueryRetrieveLevel=PATIENT", "SpecificCharacterSet=ISO_IR 192", "PatientName=山田*", "PatientID"])
            #expect(
                Self.rows(responses, [.patientID, .patientName]) == [["PAT003", "山田^太郎=やまだ^たろう"]], "\(result.output)")

            // No match: success without pending responses.
            (result, responses) = try await Self.find(
                server, dir, model: "-S", ["QueryRetrieveLevel=STUDY", "PatientID=NOBODY"])
            #expect(result.status == 0)
            #expect(responses.isEmpty)
        }
    }

    @Test("findscu --cancel 1 gets a cancel status (0xFE00) after one match")
    func findCancel() async throws {
        // A slow archive, so that the C-CANCEL-RQ arrives while matches are still coming. The server looks for the
        // cancel when the next match comes, so the gap must outlast findscu's turn from the first response to
        // its C-CANCEL-RQ (it writes the response to a file first): 300 ms did not, once, on a loaded 2-core CI.
        // swift-format-ignore: OnlyOneTrailingClosureArgument
        try await Self.withQRServer(wrap: { SlowProvider(base: $0, delay: .seconds(5)) }) { server, dir, _ in
            let (result, responses) = try await Self.find(
                server, dir, model: "-S", ["QueryRetrieveLevel=STUDY", "StudyInstanceUID"], extra: ["--cancel", "1"])
            #expect(result.status == 0, "\(result.output)")
            #expect(
                result.output.contains("Received Final Find Response (Cancel: MatchingTerminatedDueToCancelRequest)"),
                "\(result.output)")
            #expect(responses.count == 1, "\(result.output)")
        }
    }

    @Test("a bad Query/Retrieve Level and a garbage identifier get failure statuses, and the server goes on")
    func badIdentifiers() async throws {
        try await Self.withQRServer { server, dir, _ in
            let (result, responses) = try await Self.find(
                server, dir, model: "-S", ["QueryRetrieveLevel=PATIENT", "PatientID"])
            #expect(responses.isEmpty)
            // Study Root has no PATIENT level (PS3.4 §C.6.2): 0xA900, which DCMTK names DataSetDoesNotMatchSOPClass.
            #expect(
                result.output.contains("Received Final Find Response (Error: DataSetDoesNotMatchSOPClass)"),
                "\(result.output)")

            // Garbage bytes as the identifier, sent through our own client.
            let client = DICOMClient(
                configuration: .init(callingAETitle: "PXSCU"), logger: TestSupport.logger("px.test.client"))
            let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXQR")
            let status = try await client.withAssociation(to: peer, proposing: [.find(.studyRoot), .move(.studyRoot)]) {
                association in
                var statuses: [DIMSEStatus] = []
                for (sopClass, message) in [
                    (
                        QueryRetrieveModel.studyRoot.findSOPClass,
                        DIMSEMessage.cFindRQ(
                            CFindRQ(messageID: 7, affectedSOPClassUID: WellKnownUID.studyRootQueryRetrieveFind))
                    ),
                    (
                        QueryRetrieveModel.studyRoot.moveSOPClass,
                        DIMSEMessage.cMoveRQ(
                            CMoveRQ(
                                messageID: 8, affectedSOPClassUID: WellKnownUID.studyRootQueryRetrieveMove,
                                moveDestination: "X"))
                    ),
                ] {
                    let context = try association.context(for: sopClass, "test")
                    let garbage = ByteBuffer(bytes: [0x08, 0x00, 0x52, 0x00, 0x43, 0x53, 0xFF, 0x7F, 0x01, 0x02, 0x03])
                    try await association.connection.send(message, presentationContextID: context.id, dataSet: garbage)
                    let (response, _) = try await association.response(
                        to: message.commandField == .cFindRQ ? 7 : 8, waitingFor: "a response")
                    switch response {
                    case .cFindRSP(let r): statuses.append(r.status)
                    case .cMoveRSP(let r): statuses.append(r.status)
                    default: Issue.record("unexpected \(response)")
                    }
                }
                // The association still works.
                var keys = DataSet()
                keys.set(.studyInstanceUID, vr: .UI, string: "")
                var matches = 0
                for try await response in try await association.find(keys, model: .studyRoot, level: .study)
                where response.identifier != nil {
                    matches += 1
                }
                #expect(matches == 5)
                return statuses
            }
            #expect(status.count == 2)
            #expect(status.allSatisfy { $0.category == .failure }, "\(status)")
            #expect(status.first == .dataSetDoesNotMatchSOPClass)
        }
    }

    // MARK: - C-MOVE

    /// Runs storescp on a free port into `directory` for `body`.
    static func withStorescp<R>(_ directory: String, _ body: (Int) async throws -> R) async throws -> R {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = try TestSupport.freePort()
        let storescp = try PeerProcess(
            "storescp", ["-aet", "STORESCP", "-od", directory, "\(port)"], logFile: directory + ".log")
        defer { storescp.kill() }
        try await TestSupport.waitForPort(port)
        return try await body(port)
    }

    /// The received files keyed by SOP Instance UID.
    static func received(_ directory: String) throws -> [String: String] {
        var byUID: [String: String] = [:]
        for path in TestSupport.dicomFiles(in: directory) {
            byUID[try Part10File(contentsOf: path).dataSet.string(.sopInstanceUID) ?? ""] = path
        }
        return byUID
    }

    /// The value of the last `label : N` line of a DCMTK log.
    static func lastCount(_ output: String, _ label: String) -> Int? {
        output.split(separator: "\n").last { $0.contains(label) }.flatMap { line in
            line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        }
    }

    @Test(
        "movescu by study and by series to storescp: identical data sets, counts; unknown and unreachable destinations")
    func move() async throws {
        let scratch = NSTemporaryDirectory() + "px-qrscp-move-" + UUID().uuidString
        defer {
            do { try FileManager.default.removeItem(atPath: scratch) } catch {
                Issue.record("cannot remove \(scratch)")
            }
        }
        // Held so that no peer started meanwhile listens there: DEADSCP's for the whole test, movescu's own
        // until the Q/R server (on port 0) listens.
        let dead = try TestSupport.holdPort()
        defer { dead.release() }
        let deadPort = dead.port
        let movescu = try TestSupport.holdPort()
        let selfPort = movescu.port
        try await Self.withStorescp(scratch + "/study") { storePort in
            let destinations = [
                "STORESCP": DICOMPeer(host: "127.0.0.1", port: storePort, aeTitle: "STORESCP"),
                "DEADSCP": DICOMPeer(host: "127.0.0.1", port: deadPort, aeTitle: "DEADSCP"),
                "MOVESCU": DICOMPeer(host: "127.0.0.1", port: selfPort, aeTitle: "MOVESCU"),
            ]
            try await Self.withQRServer(destinations: destinations) { server, _, corpus in
                movescu.release()
                // By study (Patient Root): PAT001's CT study, two instances.
                let ct = try #require(corpus.first { $0.patientID == "PAT001" && $0.modality == "CT" })
                var result = try await TestSupport.run(
                    "movescu",
                    [
                        "-d", "-P", "-aec", "PXQR", "-aem", "STORESCP", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "PatientID=PAT001",
                        "-k", "StudyInstanceUID=\(ct.studyUID)", "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(result.status == 0, "\(result.output)")
                #expect(Self.lastCount(result.output, "Completed Suboperations") == 2, "\(result.output)")
                #expect(Self.lastCount(result.output, "Failed Suboperations") == 0)
                let expected = corpus.filter { $0.studyUID == ct.studyUID }
                var got = try Self.received(scratch + "/study")
                #expect(Set(got.keys) == Set(expected.map(\.sopUID)))
                for instance in expected {
                    let copy = try #require(got[instance.sopUID])
                    #expect(try DataSetComparison.differences(expectedFile: instance.path, actualFile: copy) == [])
                }

                // By series (Study Root): the MR series of PAT003 (UTF-8 names), one instance.
                let mr = try #require(corpus.first { $0.patientID == "PAT003" })
                result = try await TestSupport.run(
                    "movescu",
                    [
                        "-d", "-S", "-aec", "PXQR", "-aem", "STORESCP", "-k", "QueryRetrieveLevel=SERIES", "-k",
                        "StudyInstanceUID=\(mr.studyUID)",
                        "-k", "SeriesInstanceUID=\(mr.seriesUID)", "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(result.status == 0, "\(result.output)")
                #expect(Self.lastCount(result.output, "Completed Suboperations") == 1, "\(result.output)")
                got = try Self.received(scratch + "/study")
                let copy = try #require(got[mr.sopUID])
                #expect(try DataSetComparison.differences(expectedFile: mr.path, actualFile: copy) == [])

                // To the requestor itself (movescu's own storage SCP on --port), as a PACS client does.
                let selfDir = scratch + "/self"
                try FileManager.default.createDirectory(atPath: selfDir, withIntermediateDirectories: true)
                result = try await TestSupport.run(
                    "movescu",
                    [
                        "-d", "-S", "-aet", "MOVESCU", "-aec", "PXQR", "-aem", "MOVESCU", "--port", "\(selfPort)",
                        "-od", selfDir,
                        "-k", "QueryRetrieveLevel=STUDY", "-k", "StudyInstanceUID=\(mr.studyUID)", "127.0.0.1",
                        "\(server.localPort)",
                    ])
                #expect(result.status == 0, "\(result.output)")
                #expect(Self.lastCount(result.output, "Completed Suboperations") == 1, "\(result.output)")
                #expect(try Self.received(selfDir).keys.sorted() == [mr.sopUID])

                // Unknown destination: 0xA801.
                result = try await TestSupport.run(
                    "movescu",
                    [
                        "-v", "-S", "-aec", "PXQR", "-aem", "NOSUCHAE", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "StudyInstanceUID=\(mr.studyUID)",
                        "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(
                    result.output.contains("Received Final Move Response (Refused: MoveDestinationUnknown)"),
                    "\(result.output)")
                #expect(result.status != 0, "\(result.output)")

                // A destination that does not answer: a failure status (every sub-operation failed), not a hang.
                let started = ContinuousClock.now
                result = try await TestSupport.run(
                    "movescu",
                    [
                        "-d", "-S", "-aec", "PXQR", "-aem", "DEADSCP", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "StudyInstanceUID=\(ct.studyUID)",
                        "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(
                    result.output.contains("0xa702: Refused: Out of resources - Unable to perform sub-operations"),
                    "\(result.output)")
                #expect(result.output.contains("FailedSOPInstanceUIDList"), "\(result.output)")
                #expect(Self.lastCount(result.output, "Failed Suboperations") == 2, "\(result.output)")
                // A refused connection ends at once; the bound only guards against a hang, with room for load.
                #expect(ContinuousClock.now - started < .seconds(30))
            }
        }
    }

    // MARK: - C-GET

    @Test("getscu by study and by series: identical data sets and counts")
    func get() async throws {
        try await Self.withQRServer { server, dir, corpus in
            let cases: [(String, [String], [CorpusInstance])] = {
                let ct = corpus.first { $0.patientID == "PAT001" && $0.modality == "CT" }!
                let latin1 = corpus.first { $0.patientID == "PAT002" }!
                return [
                    (
                        "-S", ["QueryRetrieveLevel=STUDY", "StudyInstanceUID=\(ct.studyUID)"],
                        corpus.filter { $0.studyUID == ct.studyUID }
                    ),
                    (
                        "-P",
                        [
                            "QueryRetrieveLevel=SERIES", "PatientID=PAT002", "StudyInstanceUID=\(latin1.studyUID)",
                            "SeriesInstanceUID=\(latin1.seriesUID)",
                        ],
                        [latin1]
                    ),
                ]
            }()
            for (index, (model, keys, expected)) in cases.enumerated() {
                let out = dir + "/get\(index)"
                try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
                let result = try await TestSupport.run(
                    "getscu",
                    ["-v", model, "-aec", "PXQR", "-od", out] + keys.flatMap { ["-k", $0] } + [
                        "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(result.status == 0, "\(result.output)")
                #expect(
                    Self.lastCount(result.output, "Number of Completed Suboperations") == expected.count,
                    "\(result.output)")
                #expect(Self.lastCount(result.output, "Number of Failed Suboperations") == 0, "\(result.output)")
                let got = try Self.received(out)
                #expect(Set(got.keys) == Set(expected.map(\.sopUID)))
                for instance in expected {
                    let copy = try #require(got[instance.sopUID])
                    #expect(try DataSetComparison.differences(expectedFile: instance.path, actualFile: copy) == [])
                }
            }
        }
    }
}

extension QueryRetrieveSCPTests {
    @Test(
        "C-GET honours role selection and transfer syntaxes: no SCP role fails every sub-operation; Implicit VR only is re-encoded"
    )
    func getNegotiation() async throws {
        try await Self.withQRServer { server, dir, corpus in
            let client = DICOMClient(
                configuration: .init(callingAETitle: "PXSCU"), logger: TestSupport.logger("px.test.client"))
            let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXQR")
            let ct = try #require(corpus.first { $0.patientID == "PAT001" && $0.modality == "CT" })
            var keys = DataSet()
            keys.set(.studyInstanceUID, vr: .UI, string: ct.studyUID)
            let ctImage = "1.2.840.10008.5.1.4.1.1.2"

            // CT Image Storage proposed without the SCP role: the server may not send on it (PS3.7 §D.3.3.4).
            let noRole = [
                ProposedPresentationContext.get(.studyRoot)[0],
                ProposedPresentationContext(
                    abstractSyntax: ctImage, transferSyntaxes: TransferSyntaxLists.uncompressed),
            ]
            let refused = dir + "/refused"
            try FileManager.default.createDirectory(atPath: refused, withIntermediateDirectories: true)
            let failed = try await client.withAssociation(to: peer, proposing: noRole) { association in
                try await association.get(
                    keys, model: .studyRoot, level: .study, storage: DirectoryStorage(directory: refused),
                    directory: refused)
            }
            #expect(failed.status == .outOfResourcesSubOperations)
            #expect(failed.subOperations.failed == 2)
            #expect(failed.subOperations.completed == 0)
            #expect(
                Set(failed.failedSOPInstanceUIDs) == Set(corpus.filter { $0.studyUID == ct.studyUID }.map(\.sopUID)))
            #expect(TestSupport.dicomFiles(in: refused).isEmpty)

            // With the SCP role but Implicit VR Little Endian only: the Explicit VR files are re-encoded.
            let implicitOnly = ProposedPresentationContext.get(
                .studyRoot, storageSOPClasses: [ctImage], transferSyntaxes: [WellKnownUID.implicitVRLittleEndian])
            let got = dir + "/implicit"
            try FileManager.default.createDirectory(atPath: got, withIntermediateDirectories: true)
            var pending: [SubOperationCounts] = []
            let result = try await client.withAssociation(to: peer, proposing: implicitOnly) { association in
                try await association.get(
                    keys, model: .studyRoot, level: .study, storage: DirectoryStorage(directory: got), directory: got
                ) {
                    pending.append($0)
                }
            }
            #expect(result.status == .success)
            #expect(result.subOperations.completed == 2)
            #expect(pending.map(\.remaining) == [1, 0])
            for instance in corpus where instance.studyUID == ct.studyUID {
                let copy = got + "/" + instance.sopUID + ".dcm"
                #expect(try Part10File(contentsOf: copy).transferSyntax.uid == WellKnownUID.implicitVRLittleEndian)
                #expect(try DataSetComparison.differences(expectedFile: instance.path, actualFile: copy) == [])
            }
        }
    }
}

/// A provider that hands out each C-FIND match after a delay: a slow archive, so that a C-CANCEL-RQ can arrive
/// between matches.
struct SlowProvider: QueryRetrieveProvider {
    var base: DirectoryArchive
    var delay: Duration

    func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error> {
        var matches: [DataSet] = []
        for try await match in try await self.base.find(request) { matches.append(match) }
        let all = matches
        let delay = self.delay
        return AsyncThrowingStream { continuation in
            let producer = Task {
                for (index, match) in all.enumerated() {
                    if index > 0 {
                        do { try await Task.sleep(for: delay) } catch { break }
                    }
                    continuation.yield(match)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in producer.cancel() }
        }
    }

    func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile] {
        try await self.base.retrieve(request)
    }

    func moveDestination(_ aeTitle: String) async -> DICOMPeer? {
        await self.base.moveDestination(aeTitle)
    }
}
