import DICOMData
import Foundation
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

    /// The pairs run so far and a counter for fresh folders.
    struct Matrix {
        var work: String
        var checks = 0

        /// `source` -> `destination`: the first run transfers `studies` studies and the destination then holds
        /// `expected`; a second run transfers nothing.
        mutating func cell(
            _ source: String, _ destination: String, studies: Int, equals expected: [String: DataSet]
        ) async throws {
            let pair = "\(source) -> \(destination)"
            let first = try await SyncTests.sync([source, destination])
            #expect(first.exitCode == 0, "\(pair): \(first.stdout) \(first.stderr)")
            #expect(first.json?["data"]?["transferred"] == .number(String(studies)), "\(pair): \(first.stdout)")
            try await expectHolds(destination, expected)
            let second = try await SyncTests.sync([source, destination])
            #expect(second.exitCode == 0, "\(pair), second run: \(second.stdout) \(second.stderr)")
            #expect(second.json?["data"]?["transferred"] == .number("0"), "\(pair), second run: \(second.stdout)")
            #expect(second.json?["data"]?["instancesTransferred"] == .number("0"), "\(pair), second run")
        }

        /// `place` holds exactly `expected`: read back into a new folder (place -> folder, a pair the
        /// other px-sync suites check) and compared data set by data set.
        mutating func expectHolds(_ place: String, _ expected: [String: DataSet]) async throws {
            checks += 1
            let folder = work + "/check-\(checks)"
            let read = try await SyncTests.sync([place, folder])
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
