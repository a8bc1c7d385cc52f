import DICOMData
import Foundation
import Logging
import PX
import PXTestSupport
import Testing

/// px-sync over the pairs of places issue 21 opened, one Orthanc (its DIMSE side and its DICOMweb side,
/// loaded with make-qr-corpus.py's 5 studies and 6 instances), px-serve over empty folders, folders and zip
/// folders. For each ordered pair: after the first run the destination holds the source's data sets (read
/// back through a folder and compared attribute by attribute), and a second run transfers nothing.
@Suite(
    "px-sync pair matrix", .tags(.integration), .integrationTier, .serialized, OrthancCommandPeer(dicomWeb: true),
    .timeLimit(.minutes(5)))
struct SyncPairMatrixTests {
    @Test(
        "node -> zip, web -> zip, two destinations, zip -> node, node -> zip, web -> node, node -> node through px, node -> web, zip -> web, zip -> node"
    )
    func pairs() async throws {
        let context = try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
        let corpus = context.corpus.dataSets
        let orthanc = context.peer
        let web = "http://127.0.0.1:\(context.httpPort)/dicom-web"
        let work = context.work + "/matrix"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        var matrix = Matrix(work: work)

        // Out of Orthanc into zip folders: node -> zip, web -> zip.
        try await matrix.cell(orthanc, "zip:" + work + "/zip-from-node", studies: 5, equals: corpus)
        try await matrix.cell(web, "zip:" + work + "/zip-from-web", studies: 5, equals: corpus)

        // Several destinations in one run: each study into each (a zip folder and a folder), named in the events.
        let multiZip = "zip:" + work + "/zip-also"
        let multiFolder = work + "/folder-also"
        let both = try await SyncTests.sync([orthanc, multiZip, "--also-to", multiFolder])
        #expect(both.exitCode == 0, "\(both.stdout) \(both.stderr)")
        #expect(both.json?["data"]?["found"] == .number("5"), "\(both.stdout)")
        #expect(both.json?["data"]?["transferred"] == .number("10"), "\(both.stdout)")
        #expect(both.json?["data"]?["instancesTransferred"] == .number("12"), "\(both.stdout)")
        let finished = SyncTests.events(both, "studyFinished")
        #expect(Set(finished.compactMap { $0["destination"]?.stringValue }) == [multiZip, multiFolder])
        try await matrix.expectHolds(multiZip, corpus)
        try SyncTests.expectFolder(multiFolder, equals: corpus)
        let bothAgain = try await SyncTests.sync([orthanc, multiZip, "--also-to", multiFolder])
        #expect(bothAgain.json?["data"]?["alreadyPresent"] == .number("10"), "\(bothAgain.stdout)")
        #expect(bothAgain.json?["data"]?["instancesTransferred"] == .number("0"))

        // zip -> px-serve (an empty one), px-serve -> zip; web -> another empty px-serve.
        let (served, servedPeer) = try await Self.serve(work, "serve-from-zip")
        try await matrix.cell("zip:" + work + "/zip-from-node", servedPeer, studies: 5, equals: corpus)
        try await matrix.cell(servedPeer, "zip:" + work + "/zip-from-serve", studies: 5, equals: corpus)
        let (fromWeb, fromWebPeer) = try await Self.serve(work, "serve-from-web")
        try await matrix.cell(web, fromWebPeer, studies: 5, equals: corpus)

        // node -> node where the source does not know the destination's AE title (Orthanc has no
        // DicomModalities entry for px-serve): through px.
        let (fromNode, fromNodePeer) = try await Self.serve(work, "serve-from-node")
        try await matrix.cell(orthanc, fromNodePeer, studies: 5, equals: corpus)

        // Into Orthanc, each time after its largest study was deleted: node -> web, zip -> web, zip -> node.
        let study = context.largestStudy
        for source in [servedPeer, "zip:" + work + "/zip-from-web"] {
            try await SyncTests.deleteFromOrthanc(study: study, httpPort: context.httpPort)
            try await matrix.cell(source, web, studies: 1, equals: corpus)
        }
        try await SyncTests.deleteFromOrthanc(study: study, httpPort: context.httpPort)
        try await matrix.cell("zip:" + work + "/zip-from-serve", orthanc, studies: 1, equals: corpus)

        // An instance removed from a zip's study comes back alone: the plan goes down to the instances.
        try await Self.removeOneInstance(of: study, from: work + "/zip-from-serve", work: work)
        let repaired = try await SyncTests.sync([servedPeer, "zip:" + work + "/zip-from-serve"])
        #expect(repaired.exitCode == 0, "\(repaired.stdout) \(repaired.stderr)")
        #expect(repaired.json?["data"]?["instancesTransferred"] == .number("1"), "\(repaired.stdout)")
        try await matrix.expectHolds("zip:" + work + "/zip-from-serve", corpus)

        for server in [served, fromWeb, fromNode] { _ = await server.stop() }
    }

    @Test("C-GET into a folder: the index records the headers parsed on receipt, the files are not read again")
    func getRecordsHeadersParsedOnReceipt() async throws {
        let context = try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
        let study = context.largestStudy
        let expected = Set((context.corpus.studies[study] ?? []).compactMap { $0.string(.sopInstanceUID) })
        try #require(expected.count >= 2)
        let logger = Logger(label: "px.test.receipt")
        guard
            case .folder(let folder) = try await Endpoint.folder(
                at: context.work + "/receipt", create: true, logger: logger)
        else { throw CancellationError() }
        let node = NodePlace(
            backend: try PX.backend(.native, for: .get),
            connection: Connection(
                node: try DICOMNode(
                    host: "127.0.0.1", port: context.dicomPort, calledAETitle: OrthancCommandPeer.orthancAETitle),
                local: try LocalAE()),
            logger: logger)
        let unit = TransferUnit(studyInstanceUID: study)
        let transfer = TransferContext(logger: logger)
        let delivery = try await node.deliver(unit, into: try #require(folder.tree), context: transfer)
        #expect(Set(delivery.files.compactMap { $0.header?.dataSet.string(.sopInstanceUID) }) == expected)
        #expect(delivery.inSinkTree)
        // Each file spoiled in place (same size, so the index's size check still holds): read now, none is
        // DICOM, so only the headers parsed on receipt can have been recorded.
        for file in delivery.files {
            let size = try #require(FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
            try Data(repeating: 0xFF, count: size).write(to: URL(fileURLWithPath: file.path))
            #expect(throws: (any Error).self) { try Part10File.readHeader(contentsOf: file.path) }
        }
        let taken = try await folder.take(delivery, of: unit, context: transfer)
        #expect(taken.transferred == expected.count)
        var keys = DataSet()
        keys.set(.studyInstanceUID, vr: .UI, string: study)
        let held = try await folder.studies(matching: keys)
        #expect(held.map(\.studyInstanceUID) == [study])
        #expect(held.first?.instanceCount == expected.count)
    }

    @Test("dcmqrscp -> zip, zip -> an empty dcmqrscp (each read back by C-GET)")
    func dcmqrscpCells() async throws {
        let context = try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
        let work = context.work + "/matrix-dcmqrscp"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let scripts = TestSupport.repositoryRoot + "/scripts/"
        let corpusFolder = try #require(context.corpus.files.first.map { ($0 as NSString).deletingLastPathComponent })
        let loaded = try await PeerHarness.runAsync(scripts + "dcmqrscp-start.sh", [work + "/qr1"])
        defer { TestSupport.killPeer(pidFile: work + "/qr1/dcmqrscp.pid") }
        try #require(loaded.exitCode == 0, "\(loaded.stderr)")
        let load = try await PeerHarness.runAsync(scripts + "dcmqrscp-load.sh", [work + "/qr1", corpusFolder])
        try #require(load.exitCode == 0, "\(load.stderr)")
        let emptyPort = try TestSupport.freePort()
        let empty = try await PeerHarness.runAsync(
            scripts + "dcmqrscp-start.sh", [work + "/qr2", String(emptyPort)], environment: ["PX_QR_AET": "QREMPTY"])
        defer { TestSupport.killPeer(pidFile: work + "/qr2/dcmqrscp.pid") }
        try #require(empty.exitCode == 0, "\(empty.stderr)")
        let source = "QRSCP@127.0.0.1:\(loaded.stdout.trimmingCharacters(in: .whitespacesAndNewlines))"
        // dcmqrscp answers no counts: the planner lists series and instances (native backend, as
        // SyncDcmqrscpTests).
        var matrix = Matrix(work: work, options: ["--backend", "native"])
        let zips = "zip:" + work + "/zip-from-qr"
        try await matrix.cell(source, zips, studies: 5, equals: context.corpus.dataSets)
        // Into dcmqrscp one study at a time (--parallel 1): dcmqrscp 3.6.7 names a stored file after the
        // modality, the second and rand() seeded with time(NULL), checked only with stat(), so two of its forked
        // children storing the same modality in the same second write one file and both answer Success, and an
        // instance is lost. px-sync's default four associations made this cell fail now and then: the peer's
        // file-name clash, not px's (see scripts/dcmqrscp-start.sh).
        try await matrix.cell(
            zips, "QREMPTY@127.0.0.1:\(emptyPort)", studies: 5, equals: context.corpus.dataSets,
            pushOptions: ["--parallel", "1"])
    }

    /// The pairs run so far and a counter for fresh folders.
    struct Matrix {
        var work: String
        var checks = 0
        /// Options every run of the matrix takes (e.g. `--backend native`).
        var options: [String] = []

        /// `source` -> `destination`: the first run transfers `studies` studies and the destination then holds
        /// `expected`; a second run transfers nothing. `pushOptions` are added to the two runs into
        /// `destination` (not to reading it back).
        mutating func cell(
            _ source: String, _ destination: String, studies: Int, equals expected: [String: DataSet],
            pushOptions: [String] = []
        ) async throws {
            let pair = "\(source) -> \(destination)"
            let first = try await SyncTests.sync([source, destination] + options + pushOptions)
            #expect(first.exitCode == 0, "\(pair): \(first.stdout) \(first.stderr)")
            #expect(first.json?["data"]?["transferred"] == .number(String(studies)), "\(pair): \(first.stdout)")
            try await expectHolds(destination, expected)
            let second = try await SyncTests.sync([source, destination] + options + pushOptions)
            #expect(second.exitCode == 0, "\(pair), second run: \(second.stdout) \(second.stderr)")
            #expect(second.json?["data"]?["transferred"] == .number("0"), "\(pair), second run: \(second.stdout)")
            #expect(second.json?["data"]?["instancesTransferred"] == .number("0"), "\(pair), second run")
        }

        /// `place` holds exactly `expected`: read back into a new folder (place -> folder, a pair the
        /// other px-sync suites check) and compared data set by data set.
        mutating func expectHolds(_ place: String, _ expected: [String: DataSet]) async throws {
            checks += 1
            let folder = work + "/check-\(checks)"
            let read = try await SyncTests.sync([place, folder] + options)
            #expect(read.exitCode == 0, "reading \(place) back: \(read.stdout) \(read.stderr)")
            try SyncTests.expectFolder(folder, equals: expected)
        }
    }

    /// px-serve over a new empty folder `WORK/NAME`; its peer string.
    static func serve(_ work: String, _ name: String) async throws -> (PeerProcess, String) {
        let root = work + "/" + name
        let logs = work + "/" + name + "-logs"
        for folder in [root, logs] {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        let (server, port) = try await ServeCommandTests.start(root, work: logs)
        return (server, "PXSERVE@127.0.0.1:\(port)")
    }

    /// Removes one instance of `study` from its archive in a zip folder: the archive is rebuilt (through a
    /// folder) without it.
    static func removeOneInstance(of study: String, from zips: String, work: String) async throws {
        let folder = work + "/rebuild"
        let extracted = try await SyncTests.sync(["zip:" + zips, folder, "--StudyInstanceUID", study])
        try #require(extracted.exitCode == 0, "\(extracted.stdout)")
        let files = SyncTests.files(under: folder)
        try #require(files.count >= 2, "\(files)")
        try FileManager.default.removeItem(atPath: files[0])
        let archive = try #require(
            SyncTests.files(under: zips).first { $0.hasSuffix(".zip") && $0.contains(study) }, "no archive of \(study)")
        try FileManager.default.removeItem(atPath: archive)
        let rebuilt = try await SyncTests.sync([folder, "zip:" + zips])
        try #require(rebuilt.exitCode == 0, "\(rebuilt.stdout)")
        #expect(rebuilt.json?["data"]?["instancesTransferred"] == .number(String(files.count - 1)))
    }
}

/// The pair matrix over a corpus that mixes transfer syntaxes and character sets (``corpus``, pydicom's
/// test files) with the native backend (whose C-GET accepts the compressed syntaxes), through a second Orthanc (its own, as this suite adds
/// studies to it): folder -> Orthanc DIMSE read back by C-GET and by WADO-RS, folder -> zip -> px-serve, and
/// an instance removed from Orthanc coming back alone, through DIMSE and through DICOMweb.
@Suite(
    "px-sync pair matrix, mixed corpus", .tags(.integration), .integrationTier, .serialized,
    OrthancCommandPeer(dicomWeb: true), .timeLimit(.minutes(5)))
struct SyncMixedCorpusMatrixTests {
    @Test(
        "mixed syntaxes and character sets: folder -> node, node -> folder, web -> folder, node <-> web, folder -> zip -> px-serve"
    )
    func mixedCorpus() async throws {
        let context = try #require(OrthancCommandPeer.current, "the suite's Orthanc is not running")
        let work = context.work + "/mixed"
        let flat = work + "/flat"
        try FileManager.default.createDirectory(atPath: flat, withIntermediateDirectories: true)
        var mixed: [String: DataSet] = [:]
        var studies = Set<String>()
        for name in Self.corpus {
            let path = flat + "/" + (name.split(separator: "/").last.map(String.init) ?? name)
            try FileManager.default.copyItem(atPath: Self.pydicomData + name, toPath: path)
            let dataSet = try Part10File(contentsOf: path).dataSet
            mixed[dataSet.string(.sopInstanceUID) ?? path] = dataSet
            studies.insert(dataSet.string(.studyInstanceUID) ?? path)
        }
        try #require(mixed.count == Self.corpus.count)
        let everything = context.corpus.dataSets.merging(mixed) { first, _ in first }
        // What Orthanc gives back by C-GET: the instances without their Data Set Trailing Padding
        // (FFFC,FFFC), which its C-STORE sub-operations leave out (PS3.5 §7.8 lets a sender drop it;
        // its WADO-RS returns it).
        var overDIMSE = everything
        for uid in overDIMSE.keys { _ = overDIMSE[uid]?.remove(Tag(0xFFFC, 0xFFFC)) }
        let orthanc = context.peer
        let web = "http://127.0.0.1:\(context.httpPort)/dicom-web"
        var matrix = SyncPairMatrixTests.Matrix(work: work, options: ["--backend", "native"])

        // folder -> node (C-STORE); Orthanc then holds its own corpus and these, read back by C-GET and WADO-RS.
        try await matrix.cell(flat, orthanc, studies: studies.count, equals: overDIMSE)
        try await matrix.expectHolds(web, everything)
        // Orthanc DIMSE <-> Orthanc DICOMweb: one archive seen through both, so each study is found present
        // (the two inventories count alike) and nothing moves.
        let held = String(studies.count + context.corpus.studies.count)
        for (source, destination) in [(orthanc, web), (web, orthanc)] {
            let same = try await SyncTests.sync([source, destination] + matrix.options)
            #expect(same.exitCode == 0, "\(source) -> \(destination): \(same.stdout) \(same.stderr)")
            #expect(same.json?["data"]?["found"] == .number(held), "\(source) -> \(destination): \(same.stdout)")
            #expect(same.json?["data"]?["alreadyPresent"] == .number(held), "\(source) -> \(destination)")
            #expect(same.json?["data"]?["instancesTransferred"] == .number("0"), "\(source) -> \(destination)")
        }

        // folder -> zip, zip -> an empty px-serve (read back by C-GET).
        let zips = "zip:" + work + "/zips"
        try await matrix.cell(flat, zips, studies: studies.count, equals: mixed)
        let (served, servedPeer) = try await SyncPairMatrixTests.serve(work, "serve")
        try await matrix.cell(zips, servedPeer, studies: studies.count, equals: mixed)
        _ = await served.stop()

        // An instance removed from Orthanc comes back alone: into the node (C-STORE), then into the web (STOW-RS).
        for destination in [orthanc, web] {
            let removed = try #require(mixed.keys.sorted().first)
            try await Self.deleteInstanceFromOrthanc(removed, httpPort: context.httpPort)
            let repaired = try await SyncTests.sync([flat, destination] + matrix.options)
            #expect(repaired.exitCode == 0, "\(destination): \(repaired.stdout) \(repaired.stderr)")
            #expect(
                repaired.json?["data"]?["instancesTransferred"] == .number("1"), "\(destination): \(repaired.stdout)")
            try await matrix.expectHolds(orthanc, overDIMSE)
        }
    }

    /// pydicom's test files, each its own instance: explicit and implicit little endian, big endian,
    /// deflated, JPEG baseline, JPEG 2000, RLE (the three SC_rgb files are one series of one study), and ISO
    /// 2022 Japanese, GB18030, Arabic and Cyrillic character sets.
    static let corpus = [
        "test_files/CT_small.dcm", "test_files/MR_small_bigendian.dcm", "test_files/image_dfl.dcm",
        "test_files/JPEG2000.dcm", "test_files/SC_rgb_rle.dcm", "test_files/SC_rgb_jpeg_dcmtk.dcm",
        "test_files/SC_rgb_dcmtk_+eb+cr.dcm", "test_files/rtdose_1frame.dcm", "test_files/test-SR.dcm",
        "charset_files/chrH31.dcm", "charset_files/chrX2.dcm", "charset_files/chrArab.dcm",
        "charset_files/chrRuss.dcm",
    ]

    static var pydicomData: String { TestSupport.venv + "/lib/python3.11/site-packages/pydicom/data/" }

    /// Deletes one instance from Orthanc through its REST API (/tools/lookup, DELETE /instances/ID).
    static func deleteInstanceFromOrthanc(_ sopInstanceUID: String, httpPort: Int) async throws {
        let deleted = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                "-c",
                """
                import json, sys, urllib.request
                base = "http://127.0.0.1:" + sys.argv[1]
                found = json.load(urllib.request.urlopen(urllib.request.Request(base + "/tools/lookup", data=sys.argv[2].encode(), method="POST")))
                ids = [f["ID"] for f in found if f["Type"] == "Instance"]
                assert len(ids) == 1, found
                urllib.request.urlopen(urllib.request.Request(base + "/instances/" + ids[0], method="DELETE"))
                """,
                String(httpPort), sopInstanceUID,
            ])
        try #require(deleted.exitCode == 0, "\(deleted.stderr)")
    }
}
