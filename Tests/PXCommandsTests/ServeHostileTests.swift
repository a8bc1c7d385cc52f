import DICOMData
import Foundation
import PXStorage
import PXTestSupport
import Testing

/// px-serve under hostile peers and a hostile file system (issue 24): a file of the place swapped for a link
/// (or rewritten) while px-serve runs is never sent, whatever C-GET or C-MOVE asks; peers that send C-FIND
/// requests and never read the answers lose their slots within `--write-timeout`. Real peers on loopback:
/// DCMTK's getscu, movescu, storescp and findscu, px-find, and the raw-socket peers of
/// scripts/hostile-serve-peer.py.
@Suite(
    .tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(5)),
    .requires("getscu", "movescu", "storescp", "findscu", "echoscu"))
struct ServeHostileTests {
    static let marker = "OUTSIDE^SECRET"

    /// A CT instance (as ``ServeCommandTests/instance(patient:study:series:number:)``) with `name` as Patient's
    /// Name and `fill` as every Pixel Data byte.
    static func instance(
        patient: String, name: String, study: Int, series: Int, number: Int, fill: UInt8, history: Int = 0
    ) throws -> [UInt8] {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study).\(series).\(number)")
        ds.set(.studyDate, vr: .DA, string: "20240315")
        ds.set(.modality, vr: .CS, string: "CT")
        ds.set(.patientName, vr: .PN, string: name)
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study)")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study).\(series)")
        if history > 0 {
            // Additional Patient History (LT): a long value a C-FIND can ask to be returned.
            ds.set(DataElement(tag: Tag(0x0010, 0x21B0), vr: .LT, bytes: [UInt8](repeating: 0x41, count: history)))
        }
        ds.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: fill, count: 256)))
        return try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    static func write(_ bytes: [UInt8], _ path: String) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Whether any file below `root` holds the outside file's marker.
    static func anyHoldsMarker(_ root: String) -> Bool {
        ServeCommandTests.files(under: root).contains { name in
            let bytes = FileManager.default.contents(atPath: root + "/" + name) ?? Data()
            return bytes.range(of: Data(Self.marker.utf8)) != nil
        }
    }

    @Test func aFileSwappedWhileServingIsNeverSent() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-serve-swap-") { work in
            let place = work + "/place"
            let outside = work + "/outside"
            // Study 1 (patient P1): a/1-1-1, a/1-1-2, b/1-2-1; study 2 (P2): keep/2-1-1.
            for (folder, study, series, number, patient) in [
                ("a", 1, 1, 1, "P1"), ("a", 1, 1, 2, "P1"), ("b", 1, 2, 1, "P1"), ("keep", 2, 1, 1, "P2"),
            ] {
                try Self.write(
                    try Self.instance(
                        patient: patient, name: "DOE^\(patient)", study: study, series: series, number: number,
                        fill: 0x11),
                    place + "/\(folder)/\(study)-\(series)-\(number).dcm")
            }
            // Outside the place: files claiming the same SOP instances, with a marker in them.
            for (study, series, number) in [(1, 1, 1), (1, 1, 2), (1, 2, 1), (2, 1, 1)] {
                try Self.write(
                    try Self.instance(
                        patient: "P\(study)", name: Self.marker, study: study, series: series, number: number,
                        fill: 0xEE),
                    outside + "/\(study)-\(series)-\(number).dcm")
            }
            let destinationPort = try TestSupport.freePort()
            let received = work + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let storescp = try PeerProcess(
                "storescp", ["-aet", "DEST", "-od", received, String(destinationPort)], logFile: work + "/storescp.log")
            defer { storescp.kill() }
            #expect(try await TestSupport.waitForEcho(port: destinationPort, aeTitle: "DEST"))
            let (server, port) = try await ServeCommandTests.start(
                place, work: work, extra: ["--move-destination", "DEST=127.0.0.1:\(destinationPort)"])
            defer { server.kill() }
            let indexed = try await server.waitForEvent { $0["event"]?.stringValue == "indexed" }
            #expect(indexed["instances"]?.intValue == 4)

            // While px-serve runs: a file becomes a link out of the place, a folder becomes a link to a folder
            // outside, and a file is rewritten in place.
            let fm = FileManager.default
            try fm.removeItem(atPath: place + "/a/1-1-1.dcm")
            try fm.createSymbolicLink(atPath: place + "/a/1-1-1.dcm", withDestinationPath: outside + "/1-1-1.dcm")
            try fm.moveItem(atPath: place + "/b", toPath: work + "/b-moved-away")
            try fm.createSymbolicLink(atPath: place + "/b", withDestinationPath: outside)
            try Data(try Self.instance(patient: "P1", name: "REWRITTEN", study: 1, series: 1, number: 2, fill: 0x22))
                .write(to: URL(fileURLWithPath: place + "/a/1-1-2.dcm"))

            // C-GET at IMAGE level of the three: three failed sub-operations, nothing arrives.
            let got = work + "/got"
            try fm.createDirectory(atPath: got, withIntermediateDirectories: true)
            let get = try await TestSupport.run(
                "getscu",
                [
                    "-S", "-v", "-aec", "PXSERVE", "-od", got, "-k", "QueryRetrieveLevel=IMAGE", "-k",
                    "StudyInstanceUID=1.2.826.0.1.1", "-k",
                    "SOPInstanceUID=1.2.826.0.1.1.1.1\\1.2.826.0.1.1.1.2\\1.2.826.0.1.1.2.1", "127.0.0.1",
                    String(port),
                ])
            #expect(ServeCommandTests.files(under: got).isEmpty, "\(get.output)")
            #expect(!Self.anyHoldsMarker(got))
            #expect(get.output.contains("Number of Completed Suboperations : 0"), "\(get.output)")
            #expect(get.output.contains("Number of Failed Suboperations    : 3"), "\(get.output)")
            let errors = String(decoding: fm.contents(atPath: work + "/serve.err") ?? Data(), as: UTF8.self)
            #expect(errors.components(separatedBy: "reason=notTheIndexedFile").count - 1 == 3, "\(errors)")

            // The index was brought up to date: the two links are gone from it, the rewritten file is the
            // place's file now (its new header is what C-FIND answers).
            let find = try await PeerHarness.runAsync(
                "px-find",
                [
                    "PXSERVE@127.0.0.1:\(port)", "--level", "image", "--StudyInstanceUID", "1.2.826.0.1.1",
                    "--format", "ndjson", "--backend", "native",
                ])
            #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
            #expect(!find.stdout.contains("1.2.826.0.1.1.1.1\""), "\(find.stdout)")
            #expect(!find.stdout.contains("1.2.826.0.1.1.2.1\""), "\(find.stdout)")
            #expect(find.stdout.contains("1.2.826.0.1.1.1.2\""), "\(find.stdout)")
            let rewritten = try await PeerHarness.runAsync(
                "px-find",
                [
                    "PXSERVE@127.0.0.1:\(port)", "--level", "image", "--StudyInstanceUID", "1.2.826.0.1.1",
                    "--PatientName", "REWRITTEN", "--format", "ndjson", "--backend", "native",
                ])
            #expect(rewritten.stdout.contains("1.2.826.0.1.1.1.2\""), "\(rewritten.stdout)")

            // C-MOVE of study 2 after its folder became a link: a failed sub-operation, nothing at storescp.
            try fm.moveItem(atPath: place + "/keep", toPath: work + "/keep-moved-away")
            try fm.createSymbolicLink(atPath: place + "/keep", withDestinationPath: outside)
            let move = try await TestSupport.run(
                "movescu",
                [
                    "-S", "-v", "-aec", "PXSERVE", "-aem", "DEST", "-k", "QueryRetrieveLevel=STUDY", "-k",
                    "StudyInstanceUID=1.2.826.0.1.2", "127.0.0.1", String(port),
                ])
            // Every sub-operation failed: 0xA702 (PS3.4 §C.4.2.1.4).
            #expect(
                move.output.contains("Final Move Response (Refused: OutOfResourcesSubOperations)"), "\(move.output)")
            #expect(ServeCommandTests.files(under: received).isEmpty, "\(move.output)")
            #expect(!Self.anyHoldsMarker(received))

            // What is still the indexed file is served as before: the rewritten instance, byte for byte.
            let again = try await TestSupport.run(
                "getscu",
                [
                    "-S", "-aec", "PXSERVE", "-od", got, "-k", "QueryRetrieveLevel=IMAGE", "-k",
                    "StudyInstanceUID=1.2.826.0.1.1", "-k", "SOPInstanceUID=1.2.826.0.1.1.1.2", "127.0.0.1",
                    String(port),
                ])
            let names = ServeCommandTests.files(under: got)
            #expect(names.count == 1, "\(again.output)")
            if let name = names.first {
                let sent = try Part10File(contentsOf: place + "/a/1-1-2.dcm").dataSet
                let arrived = try Part10File(contentsOf: got + "/" + name).dataSet
                #expect(
                    try DataSetWriter.encode(arrived, transferSyntax: .explicitVRLittleEndian)
                        == DataSetWriter.encode(sent, transferSyntax: .explicitVRLittleEndian))
            }
            await server.stop()
        }
    }

    /// Eight peers fill px-serve's eight slots with C-FIND requests and never read the answers: each is
    /// disconnected once px-serve's writes make no progress for `--write-timeout` (3 s here; not after the DIMSE
    /// timeout or never), and a ninth peer then gets an association and its answer.
    @Test func nonReadingFindPeersLoseTheirSlotsWithinTheWriteTimeout() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-serve-noread-") { work in
            let place = work + "/place"
            // 10 studies with 10 KB of Additional Patient History each, which the peers ask for: every request is
            // answered with about 100 KB, so px-serve's writes stall after a few requests.
            for study in 1...10 {
                try Self.write(
                    try Self.instance(
                        patient: "P\(study)", name: "DOE^P\(study)", study: study, series: 1, number: 1, fill: 0x11,
                        history: 10_000),
                    place + "/\(study).dcm")
            }
            let writeTimeout = 3.0
            let (server, port) = try await ServeCommandTests.start(
                place, work: work,
                extra: [
                    "--max-associations", "8", "--write-timeout", String(writeTimeout), "--dimse-timeout", "60",
                ])
            defer { server.kill() }
            let script = TestSupport.repositoryRoot + "/scripts/hostile-serve-peer.py"
            let start = ContinuousClock.now
            let results = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let run = try await PeerHarness.runAsync(
                            TestSupport.python,
                            [script, "find-no-read", "127.0.0.1", String(port), "--seconds", "40"])
                        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
                        return run.json
                    }
                }
                var all: [JSONValue] = []
                for try await result in group { if let result { all.append(result) } }
                return all
            }
            let elapsed = ContinuousClock.now - start
            #expect(results.count == 8)
            for result in results {
                let closed = HostilePeerTests.number(result["closedAfter"])
                let stalled = HostilePeerTests.number(result["stalledAfter"])
                #expect(stalled != nil, "\(result)")
                // Closed once px-serve's writes stalled for the write timeout: well before the 60 s DIMSE timeout
                // (or the 60 s default write timeout px-serve could not change before), even on two busy cores
                // where filling the buffers takes a while (3 to 15 s seen).
                #expect(closed.map { $0 < 30 } == true, "\(result) after \(elapsed)")
            }
            #expect(
                await server.waitFor(seconds: 10) {
                    server.events.filter { $0["event"]?.stringValue == "associationClosed" }.count >= 8
                })
            // A ninth peer gets its answer.
            let answered = try await TestSupport.poll(seconds: 10) {
                try await TestSupport.run(
                    "findscu",
                    [
                        "-S", "-aec", "PXSERVE", "-to", "10", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "StudyInstanceUID=1.2.826.0.1.7", "127.0.0.1", String(port),
                    ]
                ).status == 0
            }
            #expect(answered)
            await server.stop()
        }
    }

    /// Housekeeping: a `.px-incoming` file abandoned by a killed px (not written for more than
    /// ``PXStorage/StorageRoot/staleAge``) is removed when px-serve opens the place, one being written now is
    /// not; and every placed file has one mode, 0644 less the umask, whether it was written with that mode
    /// (a C-STORE into px-serve) or made by mkstemp with 0600 (as a DICOMweb part is).
    @Test func staleIncomingFilesGoAndPlacedFilesShareOneMode() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-serve-house-") { work in
            let fm = FileManager.default
            let place = work + "/place"
            let incoming = place + "/.px-incoming"
            try fm.createDirectory(atPath: incoming, withIntermediateDirectories: true)
            try Data("old".utf8).write(to: URL(fileURLWithPath: incoming + "/.px-incoming-old.part"))
            try fm.setAttributes(
                [.modificationDate: Date(timeIntervalSinceNow: -Double(StorageRoot.staleAge) - 600)],
                ofItemAtPath: incoming + "/.px-incoming-old.part")
            try Data("live".utf8).write(to: URL(fileURLWithPath: incoming + "/.px-incoming-live.part"))
            let (server, port) = try await ServeCommandTests.start(place, work: work)
            defer { server.kill() }
            #expect(!fm.fileExists(atPath: incoming + "/.px-incoming-old.part"))
            #expect(fm.fileExists(atPath: incoming + "/.px-incoming-live.part"))

            // A C-STORE into px-serve, placed through px-listen's placement.
            let sent = work + "/sent.dcm"
            try Self.write(
                try Self.instance(patient: "P9", name: "DOE^P9", study: 9, series: 1, number: 1, fill: 0x33), sent)
            let store = try await TestSupport.run("storescu", ["-aec", "PXSERVE", "127.0.0.1", String(port), sent])
            #expect(store.status == 0, "\(store.output)")
            let placed = try await server.waitForEvent { $0["event"]?.stringValue == "instanceReceived" }
            let dimsePath = try #require(placed["path"]?.stringValue)
            // A file made by mkstemp (0600), placed by the same code as a DICOMweb part.
            let placer = try InstancePlacer(
                root: work + "/other", layout: StorageLayout(), duplicates: .keep, fsync: false)
            let staging = try placer.storage.stagingFolder()
            let made = try POSIX.makeTemporaryFile(prefix: staging + "/px-web-")
            close(made.descriptor)
            let bytes = try Self.instance(patient: "P8", name: "DOE^P8", study: 8, series: 1, number: 1, fill: 0x44)
            try Data(bytes).write(to: URL(fileURLWithPath: made.path))
            let webPath = try placer.place(
                temporaryFile: made.path, dataSet: try Part10File(bytes: bytes).dataSet
            ).path
            func mode(_ path: String) throws -> Int {
                try #require(fm.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
            }
            #expect(try mode(dimsePath) == Int(FileMode.placed), "\(dimsePath)")
            #expect(try mode(webPath) == Int(FileMode.placed), "\(webPath)")
            #expect(FileMode.placed == 0o644 & ~FileMode.umask)
            await server.stop()
        }
    }

    /// A zip place's archive whose last instance entry is not DICOM (a valid zip entry, CRC and all): px-sync
    /// zip -> folder places the instances before it, and its `failed` event counts them (it said 0).
    @Test func aZipThatFailsHalfWayCountsWhatItPlaced() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-sync-zip-half-") { work in
            let folder = work + "/folder"
            for number in 1...3 {
                try Self.write(
                    try Self.instance(patient: "P1", name: "DOE^P1", study: 5, series: 1, number: number, fill: 0x11),
                    folder + "/\(number).dcm")
            }
            let zips = work + "/zips"
            let archived = try await PeerHarness.runAsync("px-sync", [folder, "zip:" + zips])
            #expect(archived.exitCode == 0, "\(archived.stdout) \(archived.stderr)")
            let archive = try #require(
                SyncTests.files(under: zips).first { $0.hasSuffix(".zip") }, "\(archived.stdout)")
            // The last instance entry rewritten as text, the archive otherwise as it was.
            let broken = try await PeerHarness.runAsync(
                TestSupport.python,
                [
                    "-c",
                    """
                    import sys, zipfile
                    path = sys.argv[1]
                    with zipfile.ZipFile(path) as z:
                        entries = [(i, z.read(i.filename)) for i in z.infolist()]
                    last = max(i for i, (info, _) in enumerate(entries) if info.filename.endswith(".dcm"))
                    entries[last] = (entries[last][0], b"not a DICOM file" * 8)
                    with zipfile.ZipFile(path, "w") as z:
                        for info, data in entries:
                            z.writestr(info, data)
                    """, archive,
                ])
            #expect(broken.exitCode == 0, "\(broken.stderr)")
            let back = work + "/back"
            let extracted = try await PeerHarness.runAsync("px-sync", ["zip:" + zips, back])
            #expect(extracted.exitCode != 0, "\(extracted.stdout)")
            let failed = extracted.stdout.split(separator: "\n").compactMap { line -> JSONValue? in
                guard line.hasPrefix("{") else { return nil }
                do { return try JSONParser.parse(String(line)) } catch { return nil }
            }.first { $0["event"]?.stringValue == "failed" }
            #expect(failed?["transferred"]?.intValue == 2, "\(extracted.stdout)")
            #expect(SyncTests.files(under: back).count == 2, "\(SyncTests.files(under: back))")
        }
    }
}
