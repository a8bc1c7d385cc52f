import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-serve: a folder place served to DCMTK's echoscu, findscu, storescu, getscu and movescu (into storescp),
/// and to our own px-find and px-get, on free loopback ports. A file stored into the place is found and
/// retrieved without a restart.
@Suite(
    .tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(5)),
    .requires("echoscu", "findscu", "storescu", "getscu", "movescu", "storescp"))
struct ServeCommandTests {
    /// A CT instance of patient `patient`, study `1.2.826.0.1.<study>`, series `.<series>`, number `number`.
    static func instance(patient: String, study: Int, series: Int, number: Int) throws -> [UInt8] {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study).\(series).\(number)")
        ds.set(.studyDate, vr: .DA, string: "20240315")
        ds.set(.modality, vr: .CS, string: "CT")
        ds.set(.patientName, vr: .PN, string: "DOE^\(patient)")
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study)")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.826.0.1.\(study).\(series)")
        ds.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: UInt8(number), count: 128)))
        return try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    /// A place with patient P1 (study 1: two series of 2 and 1 instances) and P2 (study 2: one instance).
    static func makePlace(_ root: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
        for (patient, study, series, number) in [("P1", 1, 1, 1), ("P1", 1, 1, 2), ("P1", 1, 2, 1), ("P2", 2, 1, 1)] {
            try Data(try Self.instance(patient: patient, study: study, series: series, number: number)).write(
                to: URL(fileURLWithPath: root + "/in/\(study)-\(series)-\(number).dcm"))
        }
    }

    /// px-serve on a free port, once it has indexed the place and reported `listening`.
    static func start(_ place: String, work: String, extra: [String] = []) async throws -> (PeerProcess, Int) {
        let server = try PeerProcess(
            TestSupport.binDirectory + "/px-serve", [place, "--port", "0", "--aet", "PXSERVE"] + extra,
            logFile: work + "/serve.ndjson", errorFile: work + "/serve.err")
        let listening = try await server.waitForEvent { $0["event"]?.stringValue == "listening" }
        return (server, try #require(listening["port"]?.intValue))
    }

    /// The regular files below `root` (relative paths).
    static func files(under root: String) -> [String] {
        (FileManager.default.enumerator(atPath: root)?.allObjects as? [String] ?? []).filter { path in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory)
                && !isDirectory.boolValue
        }
    }

    @Test func findsAtEveryLevelAndRetrievesWhatIsStoredWithoutARestart() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-serve-") { work in
            let place = work + "/place"
            try Self.makePlace(place)
            let (server, port) = try await Self.start(place, work: work)
            defer { server.kill() }
            let indexed = try await server.waitForEvent { $0["event"]?.stringValue == "indexed" }
            #expect(indexed["added"]?.intValue == 4)

            let echo = try await TestSupport.run("echoscu", ["-aec", "PXSERVE", "127.0.0.1", String(port)])
            #expect(echo.status == 0, "\(echo.output)")

            // DCMTK's findscu, Study Root at STUDY level with a computed count, Patient Root at IMAGE level.
            let studies = try await TestSupport.run(
                "findscu",
                [
                    "-S", "-aec", "PXSERVE", "-k", "QueryRetrieveLevel=STUDY", "-k", "StudyInstanceUID", "-k",
                    "PatientID=P1", "-k", "NumberOfStudyRelatedInstances", "127.0.0.1", String(port),
                ])
            #expect(studies.status == 0)
            #expect(studies.output.contains("1.2.826.0.1.1"), "\(studies.output)")
            #expect(studies.output.contains("[3 ]"), "\(studies.output)")
            #expect(!studies.output.contains("1.2.826.0.1.2]"))
            let images = try await TestSupport.run(
                "findscu",
                [
                    "-P", "-aec", "PXSERVE", "-k", "QueryRetrieveLevel=IMAGE", "-k", "PatientID=P1", "-k",
                    "StudyInstanceUID=1.2.826.0.1.1", "-k", "SeriesInstanceUID=1.2.826.0.1.1.1", "-k", "SOPInstanceUID",
                    "127.0.0.1", String(port),
                ])
            #expect(images.output.components(separatedBy: "SOPInstanceUID").count - 1 == 2, "\(images.output)")

            // Our own px-find (native) at SERIES level.
            let find = try await PeerHarness.runAsync(
                "px-find",
                [
                    "PXSERVE@127.0.0.1:\(port)", "--level", "series", "--StudyInstanceUID", "1.2.826.0.1.1",
                    "--format", "ndjson", "--backend", "native",
                ])
            #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
            // Two series lines, then the envelope.
            #expect(find.stdout.components(separatedBy: "\"SeriesInstanceUID\"").count - 1 == 2, "\(find.stdout)")

            // A new instance stored into the place is placed, recorded, and served at once.
            let newFile = work + "/new.dcm"
            try Data(try Self.instance(patient: "P3", study: 3, series: 1, number: 1)).write(
                to: URL(fileURLWithPath: newFile))
            let store = try await TestSupport.run("storescu", ["-aec", "PXSERVE", "127.0.0.1", String(port), newFile])
            #expect(store.status == 0, "\(store.output)")
            _ = try await server.waitForEvent { $0["event"]?.stringValue == "instanceReceived" }
            let got = work + "/got"
            try FileManager.default.createDirectory(atPath: got, withIntermediateDirectories: true)
            let get = try await TestSupport.run(
                "getscu",
                [
                    "-S", "-aec", "PXSERVE", "-od", got, "-k", "QueryRetrieveLevel=STUDY", "-k",
                    "StudyInstanceUID=1.2.826.0.1.3", "127.0.0.1", String(port),
                ])
            #expect(get.status == 0, "\(get.output)")
            let gotFiles = Self.files(under: got)
            #expect(gotFiles.count == 1, "\(gotFiles) \(get.output)")
            if let name = gotFiles.first {
                let sent = try Part10File(contentsOf: newFile).dataSet
                let received = try Part10File(contentsOf: got + "/" + name).dataSet
                #expect(
                    try DataSetWriter.encode(received, transferSyntax: .explicitVRLittleEndian)
                        == DataSetWriter.encode(sent, transferSyntax: .explicitVRLittleEndian))
            }

            // px-get (native) of study 1: three instances.
            let pxGet = try await PeerHarness.runAsync(
                "px-get",
                [
                    "PXSERVE@127.0.0.1:\(port)", "-d", work + "/pxget", "--StudyInstanceUID", "1.2.826.0.1.1",
                    "--backend", "native",
                ])
            #expect(pxGet.exitCode == 0, "\(pxGet.stdout) \(pxGet.stderr)")
            #expect(pxGet.json?["data"]?["completed"] == .number("3"), "\(pxGet.stdout)")
            await server.stop()
        }
    }

    @Test func movesToADestinationGivenOnTheCommandLine() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-serve-move-") { work in
            let place = work + "/place"
            try Self.makePlace(place)
            let destinationPort = try TestSupport.freePort()
            let received = work + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let storescp = try PeerProcess(
                "storescp", ["-aet", "DEST", "-od", received, String(destinationPort)], logFile: work + "/storescp.log")
            defer { storescp.kill() }
            #expect(try await TestSupport.waitForEcho(port: destinationPort, aeTitle: "DEST"))
            let (server, port) = try await Self.start(
                place, work: work, extra: ["--move-destination", "DEST=127.0.0.1:\(destinationPort)"])
            defer { server.kill() }
            let move = try await TestSupport.run(
                "movescu",
                [
                    "-S", "-aec", "PXSERVE", "-aem", "DEST", "-k", "QueryRetrieveLevel=SERIES", "-k",
                    "StudyInstanceUID=1.2.826.0.1.1", "-k", "SeriesInstanceUID=1.2.826.0.1.1.1", "127.0.0.1",
                    String(port),
                ])
            #expect(move.status == 0, "\(move.output)")
            let arrived = await TestSupport.poll(seconds: 10) { Self.files(under: received).count == 2 }
            #expect(arrived, "\(Self.files(under: received)) \(move.output)")
            // An unknown destination is refused (0xA801).
            let unknown = try await TestSupport.run(
                "movescu",
                [
                    "-S", "-aec", "PXSERVE", "-aem", "NOWHERE", "-k", "QueryRetrieveLevel=STUDY", "-k",
                    "StudyInstanceUID=1.2.826.0.1.1", "127.0.0.1", String(port),
                ])
            #expect(unknown.status != 0)
            #expect(unknown.output.contains("MoveDestinationUnknown"), "\(unknown.output)")
            await server.stop()
        }
    }
}
