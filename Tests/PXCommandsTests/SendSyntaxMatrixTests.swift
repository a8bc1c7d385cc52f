import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Every sending path with ten of pydicom's files, one per transfer syntax family (issue 20, "Sending what
/// the file is"): px-push on both backends to storescp (+xa), Orthanc and pynetdicom; px-sync folder ->
/// Orthanc on both backends; px-serve as the source of a C-GET (a pynetdicom requestor) and of a C-MOVE to
/// storescp. Each received data set is compared with its original by pydicom (scripts/syntax-matrix.py),
/// and its transfer syntax must be the original's, but where px declared a lossless fallback (Big Endian
/// and Deflated to Explicit VR Little Endian) and the peer had no context in the original's.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct SendSyntaxMatrixTests {
    /// The files and their transfer syntaxes (the table in docs/transfer-syntaxes.rst).
    static let files: [(name: String, syntax: String)] = [
        ("SC_rgb_jpeg_dcmtk.dcm", "1.2.840.10008.1.2.4.50"),  // JPEG Baseline
        ("JPEG-lossy.dcm", "1.2.840.10008.1.2.4.51"),  // JPEG Extended
        ("SC_rgb_jpeg_gdcm.dcm", "1.2.840.10008.1.2.4.70"),  // JPEG Lossless SV1
        ("MR_small_jpeg_ls_lossless.dcm", "1.2.840.10008.1.2.4.80"),  // JPEG-LS Lossless
        ("SC_rgb_jls_lossy_line.dcm", "1.2.840.10008.1.2.4.81"),  // JPEG-LS Near-Lossless
        ("GDCMJ2K_TextGBR.dcm", "1.2.840.10008.1.2.4.90"),  // JPEG 2000 Lossless
        ("JPEG2000.dcm", "1.2.840.10008.1.2.4.91"),  // JPEG 2000
        ("MR_small_RLE.dcm", "1.2.840.10008.1.2.5"),  // RLE Lossless
        ("ExplVR_BigEnd.dcm", "1.2.840.10008.1.2.2"),  // Explicit VR Big Endian
        ("image_dfl.dcm", "1.2.840.10008.1.2.1.99"),  // Deflated Explicit VR Little Endian
    ]
    static let uncompressed: Set<String> = ["1.2.840.10008.1.2.2", "1.2.840.10008.1.2.1.99"]
    static let script = TestSupport.repositoryRoot + "/scripts/syntax-matrix.py"

    /// Copies of the files in `work/originals`; the JPEG-LS Near-Lossless one, which has no Study and Series
    /// Instance UIDs, gets them, and the RLE one, which shares its UIDs with the JPEG-LS Lossless one, gets
    /// its own (pydicom writes them again in their own syntax, Pixel Data untouched). pydicom's RT Dose RLE
    /// files have SOP Class and Instance UID as UN, which storescu cannot read.
    static func originals(_ work: String) async throws -> String {
        let directory = work + "/originals"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for file in Self.files {
            try FileManager.default.copyItem(
                atPath: PushHostileFilesTests.pydicomFiles + "/" + file.name, toPath: directory + "/" + file.name)
        }
        let fix = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                "-c",
                """
                import sys; from pydicom import dcmread
                d = dcmread(sys.argv[1]); d.PatientID = "JLS1"
                d.StudyInstanceUID = "1.2.826.0.1.3680043.10.543.20.1"
                d.SeriesInstanceUID = "1.2.826.0.1.3680043.10.543.20.1.1"
                d.save_as(sys.argv[1])
                d = dcmread(sys.argv[2])
                d.SOPInstanceUID = d.file_meta.MediaStorageSOPInstanceUID = "1.2.826.0.1.3680043.10.543.20.2.1.1"
                d.StudyInstanceUID = "1.2.826.0.1.3680043.10.543.20.2"
                d.SeriesInstanceUID = "1.2.826.0.1.3680043.10.543.20.2.1"
                d.save_as(sys.argv[2])
                """,
                directory + "/SC_rgb_jls_lossy_line.dcm", directory + "/MR_small_RLE.dcm",
            ])
        try #require(fix.exitCode == 0, "\(fix.stderr)")
        // The syntaxes are what the table says.
        for file in Self.files {
            let syntax = try Part10File.checkStructure(
                contentsOf: directory + "/" + file.name, maximumInflatedSize: 1 << 28
            ).transferSyntax.uid
            #expect(syntax == file.syntax, "\(file.name)")
        }
        return directory
    }

    /// scripts/syntax-matrix.py compare: each original's received copy, by SOP Instance UID.
    static func compare(_ originals: String, _ received: String) async throws -> [String: JSONValue] {
        let run = try await PeerHarness.runAsync(TestSupport.python, [Self.script, "compare", originals, received])
        try #require(run.exitCode == 0, "\(run.stderr)")
        let json = try JSONParser.parse(run.stdout)
        var out: [String: JSONValue] = [:]
        for member in json.objectValue ?? [] { out[member.key] = member.value }
        return out
    }

    /// Every original arrived equal and in its own syntax; or, for `converted` (Big Endian and Deflated), in
    /// Explicit VR Little Endian with the same elements and pixel values. `expected` limits the originals
    /// looked at (by file name).
    static func expectArrived(
        _ comparison: [String: JSONValue], path: String, converted: Bool = false, expected: Set<String>? = nil
    ) {
        var seen = 0
        for (uid, entry) in comparison {
            let name = String((entry["original"]?.stringValue ?? "").split(separator: "/").last ?? "")
            if let expected, !expected.contains(name) { continue }
            seen += 1
            let original = entry["originalSyntax"]?.stringValue ?? ""
            guard let received = entry["receivedSyntax"]?.stringValue else {
                Issue.record("\(path): \(name) (\(uid), \(original)) did not arrive")
                continue
            }
            if received == original {
                #expect(entry["equal"] == .bool(true), "\(path): \(name) arrived in its syntax but differs: \(entry)")
            } else {
                #expect(
                    converted && Self.uncompressed.contains(original) && received == "1.2.840.10008.1.2.1",
                    "\(path): \(name) arrived in \(received), not in its own \(original)")
                #expect(
                    entry["equalAfterConversion"] == .bool(true), "\(path): \(name) differs after conversion: \(entry)")
            }
        }
        #expect(seen == (expected?.count ?? Self.files.count), "\(path): \(comparison.count) compared")
    }

    /// The command's JSON says every file succeeded.
    static func expectSucceeded(_ run: PeerHarness.Run, _ path: String) {
        #expect(run.exitCode == 0, "\(path): \(run.stdout) \(run.stderr)")
        for file in run.json?["data"]?["files"]?.arrayValue ?? [] {
            #expect(file["status"]?.stringValue == "success", "\(path): \(file)")
        }
    }

    /// Orthanc in `directory` (scripts/orthanc-start.sh): its DICOM port.
    static func startOrthanc(_ directory: String) async throws -> Int {
        try await Self.startOrthanc(directory, dicomWeb: false).dicom
    }

    /// Orthanc in `directory`, with its DICOMweb plugin when `dicomWeb`: its DICOM and HTTP ports.
    static func startOrthanc(_ directory: String, dicomWeb: Bool) async throws -> (dicom: Int, http: Int) {
        var environment = ["PATH": OrthancCommandPeer.path]
        if dicomWeb { environment["PX_ORTHANC_DICOMWEB"] = "1" }
        let start = try await PeerHarness.runAsync(
            TestSupport.repositoryRoot + "/scripts/orthanc-start.sh", [directory], environment: environment)
        try #require(start.exitCode == 0, "orthanc-start.sh: \(start.stderr)")
        let ports = (start.stdout.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
        try #require(ports.count == 2, "orthanc-start.sh printed no ports: \(start.stdout)")
        return (ports[0], ports[1])
    }

    @Test("STOW-RS of a batch with one instance Orthanc refuses: each file's outcome, the refused one failed, exit 1")
    func stowReportsEachInstance() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-send-stow-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let originals = try await Self.originals(work)
        // A well-formed file without Study Instance UID, first in the folder: Orthanc names it in the Failed
        // SOP Sequence (0xC000), answers HTTP 400 for the request, and stores none of the files after it
        // without naming them; px sends those again in smaller requests.
        let refused = "1.2.826.0.1.3680043.10.543.20.9"
        let make = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                "-c",
                """
                import sys; from pydicom import dcmread
                d = dcmread(sys.argv[1]); del d.StudyInstanceUID; d.SOPInstanceUID = sys.argv[3]
                d.save_as(sys.argv[2])
                """,
                PushHostileFilesTests.pydicomFiles + "/CT_small.dcm", originals + "/0-no-study.dcm", refused,
            ])
        try #require(make.exitCode == 0, "\(make.stderr)")
        let orthanc = work + "/orthanc"
        let ports = try await Self.startOrthanc(orthanc, dicomWeb: true)
        let push = try await PeerHarness.runAsync("px-push", ["http://127.0.0.1:\(ports.http)/dicom-web", originals])
        await OrthancCommandPeer.stop(orthanc)
        #expect(push.exitCode == 1, "\(push.stdout) \(push.stderr)")
        let files = push.json?["data"]?["files"]?.arrayValue ?? []
        #expect(files.count == Self.files.count + 1, "\(push.stdout)")
        for file in files {
            if file["SOPInstanceUID"]?.stringValue == refused {
                #expect(file["status"]?.stringValue == "failed", "\(file)")
            } else {
                #expect(file["status"]?.stringValue == "success", "\(file)")
            }
        }
        let comparison = try await Self.compare(originals, orthanc + "/db")
        #expect(comparison[refused]?["received"] == .null, "\(comparison[refused] ?? .null)")
        Self.expectArrived(
            comparison, path: "STOW-RS -> Orthanc", expected: Set(Self.files.map(\.name)))
    }

    @Test("px-push, both backends, to storescp +xa and pynetdicom: every syntax arrives as it is")
    func pushToStorescpAndPynetdicom() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-send-matrix-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let originals = try await Self.originals(work)
        for backend in PushGetCommandTests.backends {
            let received = work + "/storescp-" + backend
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let push = try await PushHostileFilesTests.pushToStorescp(
                ["+xa", "-od", received], [originals], backend: backend, log: work + "/storescp-\(backend).log")
            Self.expectSucceeded(push, "px-push \(backend) -> storescp")
            Self.expectArrived(try await Self.compare(originals, received), path: "px-push \(backend) -> storescp")

            let fromPynetdicom = work + "/pynetdicom-" + backend
            let (scp, port) = try await PushHostileFilesTests.startPynetdicom(
                fromPynetdicom, log: work + "/pynetdicom-\(backend).log")
            let toPynetdicom = try await PeerHarness.runAsync(
                "px-push", ["PYSCP@127.0.0.1:\(port)", originals, "--backend", backend])
            await scp.stop()
            Self.expectSucceeded(toPynetdicom, "px-push \(backend) -> pynetdicom")
            Self.expectArrived(
                try await Self.compare(originals, fromPynetdicom), path: "px-push \(backend) -> pynetdicom")
        }
    }

    @Test("px-push and px-sync folder -> node, both backends, to Orthanc: every syntax arrives as it is")
    func pushAndSyncToOrthanc() async throws {
        guard PeerHarness.requireTools(["storescu", "findscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-send-matrix-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let originals = try await Self.originals(work)
        for backend in PushGetCommandTests.backends {
            let orthanc = work + "/orthanc-push-" + backend
            let port = try await Self.startOrthanc(orthanc)
            let push = try await PeerHarness.runAsync(
                "px-push", ["ORTHANC@127.0.0.1:\(port)", originals, "--backend", backend])
            await OrthancCommandPeer.stop(orthanc)
            Self.expectSucceeded(push, "px-push \(backend) -> Orthanc")
            Self.expectArrived(
                try await Self.compare(originals, orthanc + "/db"), path: "px-push \(backend) -> Orthanc")

            // px-sync reads a folder place: a copy of the originals, indexed on the way.
            let place = work + "/place-" + backend
            try FileManager.default.copyItem(atPath: originals, toPath: place)
            let synced = work + "/orthanc-sync-" + backend
            let syncPort = try await Self.startOrthanc(synced)
            let sync = try await PeerHarness.runAsync(
                "px-sync", [place, "ORTHANC@127.0.0.1:\(syncPort)", "--backend", backend])
            await OrthancCommandPeer.stop(synced)
            #expect(sync.exitCode == 0, "px-sync \(backend): \(sync.stdout) \(sync.stderr)")
            #expect(
                sync.json?["data"]?["instancesTransferred"] == .number(String(Self.files.count)),
                "px-sync \(backend): \(sync.stdout)")
            Self.expectArrived(
                try await Self.compare(originals, synced + "/db"), path: "px-sync folder -> Orthanc (\(backend))")
        }
    }

    @Test("px-serve: C-GET sub-operations in the file's syntax or its lossless fallback, C-MOVE as it is")
    func serveGetAndMove() async throws {
        guard PeerHarness.requireTools(["storescp", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-send-matrix-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let originals = try await Self.originals(work)
        let place = work + "/place"
        try FileManager.default.copyItem(atPath: originals, toPath: place)
        var studies: [String] = []
        var pairs: [String] = []
        for file in Self.files {
            let header = try Part10File.readHeader(contentsOf: originals + "/" + file.name)
            let study = try #require(header.dataSet.string(.studyInstanceUID), "\(file.name)")
            if !studies.contains(study) { studies.append(study) }
            let sopClass = try #require(header.meta.string(.mediaStorageSOPClassUID))
            pairs.append("\(sopClass)=\(file.syntax)")
        }
        let destinationPort = try TestSupport.freePort()
        let moved = work + "/moved"
        try FileManager.default.createDirectory(atPath: moved, withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["+xa", "-aet", "DEST", "-od", moved, String(destinationPort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        #expect(try await TestSupport.waitForEcho(port: destinationPort, aeTitle: "DEST"))
        let (server, port) = try await ServeCommandTests.start(
            place, work: work, extra: ["--move-destination", "DEST=127.0.0.1:\(destinationPort)"])
        defer { server.kill() }

        // A requestor with one context per storage SOP class of the files offering every syntax pynetdicom
        // knows (its habit; for all 127 storage classes the A-ASSOCIATE-RQ would pass px-serve's 64 KiB bound):
        // px-serve accepts Explicit VR Little Endian there, the uncompressed files arrive (Big Endian and
        // Deflated converted without loss), and each compressed one is a failed sub-operation, not a
        // broken association.
        let combined = work + "/get-combined"
        let classes = Array(Set(pairs.map { String($0.split(separator: "=")[0]) })).sorted()
        let get = try await PeerHarness.runAsync(
            TestSupport.python,
            [Self.script, "get", "127.0.0.1", String(port), "PXSERVE", combined] + studies
                + classes.flatMap { ["--context", $0 + "=all"] })
        let getJSON = try JSONParser.parse(get.stdout)
        #expect(getJSON["association"]?.stringValue == "accepted", "\(get.stdout) \(get.stderr)")
        for member in getJSON["acceptedContexts"]?.objectValue ?? [] {
            #expect(
                member.value.arrayValue?.allSatisfy { $0.stringValue == "1.2.840.10008.1.2.1" } == true,
                "\(member.key): \(member.value)")
        }
        let failed = (getJSON["results"]?.arrayValue ?? []).compactMap { $0["failed"]?.intValue }.reduce(0, +)
        #expect(failed == Self.files.count - Self.uncompressed.count, "\(get.stdout)")
        let uncompressedNames = Set(Self.files.filter { Self.uncompressed.contains($0.syntax) }.map(\.name))
        Self.expectArrived(
            try await Self.compare(originals, combined), path: "px-serve C-GET (one context per class)",
            converted: true, expected: uncompressedNames)

        // A requestor with one context per (SOP class, syntax) of the files: each file in its own syntax.
        let separate = work + "/get-separate"
        let getSeparate = try await PeerHarness.runAsync(
            TestSupport.python,
            [Self.script, "get", "127.0.0.1", String(port), "PXSERVE", separate] + studies
                + pairs.flatMap { ["--context", $0] })
        let separateJSON = try JSONParser.parse(getSeparate.stdout)
        for result in separateJSON["results"]?.arrayValue ?? [] {
            #expect(result["status"] == .number("0"), "\(getSeparate.stdout)")
        }
        Self.expectArrived(try await Self.compare(originals, separate), path: "px-serve C-GET (a context per syntax)")

        // C-MOVE: the sub-association proposes each file's own syntax; storescp +xa takes them all.
        let move = try await PeerHarness.runAsync(
            "px-move",
            ["PXSERVE@127.0.0.1:\(port)", "--destination", "DEST", "--backend", "native"]
                + studies.flatMap { ["--StudyInstanceUID", $0] })
        #expect(move.exitCode == 0, "\(move.stdout) \(move.stderr)")
        let arrived = await TestSupport.poll(seconds: 10) {
            ServeCommandTests.files(under: moved).count == Self.files.count
        }
        #expect(arrived, "\(ServeCommandTests.files(under: moved))")
        Self.expectArrived(try await Self.compare(originals, moved), path: "px-serve C-MOVE -> storescp")
        await server.stop()
    }
}
