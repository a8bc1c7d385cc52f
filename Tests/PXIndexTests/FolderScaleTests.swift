import DICOMData
import DICOMNetwork
import Logging
import PXCore
import PXIndex
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What keeps a folder place's memory flat at archive scale (issue 34) answers as before: the studies read
/// straight from the index, the records read a batch at a time, and the refresh that walks a batch at a time.
@Suite(.timeLimit(.minutes(2))) struct FolderScaleTests {
    /// Files in one folder whose path order interleaves patients and studies: f00 P1 study 3 (2024-01-03),
    /// f01 P2 study 1, f02 P1 study 2, f03 P2 study 1 (another series, MR), f04 P1 study 3 with another date
    /// (the first file's wins), f05 P2 study 1 again.
    static func populateInterleaved(_ root: String) throws {
        let files: [(patient: String, study: Int, series: Int, modality: String)] = [
            ("P1", 3, 1, "CT"), ("P2", 1, 1, "CT"), ("P1", 2, 1, "CT"), ("P2", 1, 2, "MR"), ("P1", 3, 1, "CT"),
            ("P2", 1, 1, "CT"),
        ]
        for (index, file) in files.enumerated() {
            var bytes = try FolderIndexTests.instance(
                patient: file.patient, study: file.study, series: file.series, number: index, modality: file.modality)
            if index == 4 {
                // Same study, another StudyDate: the study's values are its first file's (f00).
                var part = try Part10File(bytes: bytes)
                part.dataSet.set(.studyDate, vr: .DA, string: "19990101")
                bytes = try part.encoded()
            }
            FolderIndexTests.write(bytes, to: root + "/f0\(index).dcm")
        }
    }

    /// Every study from the index (no matching key, or StudyInstanceUIDs only) is what matching every record
    /// answers (a universal PatientName forces that path): the same studies, in the order of their first file
    /// by path, with that file's values and the whole study's counts.
    @Test func studiesFromTheIndexAreThoseMatchingTheRecordsFinds() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populateInterleaved(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        _ = try await place.refresh()

        let fromIndex = try await place.studies(matching: DataSet())
        #expect(fromIndex.map(\.studyInstanceUID) == ["1.2.3", "1.2.1", "1.2.2"])
        let matched = try await place.studies(
            matching: FolderIndexTests.keys { $0.set(.patientName, vr: .PN, string: "*") })
        #expect(fromIndex == matched)
        let study3 = try #require(fromIndex.first)
        #expect(study3.studyDate == "20240103" && study3.patientID == "P1" && study3.instanceCount == 2)
        let study1 = fromIndex[1]
        #expect(study1.seriesCount == 2 && study1.instanceCount == 3 && study1.patientName == "DOE^P2")

        let someUIDs = try await place.studies(
            matching: FolderIndexTests.keys { $0.set(.studyInstanceUID, vr: .UI, strings: ["1.2.2", "1.2.1"]) })
        let someMatched = try await place.studies(
            matching: FolderIndexTests.keys {
                $0.set(.studyInstanceUID, vr: .UI, strings: ["1.2.2", "1.2.1"])
                $0.set(.patientName, vr: .PN, string: "*")
            })
        #expect(someUIDs.map(\.studyInstanceUID) == ["1.2.1", "1.2.2"])
        #expect(someUIDs == someMatched)
        #expect(
            try await place.studies(matching: FolderIndexTests.keys { $0.set(.studyInstanceUID, vr: .UI, string: "9") })
                .isEmpty)
    }

    /// More files than one batch of the refresh and of the record reads (``FolderPlace/batchSize``, 500).
    static let many = 1_203

    static func populateMany(_ root: String) throws {
        for n in 0..<Self.many {
            let folder = root + "/d\(n / 400)"
            if n % 400 == 0 { mkdir(folder, 0o755) }
            FolderIndexTests.write(
                try FolderIndexTests.instance(patient: "P\(n % 3)", study: n % 7, series: n % 2, number: n),
                to: folder + "/i\(n).dcm")
        }
    }

    /// The records handed one at a time are the records listed at once: the same, in the same order, with the
    /// same computed counts, across batches; and the reading stops when told.
    @Test func recordsReadInBatchesAreTheRecordsListed() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populateMany(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        _ = try await place.refresh()

        for keys in [DataSet(), FolderIndexTests.keys { $0.set(.studyInstanceUID, vr: .UI, string: "1.2.4") }] {
            let listed = try await place.records(for: keys)
            var streamed: [DataSet] = []
            try await place.forEachRecord(for: keys) { record in
                streamed.append(record)
                return true
            }
            #expect(streamed.count == listed.count)
            #expect(listed.count > 500)
            let encode = { (record: DataSet) throws -> [UInt8] in
                try DataSetWriter.encode(record, transferSyntax: .explicitVRLittleEndian)
            }
            #expect(try streamed.map(encode) == listed.map(encode))
            #expect(streamed.last?.string(EntityMatching.numberOfPatientRelatedInstances) == "401")
        }
        #expect(try await place.instancesAreDistinct(for: DataSet()))
        // One instance in a second file: the counts count it once, with or without knowing the UIDs distinct.
        FolderIndexTests.write(
            try FolderIndexTests.instance(patient: "P1", study: 4, series: 0, number: 4), to: root + "/d0/copy.dcm")
        _ = try await place.refresh()
        #expect(try await place.instancesAreDistinct(for: DataSet()) == false)
        let listed = try await place.records(for: DataSet())
        var streamed: [DataSet] = []
        try await place.forEachRecord(for: DataSet()) { record in
            streamed.append(record)
            return true
        }
        #expect(streamed.count == Self.many + 1 && listed.count == Self.many + 1)
        #expect(
            streamed.map { $0.string(EntityMatching.numberOfPatientRelatedInstances) }
                == listed.map { $0.string(EntityMatching.numberOfPatientRelatedInstances) })
        #expect(streamed.first?.string(EntityMatching.numberOfPatientRelatedInstances) == "401")

        var seen = 0
        try await place.forEachRecord(for: DataSet()) { _ in
            seen += 1
            return seen < 2
        }
        #expect(seen == 2)
    }

    /// A refresh over more files than one batch finds what was added, changed and removed in any batch.
    @Test func aRefreshInBatchesFindsEveryChange() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populateMany(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        let first = try await place.refresh()
        #expect(first.added == Self.many && first.instances == Self.many && first.removed == 0)
        let again = try await place.refresh()
        #expect(again.added == 0 && again.updated == 0 && again.removed == 0 && again.unchanged == Self.many)

        for gone in ["d0/i3.dcm", "d1/i555.dcm", "d3/i1202.dcm"] { unlink(root + "/" + gone) }
        FolderIndexTests.write(
            try FolderIndexTests.instance(patient: "P0", study: 0, series: 0, number: 9000) + [0, 0],
            to: root + "/d2/i900.dcm")
        FolderIndexTests.write(
            try FolderIndexTests.instance(patient: "P9", study: 9, series: 0, number: 1), to: root + "/d2/new.dcm")
        let third = try await place.refresh()
        #expect(third.added == 1 && third.updated == 1 && third.removed == 3)
        #expect(third.unchanged == Self.many - 4)
        #expect(third.instances == Self.many - 2)
        #expect(try await place.files(study: "1.2.9").map(\.path) == [root + "/d2/new.dcm"])
        #expect(try await place.files(study: "1.2.3").contains { $0.path.hasSuffix("/i3.dcm") } == false)
    }

    /// The walk one file at a time finds what the walk that lists them finds.
    @Test func theWalkerFindsWhatTheListingFinds() throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populateMany(root)
        mkdir(root + "/.px", 0o755)
        FolderIndexTests.write([1, 2, 3], to: root + "/.px/private")
        let listed = try FolderWalk.regularFiles(below: root)
        let walker = try FolderWalk.Walker(root: root)
        var walked: [FolderWalk.Entry] = []
        while let entry = walker.next() { walked.append(entry) }
        #expect(walked.count == Self.many)
        #expect(Set(walked) == Set(listed.files))
        #expect(!walked.contains { $0.relativePath.hasPrefix(".px") })
    }

    /// px-serve's provider reads the index a batch at a time (issue 34) and answers what the in-memory archive of
    /// the same records answers: C-FIND at every level across batches, in the same order, and the files a C-GET
    /// of a study and of a patient sends.
    @Test func providerOverBatchesAnswersAsTheArchive() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try Self.populateMany(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        _ = try await place.refresh()
        let provider = FolderPlaceProvider(place: place, moveDestinations: [:])
        let files = try await place.files(study: "1.2.4")
        let all = try await place.records(for: DataSet())
        // The archive holds every record (every patient whole) and each record's file.
        var byInstance: [String: StorableFile] = [:]
        for study in 0..<7 {
            for file in try await place.files(study: "1.2.\(study)") { byInstance[file.sopInstanceUID] = file }
        }
        let archive = DirectoryArchive(
            instances: all.compactMap { record in
                byInstance[record.string(.sopInstanceUID) ?? ""].map {
                    DirectoryArchive.Instance(file: $0, record: record)
                }
            })
        #expect(archive.instances.count == Self.many)
        let encode = { (record: DataSet) throws -> [UInt8] in
            try DataSetWriter.encode(record, transferSyntax: .explicitVRLittleEndian)
        }
        let cases: [(QueryRetrieveModel, QueryRetrieveLevel, DataSet)] = [
            (.patientRoot, .patient, FolderIndexTests.keys { $0.set(.patientID, vr: .LO, string: "") }),
            (
                .studyRoot, .study,
                FolderIndexTests.keys {
                    $0.set(.studyInstanceUID, vr: .UI, string: "")
                    $0.set(Tag(0x0020, 0x1208), vr: .IS, string: "")
                }
            ),
            (.studyRoot, .series, FolderIndexTests.keys { $0.set(.seriesInstanceUID, vr: .UI, string: "") }),
            (
                .studyRoot, .image,
                FolderIndexTests.keys {
                    $0.set(.studyInstanceUID, vr: .UI, string: "")
                    $0.set(.sopInstanceUID, vr: .UI, string: "")
                }
            ),
        ]
        for (model, level, keys) in cases {
            let request = QueryRetrieveRequest(
                model: model, level: level, identifier: keys, callingAETitle: "SCU", calledAETitle: "PXSERVE")
            var served: [DataSet] = []
            for try await response in try await provider.find(request) { served.append(response) }
            var held: [DataSet] = []
            for try await response in try await archive.find(request) { held.append(response) }
            #expect(!served.isEmpty)
            #expect(try served.map(encode) == held.map(encode), "\(level)")
        }
        #expect(files.count > 100)
        for keys in [
            FolderIndexTests.keys { $0.set(.studyInstanceUID, vr: .UI, string: "1.2.4") },
            FolderIndexTests.keys { $0.set(.patientID, vr: .LO, string: "P1") },
        ] {
            let level: QueryRetrieveLevel = keys.string(.patientID) == nil ? .study : .patient
            let request = QueryRetrieveRequest(
                model: .patientRoot, level: level, identifier: keys, callingAETitle: "SCU", calledAETitle: "PXSERVE")
            let served = try await provider.retrieve(request)
            let held = try await archive.retrieve(request)
            #expect(!served.isEmpty && served.map(\.path) == held.map(\.path))
        }
        #expect(
            try await provider.retrieve(
                QueryRetrieveRequest(
                    model: .studyRoot, level: .study,
                    identifier: FolderIndexTests.keys { $0.set(.studyInstanceUID, vr: .UI, string: "1.2.4") },
                    callingAETitle: "SCU", calledAETitle: "PXSERVE")
            ).map(\.path) == files.map(\.path))
    }
}
