import DICOMData
import DICOMNetwork
import Logging
import PXCore
import PXSQLite
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

/// A folder of DICOM files as a place (issue 12): its root, the layout new files are placed in, and an index of
/// what it holds in `ROOT/.px/index.sqlite` (SQLite in WAL mode, through ``PXSQLite``), so that "what is already
/// here" costs a query, not a read of every header.
///
/// The index is kept fresh two ways: ``refresh()`` walks the folder and re-reads only the headers of new or
/// changed files (size or modification time), and ``record(_:)`` adds files px has just placed, so a sync does
/// not walk again. Both are safe from several tasks at once: each place has one writing connection and one
/// reading connection, each a ``PXSQLite/SQLiteQueue`` that runs its uses in turn; in WAL mode the reads never
/// wait for a write, and SQLite serialises the writers of several processes (with a 30 s busy timeout).
public final class FolderPlace: PlaceInventory, Sendable {
    /// The folder, absolute or as given.
    public let root: String
    /// Where new files go (px-serve's C-STORE, px-sync into this place).
    public let layout: StorageLayout
    /// The index file: `ROOT/.px/index.sqlite`, or one in px's cache for a place px only reads (``IndexLocation``).
    public let indexPath: String
    /// The temporary folder of a ``IndexLocation/temporary`` index, removed with the place.
    let transientFolder: String?
    /// The connection every write goes through (refresh, record), in turn.
    let writer: SQLiteQueue
    /// The connection every read goes through (the inventory, the Query/Retrieve provider), in turn.
    let reader: SQLiteQueue
    let logger: Logger

    /// The folder px keeps for itself inside a place (every walker skips it, see ``FolderWalk/isPrivate(_:)``).
    public static let privateFolder = ".px"

    /// The index a place keeps of itself, `ROOT/.px/index.sqlite` (``IndexLocation/inPlace``).
    public static func inPlaceIndexPath(root: String) -> String {
        root + "/" + privateFolder + "/index.sqlite"
    }
    /// The version of the index's first tables (PRAGMA user_version); later versions are the migrations of
    /// ``migrations``, and an index of another version is set aside and rebuilt.
    static let schemaVersion: Int32 = 1

    deinit {
        if let transientFolder { FileTree.remove(transientFolder) }
    }

    /// Where a place's index is kept.
    public enum IndexLocation: Sendable, Hashable {
        /// `ROOT/.px/index.sqlite`, made when missing: a place px writes (a destination, px-serve's place).
        case inPlace
        /// Read-only use of the place (a source, px-ls): its own index when it has one already, else one in
        /// px's cache (``cachedIndexPath(for:)``), so nothing is written into a folder px only reads.
        case readOnly
        /// An index file at this path (its folder made when missing).
        case file(String)
        /// A throw-away index in a new temporary folder, removed with the place; the folder itself may be
        /// missing (it then holds nothing): what a dry run plans against, writing nothing into the place.
        case temporary
    }

    /// Opens (or creates) the index of the place at `root`. A corrupt index, or one of another version, is
    /// renamed aside (`index.sqlite.corrupt-SECONDS`), logged, and a new empty one is made: run ``refresh()``.
    ///
    /// - Throws: ``PXError/io(_:path:)`` when `root` is not a folder or the index cannot be made.
    public init(
        root: String, layout: StorageLayout = StorageLayout(), index: IndexLocation = .inPlace, logger: Logger
    ) throws(PXError) {
        let root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        var info = stat()
        let exists = stat(root, &info) == 0
        guard exists && info.st_mode & S_IFMT == S_IFDIR || !exists && index == .temporary else {
            throw PXError.io("not a folder: \(POSIX.errorText())", path: root)
        }
        var transient: String?
        let inPlace = Self.inPlaceIndexPath(root: root)
        switch index {
        case .inPlace:
            let folder = root + "/" + Self.privateFolder
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                throw PXError.io("cannot make the index folder: \(POSIX.errorText())", path: folder)
            }
            self.indexPath = inPlace
        case .readOnly:
            var existing = stat()
            if lstat(inPlace, &existing) == 0 && existing.st_mode & S_IFMT == S_IFREG && access(inPlace, W_OK) == 0 {
                self.indexPath = inPlace
            } else {
                self.indexPath = try Self.prepared(Self.cachedIndexPath(for: root))
            }
        case .file(let path):
            self.indexPath = try Self.prepared(path)
        case .temporary:
            let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
            do {
                let folder = try POSIX.makeTemporaryDirectory(prefix: base + "/px-index-")
                transient = folder
                self.indexPath = folder + "/index.sqlite"
            } catch {
                throw PXError.io("cannot make a temporary index: \(error)", path: base)
            }
        }
        self.transientFolder = transient
        self.root = root
        self.layout = layout
        self.logger = logger
        let connections: (writer: SQLiteQueue, reader: SQLiteQueue)
        do {
            connections = try Self.openWaiting(self.indexPath)
        } catch  where error.code == .busy {
            // Another px holds the index (it is making or migrating it): a busy index is never set aside.
            throw PXError.io("the index stayed locked by another process for 30 s: \(error)", path: self.indexPath)
        } catch {
            let aside = self.indexPath + ".corrupt-\(time(nil))"
            logger.warning(
                "index unreadable, set aside and rebuilt",
                metadata: ["index": "\(self.indexPath)", "asideAs": "\(aside)", "error": "\(error)"])
            rename(self.indexPath, aside)
            unlink(self.indexPath + "-wal")
            unlink(self.indexPath + "-shm")
            do {
                connections = try Self.open(self.indexPath)
            } catch {
                throw PXError.io("cannot make the index: \(error)", path: self.indexPath)
            }
        }
        self.writer = connections.writer
        self.reader = connections.reader
    }

    /// Where the index of a folder px only reads is cached: `$XDG_CACHE_HOME/px/index/` (else
    /// `~/.cache/px/index/`, else `$TMPDIR/px-cache-UID/index/`), named by the SHA-256 of the folder's real
    /// path (XDG Base Directory Specification: cache files a program can rebuild).
    public static func cachedIndexPath(for root: String) -> String {
        let environment = { (name: String) -> String? in
            getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        let base: String
        if let cache = environment("XDG_CACHE_HOME") {
            base = cache + "/px/index"
        } else if let home = environment("HOME") {
            base = home + "/.cache/px/index"
        } else {
            base = (environment("TMPDIR") ?? "/tmp") + "/px-cache-\(getuid())/index"
        }
        var resolved = root
        if let real = realpath(root, nil) {
            resolved = String(cString: real)
            free(real)
        }
        return base + "/" + SHA256.hex(Array(resolved.utf8), bytes: 16) + ".sqlite"
    }

    /// `path` with its folder made (mode 0700, `mkdir -p`).
    static func prepared(_ path: String) throws(PXError) -> String {
        var folder = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/").dropLast() {
            folder += "/" + component
            if mkdir(folder, 0o700) != 0 && errno != EEXIST {
                throw PXError.io("cannot make the index folder: \(POSIX.errorText())", path: folder)
            }
        }
        return path
    }

    /// ``open(_:)``, waiting up to 30 s while another process holds the index. SQLite does not call its busy
    /// handler for every lock: a connection switching the journal to WAL while another holds the file gets
    /// `SQLITE_BUSY` at once (several px made one new index at the same moment), so the open is tried again
    /// here, as the busy handler would, instead of taking a locked index for a broken one.
    private static func openWaiting(_ path: String) throws(SQLiteError) -> (writer: SQLiteQueue, reader: SQLiteQueue) {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                return try open(path)
            } catch  where error.code == .busy && ContinuousClock.now < deadline {
                usleep(20_000)
            }
        }
    }

    /// Opens the index's two connections, its schema brought to the last version.
    private static func open(_ path: String) throws(SQLiteError) -> (writer: SQLiteQueue, reader: SQLiteQueue) {
        let writer = try Self.connect(path)
        // WAL: readers never wait for the writer (the mode GRDB's DatabasePool set).
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.transaction { db throws(SQLiteError) in
            // An index a GRDB px made (its migrator's bookkeeping, grdb_migrations) with a migration this px
            // does not know is a later px's: set aside and rebuilt by the caller.
            if try db.tableExists("grdb_migrations"),
                try db.fetchInt("SELECT count(*) FROM grdb_migrations WHERE identifier <> 'v1'") ?? 0 > 0
            {
                throw SQLiteError.corrupt("index of a later schema")
            }
            // Tables without a version are not this px's index.
            let version = try db.userVersion()
            let tables = try db.fetchInt("SELECT count(*) FROM sqlite_master WHERE name <> 'grdb_migrations'") ?? 0
            if version == 0 && tables > 0 {
                throw SQLiteError.corrupt("index version \(version)")
            }
        }
        // A version past the last migration (a later px's) throws: set aside and rebuilt by the caller.
        try Self.migrations.migrate(writer)
        let reader = try Self.connect(path)
        return (
            SQLiteQueue(writer, label: "px.index.writer"), SQLiteQueue(reader, label: "px.index.reader")
        )
    }

    /// One connection to the index: a locked index is waited for up to 30 s (another px writing it).
    private static func connect(_ path: String) throws(SQLiteError) -> SQLiteDatabase {
        let db = try SQLiteDatabase(
            path: path, flags: [.readWrite, .create, .noMutex], busyTimeoutMilliseconds: 30_000)
        // WAL with NORMAL: a commit is durable at the next checkpoint; a crash loses at most the last commits,
        // which the next refresh() finds again from the files.
        try db.execute("PRAGMA synchronous = NORMAL")
        return db
    }

    /// The schema versions of the index, in order, kept in PRAGMA user_version (``PXSQLite/SQLiteMigrations``):
    /// a new version is a new registered migration, applied once to every existing index when it is opened.
    /// The versions are those GRDB's migrator kept before: an index GRDB made (user_version 1, its
    /// `grdb_migrations` table saying "v1") is at version 1 and opens as it is.
    static var migrations: SQLiteMigrations {
        var migrations = SQLiteMigrations()
        // Version 1, the tables of px's first index (PRAGMA user_version = 1): an index made then already
        // holds them.
        migrations.register(version: 1) { db throws(SQLiteError) in
            if try !db.tableExists("instances") { try FolderPlace.createSchema(db) }
        }
        // Version 2: an instance's identity is the data set's SOP Instance UID, no longer the file meta's
        // (they differ in broken files): the rows are dropped, so the next refresh reads every file once again.
        migrations.register(version: 2) { db throws(SQLiteError) in
            try db.execute("DELETE FROM instances")
        }
        return migrations
    }

    /// One row per file: the keys px-find and px-sync ask about, where the file is, and the header record
    /// (without Pixel Data, Explicit VR Little Endian) that C-FIND matches against.
    private static func createSchema(_ db: SQLiteDatabase) throws(SQLiteError) {
        try db.execute(
            """
            CREATE TABLE instances (
                path TEXT PRIMARY KEY NOT NULL,
                size INTEGER NOT NULL,
                modified INTEGER NOT NULL,
                sop_class TEXT NOT NULL,
                sop_instance TEXT NOT NULL,
                transfer_syntax TEXT NOT NULL,
                patient_id TEXT NOT NULL,
                patient_name TEXT,
                study_uid TEXT NOT NULL,
                study_date TEXT,
                study_description TEXT,
                accession TEXT,
                series_uid TEXT NOT NULL,
                modality TEXT,
                series_number TEXT,
                series_description TEXT,
                record BLOB NOT NULL
            );
            CREATE INDEX instances_by_series ON instances (study_uid, series_uid);
            CREATE INDEX instances_by_patient ON instances (patient_id);
            CREATE INDEX instances_by_sop ON instances (sop_instance);
            CREATE TABLE unreadable (
                path TEXT PRIMARY KEY NOT NULL,
                size INTEGER NOT NULL,
                modified INTEGER NOT NULL,
                reason TEXT NOT NULL
            );
            CREATE VIEW studies AS
                SELECT study_uid, max(patient_id) AS patient_id, max(patient_name) AS patient_name,
                    max(study_date) AS study_date, max(study_description) AS study_description,
                    max(accession) AS accession, count(DISTINCT series_uid) AS series_count,
                    count(DISTINCT sop_instance) AS instance_count
                FROM instances GROUP BY study_uid;
            CREATE VIEW series AS
                SELECT study_uid, series_uid, max(modality) AS modality, max(series_number) AS series_number,
                    max(series_description) AS series_description,
                    count(DISTINCT sop_instance) AS instance_count
                FROM instances GROUP BY study_uid, series_uid;
            PRAGMA user_version = \(Self.schemaVersion);
            """)
    }

    // MARK: - Keeping the index fresh

    /// What one ``refresh()`` did.
    public struct RefreshReport: Hashable, Sendable, Codable {
        /// Files not in the index before.
        public var added = 0
        /// Indexed files whose size or modification time changed, read again.
        public var updated = 0
        /// Rows of files that are gone.
        public var removed = 0
        /// Files seen before and unchanged: not read.
        public var unchanged = 0
        /// Files that are not DICOM, lack SOP Class/Instance UIDs or cannot be read (skipped, remembered so an
        /// unchanged one is not read again), and folders that cannot be read.
        public var unreadable = 0
        /// Instances in the index afterwards.
        public var instances = 0

        public init() {}
    }

    /// One file px has placed in this place, with the header it read: what ``record(_:)`` adds to the index.
    public struct PlacedFile: Sendable {
        /// The file's path: absolute below ``root``, or relative to it.
        public var path: String
        /// Its header (Part10File.readHeader: meta information and the data set before Pixel Data).
        public var header: Part10File

        public init(path: String, header: Part10File) {
            self.path = path
            self.header = header
        }
    }

    /// How many files' rows one transaction writes.
    static let batchSize = 500

    /// Brings the index in line with the folder: walks it, stats every file, reads the header (bounded by
    /// ``HeaderLimits``) only of files that are new or whose size or modification time changed, and drops the
    /// rows of files that are gone. Symbolic links are not followed; `.px*` folders and pypx's info files
    /// (``PXStorage/PypxInfoFile``) are skipped.
    public func refresh() async throws(PXError) -> RefreshReport {
        var info = stat()
        if transientFolder != nil && stat(root, &info) != 0 && errno == ENOENT {
            return RefreshReport()  // A dry run's destination that does not exist yet holds nothing.
        }
        // The walk goes a batch of files at a time, each file looked up in the index by its path (the primary
        // key), so what a refresh keeps is one batch, whatever the place holds; only when fewer files were
        // found than the index knows are the paths seen gathered, to find the rows of files that are gone.
        let walker: FolderWalk.Walker
        do {
            walker = try FolderWalk.Walker(root: self.root)
        } catch {
            throw PXError.io("cannot read the place: \(error)", path: self.root)
        }
        let knownBefore = try await self.reading { db throws(SQLiteError) in
            Int(try db.fetchInt("SELECT (SELECT count(*) FROM instances) + (SELECT count(*) FROM unreadable)") ?? 0)
        }
        var report = RefreshReport()
        var found = 0
        while true {
            var batch: [FolderWalk.Entry] = []
            while batch.count < Self.batchSize, let entry = walker.next() {
                if !Self.isBookkeeping(entry) { batch.append(entry) }
            }
            guard !batch.isEmpty else { break }
            let paths = batch.map(\.relativePath)
            let known = try await self.reading { db throws(SQLiteError) in
                try db.readTransaction { db throws(SQLiteError) in
                    try db.withStatement(
                        """
                        SELECT size, modified, 1 FROM instances WHERE path = ?1
                        UNION ALL SELECT size, modified, 0 FROM unreadable WHERE path = ?1
                        """
                    ) { row throws(SQLiteError) -> [(size: Int, modified: Int64, readable: Bool)?] in
                        var known: [(size: Int, modified: Int64, readable: Bool)?] = []
                        known.reserveCapacity(paths.count)
                        for path in paths {
                            try row.bind([.text(path)])
                            known.append(try row.step() ? (row.int(at: 0), row.int64(at: 1), row.int(at: 2) == 1) : nil)
                        }
                        return known
                    }
                }
            }
            var rows: [IndexRow] = []
            var failures: [(FolderWalk.Entry, String)] = []
            for (entry, old) in zip(batch, known) {
                if let old {
                    found += 1
                    if old.size == entry.size && old.modified == entry.modified {
                        if old.readable { report.unchanged += 1 } else { report.unreadable += 1 }
                        continue
                    }
                }
                do {
                    let header = try Part10File.readHeader(contentsOf: self.root + "/" + entry.relativePath)
                    rows.append(try IndexRow(entry: entry, header: header))
                    if old?.readable == true { report.updated += 1 } else { report.added += 1 }
                } catch {
                    failures.append((entry, "\(error)"))
                }
            }
            if !rows.isEmpty || !failures.isEmpty {
                _ = try await self.write(rows: rows, unreadable: failures, vanished: [])
            }
            report.unreadable += failures.count
        }
        report.unreadable += walker.unreadableFolders
        if found < knownBefore {
            report.removed = try await self.removeVanished()
        }
        report.instances = try await self.instanceCount()
        self.logger.debug(
            "place refreshed",
            metadata: [
                "root": "\(self.root)", "added": "\(report.added)", "updated": "\(report.updated)",
                "removed": "\(report.removed)", "unreadable": "\(report.unreadable)",
            ])
        return report
    }

    /// Whether a file the walk found is the place's bookkeeping, not an instance: pypx's info files (px-listen's
    /// and px-serve's trees).
    private static func isBookkeeping(_ entry: FolderWalk.Entry) -> Bool {
        let name = entry.relativePath.split(separator: "/").last.map(String.init) ?? entry.relativePath
        return PypxInfoFile.names.contains(name)
    }

    /// Drops the rows (instances and unreadable files) of files a walk no longer finds; returns how many.
    private func removeVanished() async throws(PXError) -> Int {
        let walk: (files: [FolderWalk.Entry], unreadableFolders: Int)
        do {
            walk = try FolderWalk.regularFiles(below: self.root)
        } catch {
            throw PXError.io("cannot read the place: \(error)", path: self.root)
        }
        let seen = Set(walk.files.lazy.filter { !Self.isBookkeeping($0) }.map(\.relativePath))
        let vanished = try await self.reading { db throws(SQLiteError) in
            try db.fetchAll("SELECT path FROM instances UNION ALL SELECT path FROM unreadable") { row in
                row.string(at: 0) ?? ""
            }.filter { !seen.contains($0) }
        }
        var removed = 0
        for batch in stride(from: 0, to: vanished.count, by: Self.batchSize) {
            removed += try await self.write(
                rows: [], unreadable: [], vanished: Array(vanished[batch..<min(batch + Self.batchSize, vanished.count)])
            )
        }
        return removed
    }

    /// Adds (or replaces) the rows of files px has just placed in this place, in one transaction.
    public func record(_ files: [PlacedFile]) async throws(PXError) {
        var rows: [IndexRow] = []
        rows.reserveCapacity(files.count)
        for file in files {
            let relative = self.relativePath(file.path)
            guard let entry = FolderWalk.entry(at: self.root + "/" + relative, relativePath: relative) else {
                throw PXError.io("cannot record a file that is not in the place: \(POSIX.errorText())", path: file.path)
            }
            do {
                rows.append(try IndexRow(entry: entry, header: file.header))
            } catch {
                throw PXError.notDICOM(path: file.path, reason: "\(error)")
            }
        }
        _ = try await self.write(rows: rows, unreadable: [], vanished: [])
    }

    /// Reads the header of a file px has just placed in this place and records it.
    public func record(path: String) async throws(PXError) {
        let header: Part10File
        do {
            header = try Part10File.readHeader(contentsOf: self.absolutePath(path))
        } catch {
            throw PXError.notDICOM(path: path, reason: "\(error)")
        }
        try await self.record([PlacedFile(path: path, header: header)])
    }

    /// Brings the row of one file up to date (a file px was about to send and found changed): the file is opened
    /// below ``root`` without following links at any component (``DICOMData/IndexedFile/open(_:below:)``); one
    /// that is now a link, gone or not a regular file loses its row, one that changed is read again through the
    /// open descriptor.
    public func refresh(file path: String) async throws(PXError) {
        let relative = self.relativePath(path)
        let opened: OpenedFile
        do {
            opened = try IndexedFile.open(relative, below: self.root)
        } catch  where error.code == .notTheIndexedFile {
            self.logger.notice(
                "file dropped from the index", metadata: ["file": "\(self.root)/\(relative)", "reason": "\(error)"])
            let indexPath = self.indexPath
            do {
                try await self.writer.run { db throws(SQLiteError) in
                    try db.transaction { db throws(SQLiteError) in
                        try db.execute("DELETE FROM instances WHERE path = ?", [.text(relative)])
                        try db.execute("DELETE FROM unreadable WHERE path = ?", [.text(relative)])
                    }
                }
            } catch {
                throw PXError.io("cannot write the index: \(error)", path: indexPath)
            }
            return
        } catch {
            throw PXError.io("cannot open: \(error)", path: self.root + "/" + relative)
        }
        defer { opened.close() }
        let entry = FolderWalk.Entry(relativePath: relative, size: opened.size, modified: opened.modified)
        do {
            let header = try Part10File.readHeader(contentsOf: opened.descriptorPath)
            _ = try await self.write(rows: [try IndexRow(entry: entry, header: header)], unreadable: [], vanished: [])
        } catch let error as PXError where error.code != .notDICOM && error.code != .malformedFile {
            throw error
        } catch {
            _ = try await self.write(rows: [], unreadable: [(entry, "\(error)")], vanished: [])
        }
    }

    /// `path` relative to ``root`` (unchanged when it is already relative).
    func relativePath(_ path: String) -> String {
        path.hasPrefix(self.root + "/") ? String(path.dropFirst(self.root.count + 1)) : path
    }

    /// `path` below ``root`` (unchanged when it is already absolute).
    func absolutePath(_ path: String) -> String {
        path.hasPrefix("/") ? path : self.root + "/" + path
    }

    /// One transaction: upserts `rows` (and clears those paths from `unreadable`), remembers `unreadable`, and
    /// deletes the rows of `vanished` paths that are still gone (a file placed and recorded while a refresh
    /// walked is kept). Returns how many vanished rows were deleted.
    private func write(rows: [IndexRow], unreadable: [(FolderWalk.Entry, String)], vanished: [String])
        async throws(PXError) -> Int
    {
        let root = self.root
        do {
            return try await self.writer.run { db throws(SQLiteError) in
                try db.transaction { db throws(SQLiteError) in
                    let insert = try db.prepare(
                        """
                        INSERT OR REPLACE INTO instances (path, size, modified, sop_class, sop_instance,
                            transfer_syntax, patient_id, patient_name, study_uid, study_date, study_description,
                            accession, series_uid, modality, series_number, series_description, record)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """)
                    defer { insert.finalize() }
                    let clear = try db.prepare("DELETE FROM unreadable WHERE path = ?")
                    defer { clear.finalize() }
                    for row in rows {
                        try insert.execute(row.arguments)
                        try clear.execute([.text(row.path)])
                    }
                    let bad = try db.prepare(
                        "INSERT OR REPLACE INTO unreadable (path, size, modified, reason) VALUES (?, ?, ?, ?)")
                    defer { bad.finalize() }
                    let dropRow = try db.prepare("DELETE FROM instances WHERE path = ?")
                    defer { dropRow.finalize() }
                    for (entry, reason) in unreadable {
                        try bad.execute([
                            .text(entry.relativePath), SQLiteValue(entry.size), .integer(entry.modified), .text(reason),
                        ])
                        try dropRow.execute([.text(entry.relativePath)])
                    }
                    var removed = 0
                    for path in vanished where FolderWalk.entry(at: root + "/" + path, relativePath: path) == nil {
                        try dropRow.execute([.text(path)])
                        removed += db.changes
                        try clear.execute([.text(path)])
                    }
                    return removed
                }
            }
        } catch {
            throw PXError.io("cannot write the index: \(error)", path: self.indexPath)
        }
    }

    private func instanceCount() async throws(PXError) -> Int {
        try await self.reading { db throws(SQLiteError) in
            Int(try db.fetchInt("SELECT count(*) FROM instances") ?? 0)
        }
    }

    /// A read of the index, its errors as ``PXError/io(_:path:)``.
    func reading<T: Sendable>(_ body: @escaping @Sendable (SQLiteDatabase) throws(SQLiteError) -> T)
        async throws(PXError) -> T
    {
        do {
            return try await self.reader.run(body)
        } catch {
            throw PXError.io("cannot read the index: \(error)", path: self.indexPath)
        }
    }
}

/// One file's row of the index, from its header.
struct IndexRow: Sendable {
    var path: String
    /// The values of the `instances` columns, in the order of their INSERT.
    var arguments: [SQLiteValue]

    init(entry: FolderWalk.Entry, header: Part10File) throws(PXError) {
        let dataSet = header.dataSet
        guard
            // The data set's identity first, as px-push sends it and as every peer's C-FIND reports it (a file
            // whose meta disagrees would otherwise never be found present in a node).
            let sopClass = Self.nonEmpty(
                Self.nonEmpty(dataSet.string(.sopClassUID)) ?? header.meta.string(.mediaStorageSOPClassUID)),
            let sopInstance = Self.nonEmpty(
                Self.nonEmpty(dataSet.string(.sopInstanceUID)) ?? header.meta.string(.mediaStorageSOPInstanceUID))
        else {
            throw PXError.notDICOM(path: entry.relativePath, reason: "no SOP Class/Instance UID")
        }
        var record = dataSet
        record.remove(.pixelData)
        let bytes: [UInt8]
        do {
            bytes = try DataSetWriter.encode(record, transferSyntax: .explicitVRLittleEndian)
        } catch {
            throw PXError.malformedFile(path: entry.relativePath, reason: "\(error)")
        }
        self.path = entry.relativePath
        self.arguments = [
            .text(entry.relativePath), SQLiteValue(entry.size), .integer(entry.modified), .text(sopClass),
            .text(sopInstance), .text(header.transferSyntax.uid), .text(dataSet.string(.patientID) ?? ""),
            SQLiteValue(dataSet.string(.patientName)), .text(dataSet.string(.studyInstanceUID) ?? ""),
            SQLiteValue(dataSet.string(.studyDate)), SQLiteValue(dataSet.string(.studyDescription)),
            SQLiteValue(dataSet.string(Tag(0x0008, 0x0050))), .text(dataSet.string(.seriesInstanceUID) ?? ""),
            SQLiteValue(dataSet.string(.modality)), SQLiteValue(dataSet.string(Tag(0x0020, 0x0011))),
            SQLiteValue(dataSet.string(.seriesDescription)), .blob(bytes),
        ]
    }

    static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
