import DICOMData
import DICOMNetwork
import Foundation
import Logging
import PXCore
import PXIndex
import PXStorage
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A folder place's index: refresh (only new or changed files read), record, PlaceInventory's answers, C-FIND
/// and retrieval over it, and hostile contents (garbage files, links out of the root, a corrupt index).
@Suite(.timeLimit(.minutes(2))) struct FolderIndexTests {
    static let logger = Logger(label: "px.test.index")

    static func temporaryDirectory() throws -> String {
        try TestSupport.makeTemporaryDirectory(prefix: "px-index-test-")
    }

    static func write(_ bytes: [UInt8], to path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    }

    /// A small CT instance of patient `patient`, study `1.2.<study>`, series `1.2.<study>.<series>`.
    static func instance(patient: String, study: Int, series: Int, number: Int, modality: String = "CT") throws
        -> [UInt8]
    {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: "1.2.\(study).\(series).\(number)")
        ds.set(.studyDate, vr: .DA, string: "2024010\(study % 10)")
        ds.set(.modality, vr: .CS, string: modality)
        ds.set(.patientName, vr: .PN, string: "DOE^\(patient)")
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.\(study)")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.\(study).\(series)")
        ds.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: 7, count: 64)))
        return try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    /// Two patients: P1 with study 1 (series 1: 3 instances, series 2: 2) and P2 with study 2 (series 1: 1).
    static func populate(_ root: String) throws {
        mkdir(root + "/P1", 0o755)
        mkdir(root + "/P2", 0o755)
        for n in 1...3 {
            Self.write(try Self.instance(patient: "P1", study: 1, series: 1, number: n), to: root + "/P1/a\(n).dcm")
        }
        for n in 1...2 {
            Self.write(
                try Self.instance(patient: "P1", study: 1, series: 2, number: n, modality: "MR"),
                to: root + "/P1/b\(n).dcm")
        }
        Self.write(try Self.instance(patient: "P2", study: 2, series: 1, number: 1), to: root + "/P2/c1.dcm")
    }

    static func keys(_ build: (inout DataSet) -> Void) -> DataSet {
        var ds = DataSet()
        build(&ds)
        return ds
    }

    @Test func refreshIndexesThenReadsOnlyWhatChanged() async throws {
        let root = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populate(root)
        let place = try FolderPlace(root: root, logger: Self.logger)
        let first = try await place.refresh()
        #expect(first.added == 6 && first.updated == 0 && first.removed == 0 && first.unreadable == 0)
        #expect(first.instances == 6)
        #expect(access(root + "/.px/index.sqlite", F_OK) == 0)

        let again = try await place.refresh()
        #expect(again.added == 0 && again.updated == 0 && again.removed == 0 && again.unchanged == 6)

        // One file replaced by another instance (new size), one deleted, one added.
        Self.write(try Self.instance(patient: "P1", study: 1, series: 1, number: 33) + [0, 0], to: root + "/P1/a3.dcm")
        unlink(root + "/P1/b2.dcm")
        Self.write(try Self.instance(patient: "P2", study: 2, series: 1, number: 2), to: root + "/P2/c2.dcm")
        let third = try await place.refresh()
        #expect(third.added == 1 && third.updated == 1 && third.removed == 1 && third.unchanged == 4)
        let series1 = try await place.instances(ofStudy: "1.2.1", series: "1.2.1.1")
        #expect(series1 == ["1.2.1.1.1", "1.2.1.1.2", "1.2.1.1.33"])
        #expect(try await place.instances(ofStudy: "1.2.1", series: "1.2.1.2") == ["1.2.1.2.1"])

        // A second FolderPlace on the same root (a restarted px-serve) sees the same index without reading.
        let reopened = try FolderPlace(root: root, logger: Self.logger)
        let fourth = try await reopened.refresh()
        #expect(fourth.added == 0 && fourth.unchanged == 6)
    }

    @Test func inventoryAnswersStudiesSeriesAndInstances() async throws {
        let root = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populate(root)
        let place = try FolderPlace(root: root, logger: Self.logger)
        _ = try await place.refresh()

        let all = try await place.studies(matching: DataSet())
        #expect(all.map(\.studyInstanceUID).sorted() == ["1.2.1", "1.2.2"])
        let study1 = try #require(all.first { $0.studyInstanceUID == "1.2.1" })
        #expect(study1.patientID == "P1" && study1.patientName == "DOE^P1")
        #expect(study1.seriesCount == 2 && study1.instanceCount == 5)

        let byPatient = try await place.studies(matching: Self.keys { $0.set(.patientID, vr: .LO, string: "P2") })
        #expect(byPatient.map(\.studyInstanceUID) == ["1.2.2"])
        let byWildcard = try await place.studies(
            matching: Self.keys { $0.set(.patientName, vr: .PN, string: "doe^p*") })
        #expect(byWildcard.count == 2)
        let byModality = try await place.studies(
            matching: Self.keys { $0.set(Tag(0x0008, 0x0061), vr: .CS, string: "MR") })
        #expect(byModality.map(\.studyInstanceUID) == ["1.2.1"])
        let byDate = try await place.studies(matching: Self.keys { $0.set(.studyDate, vr: .DA, string: "20240102-") })
        #expect(byDate.map(\.studyInstanceUID) == ["1.2.2"])
        let none = try await place.studies(matching: Self.keys { $0.set(.patientID, vr: .LO, string: "NOBODY") })
        #expect(none.isEmpty)

        let series = try await place.series(ofStudy: "1.2.1")
        #expect(series.map(\.seriesInstanceUID) == ["1.2.1.1", "1.2.1.2"])
        #expect(series.map(\.instanceCount) == [3, 2])
        #expect(series.map(\.modality) == ["CT", "MR"])
    }

    @Test func recordMakesAPlacedFileVisibleWithoutAWalk() async throws {
        let root = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        let place = try FolderPlace(root: root, logger: Self.logger)
        #expect(try await place.studies(matching: DataSet()).isEmpty)
        // Several placements recorded at once, from concurrent tasks (px-sync's associations).
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 1...40 {
                group.addTask {
                    let path = root + "/x\(n).dcm"
                    Self.write(try Self.instance(patient: "P9", study: 9, series: n % 4, number: n), to: path)
                    try await place.record(path: path)
                }
            }
            try await group.waitForAll()
        }
        let studies = try await place.studies(matching: DataSet())
        #expect(studies.count == 1 && studies.first?.instanceCount == 40 && studies.first?.seriesCount == 4)
        // A refresh afterwards finds nothing new: recorded rows carry size and mtime.
        let report = try await place.refresh()
        #expect(report.added == 0 && report.updated == 0 && report.unchanged == 40)
        // Recording a file outside the place is refused.
        await #expect(throws: PXError.self) { try await place.record(path: root + "/missing.dcm") }
    }

    @Test func hostileContentsAreCountedAndSkipped() async throws {
        let root = try Self.temporaryDirectory()
        let outside = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)' '\(outside)'") }
        try Self.populate(root)
        Self.write(Array("not DICOM at all".utf8), to: root + "/notes.txt")
        // pypx's bookkeeping: neither indexed nor counted as unreadable.
        Self.write(Array("[PATIENT]\npatientid = P1\n".utf8), to: root + "/P1/patient.info")
        Self.write([], to: root + "/empty.dcm")
        // A DICOM file with no SOP Instance UID.
        var anonymous = DataSet()
        anonymous.set(.patientID, vr: .LO, string: "P3")
        Self.write(
            try Part10File(dataSet: anonymous, transferSyntax: .explicitVRLittleEndian).encoded(),
            to: root + "/anon.dcm")
        // Truncated in the middle of the header.
        Self.write(
            Array(try Self.instance(patient: "P4", study: 4, series: 1, number: 1).prefix(200)), to: root + "/cut.dcm")
        // Links out of the root: to a file and to a folder full of DICOM.
        Self.write(try Self.instance(patient: "P5", study: 5, series: 1, number: 1), to: outside + "/out.dcm")
        symlink(outside + "/out.dcm", root + "/link.dcm")
        symlink(outside, root + "/linkdir")
        // A file in the hidden folder is not part of the place.
        mkdir(root + "/.px-incoming", 0o755)
        Self.write(try Self.instance(patient: "P6", study: 6, series: 1, number: 1), to: root + "/.px-incoming/partial")

        let place = try FolderPlace(root: root, logger: Self.logger)
        let report = try await place.refresh()
        #expect(report.added == 6)
        #expect(report.unreadable == 4)
        #expect(try await place.studies(matching: DataSet()).map(\.studyInstanceUID).sorted() == ["1.2.1", "1.2.2"])
        // Unreadable files are remembered: an unchanged one is not read again, and still counted.
        let again = try await place.refresh()
        #expect(again.added == 0 && again.unreadable == 4 && again.unchanged == 6)
        // A garbage file replaced by a good one is indexed.
        Self.write(try Self.instance(patient: "P7", study: 7, series: 1, number: 1), to: root + "/notes.txt")
        let third = try await place.refresh()
        #expect(third.added == 1 && third.unreadable == 3)
    }

    @Test func aCorruptIndexIsSetAsideAndRebuilt() async throws {
        let root = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populate(root)
        mkdir(root + "/.px", 0o755)
        Self.write(Array(repeating: 0x41, count: 8192), to: root + "/.px/index.sqlite")
        let place = try FolderPlace(root: root, logger: Self.logger)
        let report = try await place.refresh()
        #expect(report.added == 6 && report.instances == 6)
        let names = try FolderWalk.regularFiles(below: root + "/.px/..").files.map(\.relativePath)
        #expect(!names.contains { $0.contains("corrupt") })  // the walk skips .px
        var entries: [String] = []
        if let dir = opendir(root + "/.px") {
            while let entry = readdir(dir) {
                entries.append(
                    withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                )
            }
            closedir(dir)
        }
        #expect(entries.contains { $0.hasPrefix("index.sqlite.corrupt-") })
    }

    @Test func notAFolderIsAnIOError() {
        #expect(throws: PXError.self) { try FolderPlace(root: "/nonexistent/px-place", logger: Self.logger) }
    }

    @Test func queryRetrieveOverTheIndexAtEveryLevel() async throws {
        let root = try Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populate(root)
        let place = try FolderPlace(root: root, logger: Self.logger)
        _ = try await place.refresh()
        let provider = FolderPlaceProvider(place: place, moveDestinations: [:])

        func find(_ model: QueryRetrieveModel, _ level: QueryRetrieveLevel, _ keys: DataSet) async throws -> [DataSet] {
            let request = QueryRetrieveRequest(
                model: model, level: level, identifier: keys, callingAETitle: "SCU", calledAETitle: "PXSERVE")
            var out: [DataSet] = []
            for try await response in try await provider.find(request) { out.append(response) }
            return out
        }
        let patients = try await find(
            .patientRoot, .patient,
            Self.keys {
                $0.set(.patientID, vr: .LO, string: "")
                $0.set(Tag(0x0020, 0x1200), vr: .IS, string: "")
            })
        #expect(patients.compactMap { $0.string(.patientID) }.sorted() == ["P1", "P2"])
        #expect(patients.first { $0.string(.patientID) == "P1" }?.string(Tag(0x0020, 0x1200)) == "1")
        let studies = try await find(
            .studyRoot, .study,
            Self.keys {
                $0.set(.studyInstanceUID, vr: .UI, string: "")
                $0.set(Tag(0x0020, 0x1208), vr: .IS, string: "")
            })
        #expect(studies.count == 2)
        #expect(studies.first { $0.string(.studyInstanceUID) == "1.2.1" }?.string(Tag(0x0020, 0x1208)) == "5")
        let series = try await find(
            .studyRoot, .series,
            Self.keys {
                $0.set(.studyInstanceUID, vr: .UI, string: "1.2.1")
                $0.set(.seriesInstanceUID, vr: .UI, string: "")
            })
        #expect(series.compactMap { $0.string(.seriesInstanceUID) }.sorted() == ["1.2.1.1", "1.2.1.2"])
        let images = try await find(
            .patientRoot, .image,
            Self.keys {
                $0.set(.patientID, vr: .LO, string: "P1")
                $0.set(.studyInstanceUID, vr: .UI, string: "1.2.1")
                $0.set(.seriesInstanceUID, vr: .UI, string: "1.2.1.2")
                $0.set(.sopInstanceUID, vr: .UI, string: "")
            })
        #expect(images.compactMap { $0.string(.sopInstanceUID) }.sorted() == ["1.2.1.2.1", "1.2.1.2.2"])

        let retrieve = QueryRetrieveRequest(
            model: .studyRoot, level: .series,
            identifier: Self.keys {
                $0.set(.studyInstanceUID, vr: .UI, string: "1.2.1")
                $0.set(.seriesInstanceUID, vr: .UI, string: "1.2.1.1")
            }, callingAETitle: "SCU", calledAETitle: "PXSERVE")
        let files = try await provider.retrieve(retrieve)
        #expect(files.map(\.path).sorted() == (1...3).map { root + "/P1/a\($0).dcm" })
        #expect(files.allSatisfy { $0.transferSyntaxUID == TransferSyntax.explicitVRLittleEndian.uid })

        // A file added and recorded after the provider was made is found by the next query.
        Self.write(try Self.instance(patient: "P1", study: 1, series: 1, number: 4), to: root + "/P1/a4.dcm")
        try await place.record(path: root + "/P1/a4.dcm")
        #expect(try await provider.retrieve(retrieve).count == 4)
    }
}
