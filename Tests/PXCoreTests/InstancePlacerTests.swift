import DICOMData
import Foundation
import PXCore
import Testing

/// ``InstancePlacer`` and ``StorageLayout`` templates on a real file system.
@Suite(.timeLimit(.minutes(2))) struct InstancePlacerTests {
    func dataSet(sop: String = "1.2.3.4", patient: String = "P1") -> DataSet {
        var ds = DataSet()
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.patientName, vr: .PN, string: "Doe^Jane")
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.3")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.3.1")
        ds.set(.sopInstanceUID, vr: .UI, string: sop)
        ds.set(.instanceNumber, vr: .IS, string: "12")
        return ds
    }

    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "px-placer-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func temporaryFile(in root: String, _ text: String) -> String {
        let path = root + "/tmp-" + UUID().uuidString + ".part"
        FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return path
    }

    func contents(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    @Test func templatesUseKeywordsAndPadInstanceNumber() throws {
        let layout = try StorageLayout(template: "{PatientID}/{StudyInstanceUID}/img-{InstanceNumber}-{SOPInstanceUID}.dcm")
        #expect(layout.components(for: dataSet(patient: "../x")) == ["_._x", "1.2.3", "img-00012-1.2.3.4.dcm"])
    }

    @Test(arguments: ["", "{NoSuchKeyword}/a.dcm", "{PatientID", "../{PatientID}.dcm", "a//b.dcm", ".hidden/{SOPInstanceUID}", "a\\b/{SOPInstanceUID}"])
    func badTemplatesAreUsageErrors(_ template: String) {
        #expect(throws: PXError.self) { try StorageLayout(template: template) }
    }

    @Test func keepOverwriteAndRenameDuplicates() throws {
        for policy in DuplicatePolicy.allCases {
            let root = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let placer = InstancePlacer(root: root, layout: StorageLayout(), duplicates: policy, fsync: policy == .rename)
            let first = try placer.place(temporaryFile: temporaryFile(in: root, "first"), dataSet: dataSet())
            #expect(first.duplicate == nil)
            #expect(first.directories.count == 3)
            let second = try placer.place(temporaryFile: temporaryFile(in: root, "second"), dataSet: dataSet())
            #expect(second.duplicate == policy)
            switch policy {
            case .keep:
                #expect(second.path == first.path && contents(first.path) == "first")
            case .overwrite:
                #expect(second.path == first.path && contents(first.path) == "second")
            case .rename:
                #expect(second.path == String(first.path.dropLast(4)) + "-1.dcm")
                #expect(contents(first.path) == "first" && contents(second.path) == "second")
            }
            // No temporary file is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".part") }.isEmpty)
        }
    }

    @Test func anUnwritableFolderIsAnErrorAndTheTemporaryFileIsRemoved() throws {
        let root = temporaryDirectory()
        defer {
            chmod(root, 0o755)
            try? FileManager.default.removeItem(atPath: root)
        }
        let incoming = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: incoming) }
        let placer = InstancePlacer(root: root, layout: StorageLayout(), duplicates: .keep, fsync: false)
        // A file where the patient folder should be: mkdir fails even for root.
        FileManager.default.createFile(atPath: root + "/P1-Doe_Jane", contents: Data())
        let temporary = temporaryFile(in: incoming, "x")
        #expect(throws: PXError.self) { try placer.place(temporaryFile: temporary, dataSet: dataSet()) }
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }

    @Test func seriesBookWritesPypxInfoFilesAndCompletesOnce() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let placer = InstancePlacer(root: root, layout: StorageLayout(), duplicates: .keep, fsync: false)
        let events = ListenEventChannel()
        let book = SeriesBook(seriesTimeout: nil) { events.yield($0) }
        for (i, association) in [(1, UInt64(1)), (2, 2), (3, 1)] {
            let ds = dataSet(sop: "1.2.3.4.\(i)")
            let placement = try placer.place(temporaryFile: temporaryFile(in: root, "\(i)"), dataSet: ds)
            await book.added(placement, facts: SeriesBook.Facts(ds), association: association)
        }
        let series = root + "/P1-Doe_Jane/unknown-unknown-1.2.3/unknown-unknown-1.2.3.1"
        #expect(contents(series + "/receiving.series").hasPrefix("[SERIES]\nseriesdescription = \nseriesdate = \nseriesinstanceuid = 1.2.3.1\nlocation = \(series)\n"))
        #expect(contents(root + "/P1-Doe_Jane/patient.info") == "[PATIENT]\npatientid = P1\npatientname = Doe^Jane\nlocation = \(root)/P1-Doe_Jane\n")
        #expect(contents(root + "/P1-Doe_Jane/unknown-unknown-1.2.3/study.info").contains("studyinstanceuid = 1.2.3\n"))
        await book.associationEnded(1)
        #expect(FileManager.default.fileExists(atPath: series + "/receiving.series"))  // association 2 still open
        await book.associationEnded(2)
        events.finish()
        var completions: [SeriesCompletion] = []
        while let event = await events.next() {
            if case .seriesComplete(let c) = event { completions.append(c) }
        }
        #expect(completions.count == 1)
        #expect(completions.first?.instances == 3 && completions.first?.reason == "association")
        #expect(contents(series + "/series.info").hasSuffix("instances = 3\n"))
        #expect(!FileManager.default.fileExists(atPath: series + "/receiving.series"))
    }

    @Test func seriesTimeoutCompletesAnIdleSeries() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let placer = InstancePlacer(root: root, layout: StorageLayout(), duplicates: .keep, fsync: false)
        let events = ListenEventChannel()
        let book = SeriesBook(seriesTimeout: 0.2) { events.yield($0) }
        let ds = dataSet()
        await book.added(try placer.place(temporaryFile: temporaryFile(in: root, "x"), dataSet: ds), facts: SeriesBook.Facts(ds), association: 7)
        await book.sweep()
        #expect(await book.openSeries == 1)
        try await Task.sleep(for: .milliseconds(300))
        await book.sweep()
        #expect(await book.openSeries == 0)
        events.finish()
        let event = await events.next()
        guard case .seriesComplete(let completion)? = event else {
            Issue.record("no seriesComplete: \(String(describing: event))")
            return
        }
        #expect(completion.reason == "timeout")
    }
}
