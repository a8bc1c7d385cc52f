import DICOMData
import DICOMNetwork
import Logging
import PXIndex
import PXSQLite
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A folder place's typed lookups: which files of a study, series or instances (SQL over the index, no
/// matching), the records px-ls matches, and indexes earlier px versions made (before GRDB's migrator, and with
/// it: the files the SQLite layer must keep opening).
@Suite(.timeLimit(.minutes(2))) struct FolderFilesTests {
    @Test func filesOfAStudySeriesOrInstancesComeFromTheIndex() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try FolderIndexTests.populate(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        _ = try await place.refresh()

        let study = try await place.files(study: "1.2.1")
        #expect(study.map(\.path) == ["a1", "a2", "a3", "b1", "b2"].map { root + "/P1/\($0).dcm" })
        #expect(study.allSatisfy { $0.sopClassUID == "1.2.840.10008.5.1.4.1.1.2" })
        #expect(study.allSatisfy { $0.transferSyntaxUID == TransferSyntax.explicitVRLittleEndian.uid })
        // Each file carries what the index recorded of it, so it is sent only while it is still that file.
        let first = try #require(study.first?.indexed)
        #expect(first.root == root && first.relativePath == "P1/a1.dcm")

        let series = try await place.files(study: "1.2.1", series: "1.2.1.2")
        #expect(series.map(\.sopInstanceUID) == ["1.2.1.2.1", "1.2.1.2.2"])
        let some = try await place.files(study: "1.2.1", series: "1.2.1.1", instances: ["1.2.1.1.3", "1.2.1.1.1", "9"])
        #expect(some.map(\.sopInstanceUID) == ["1.2.1.1.1", "1.2.1.1.3"])
        // UIDs are compared exactly: no wildcard, no other study's series.
        #expect(try await place.files(study: "1.2.*").isEmpty)
        #expect(try await place.files(study: "1.2.2", series: "1.2.1.1").isEmpty)
    }

    @Test func recordsCarryTheComputedCounts() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try FolderIndexTests.populate(root)
        let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        _ = try await place.refresh()

        var keys = DataSet()
        keys.set(.studyInstanceUID, vr: .UI, string: "1.2.1")
        let records = try await place.records(for: keys)
        // Every instance of the patient concerned (P1), so the patient-level counts are whole.
        #expect(records.count == 5)
        let studies = EntityMatching.firstOfEachEntity(matching: keys, in: records, uniqueKey: .studyInstanceUID)
        let study = try #require(studies.first)
        #expect(studies.count == 1)
        #expect(study.string(EntityMatching.numberOfStudyRelatedSeries) == "2")
        #expect(study.string(EntityMatching.numberOfStudyRelatedInstances) == "5")
        #expect(study.strings(EntityMatching.modalitiesInStudy) == ["CT", "MR"])
        #expect(study[.pixelData] == nil)
    }

    /// An index px made before GRDB's migrator (tables at PRAGMA user_version 1, no migration bookkeeping) is
    /// kept, not set aside and rebuilt, and brought to version 2 (its rows read once again, with the data set's
    /// SOP Instance UID); one of an unknown version is set aside.
    @Test func anIndexFromBeforeTheMigratorIsKept() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try FolderIndexTests.populate(root)
        do {
            let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
            _ = try await place.refresh()
        }
        #expect(try SQLiteDatabase(path: root + "/.px/index.sqlite").userVersion() == 2)
        // Back to version 1, as the px before the identity change left it.
        try SQLiteDatabase(path: root + "/.px/index.sqlite").execute("PRAGMA user_version = 1")

        let reopened = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        #expect(try SQLiteDatabase(path: root + "/.px/index.sqlite").userVersion() == 2)
        #expect(try await reopened.files(study: "1.2.1").isEmpty)
        let report = try await reopened.refresh()
        #expect(report.added == 6 && report.unchanged == 0)
        #expect(try await reopened.files(study: "1.2.1").count == 5)
        #expect(try await reopened.refresh().unchanged == 6)
        #expect(!Self.entries(root + "/.px").contains { $0.hasPrefix("index.sqlite.corrupt-") })

        try SQLiteDatabase(path: root + "/.px/index.sqlite").execute("PRAGMA user_version = 7")
        let rebuilt = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        #expect(try await rebuilt.files(study: "1.2.1").isEmpty)
        #expect(Self.entries(root + "/.px").contains { $0.hasPrefix("index.sqlite.corrupt-") })
        #expect(try await rebuilt.refresh().added == 6)
    }

    /// An index the GRDB px wrote (its migrator's `grdb_migrations` table saying "v1", PRAGMA user_version 1)
    /// opens as it is and keeps its rows; one whose bookkeeping names a migration this px does not know (a later
    /// px's) is set aside.
    @Test func anIndexGRDBMadeIsKept() async throws {
        let root = try FolderIndexTests.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        try FolderIndexTests.populate(root)
        do {
            let place = try FolderPlace(root: root, logger: FolderIndexTests.logger)
            _ = try await place.refresh()
        }
        // What GRDB's DatabaseMigrator added to px's tables (GRDB 7, DatabaseMigrator.swift), at version 1.
        try SQLiteDatabase(path: root + "/.px/index.sqlite").execute(
            """
            CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
            INSERT INTO grdb_migrations VALUES ('v1');
            PRAGMA user_version = 1;
            """)

        // Kept and brought to version 2: its files read once again.
        let reopened = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        #expect(try await reopened.refresh().added == 6)
        #expect(try await reopened.files(study: "1.2.1").count == 5)
        #expect(try await reopened.refresh().unchanged == 6)
        #expect(!Self.entries(root + "/.px").contains { $0.hasPrefix("index.sqlite.corrupt-") })

        try SQLiteDatabase(path: root + "/.px/index.sqlite").execute(
            "INSERT INTO grdb_migrations VALUES ('v2')")
        let rebuilt = try FolderPlace(root: root, logger: FolderIndexTests.logger)
        #expect(try await rebuilt.files(study: "1.2.1").isEmpty)
        #expect(Self.entries(root + "/.px").contains { $0.hasPrefix("index.sqlite.corrupt-") })
        #expect(try await rebuilt.refresh().added == 6)
    }

    static func entries(_ folder: String) -> [String] {
        var entries: [String] = []
        if let dir = opendir(folder) {
            while let entry = readdir(dir) {
                entries.append(
                    withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                )
            }
            closedir(dir)
        }
        return entries
    }
}
