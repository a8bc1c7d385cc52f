import DICOMData
import DICOMNetwork
import Logging
import PXCore
import PXSQLite

extension FolderPlace {
    // MARK: - PlaceInventory

    /// The studies whose instances match `keys` (matching at STUDY level, PS3.4 §C.2.2.2, through
    /// ``DICOMData/EntityMatching``), with their counts from the index.
    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        if let tag = EntityMatching.misplacedKey(in: keys) {
            throw PXError.usage("cannot match the keys: \(tag) does not belong in an identifier")
        }
        if let uids = Self.studyUIDsOnly(keys) { return try await self.studyHoldings(uids) }
        var first = EntityMatching.FirstOfEachEntity(matching: keys, uniqueKey: .studyInstanceUID)
        var matched: [DataSet] = []
        try await self.forEachRecord(for: keys) { record in
            if first.accepts(record) { matched.append(record) }
            return true
        }
        let uids = matched.compactMap { $0.string(.studyInstanceUID) }
        guard !uids.isEmpty else { return [] }
        let counts = try await self.reading { db throws(SQLiteError) in
            var counts: [String: (Int, Int)] = [:]
            let rows = try db.fetchAll(
                "SELECT study_uid, series_count, instance_count FROM studies WHERE study_uid IN "
                    + Self.placeholders(uids.count), uids.map { .text($0) }
            ) { row in (row.string(at: 0) ?? "", row.int(at: 1), row.int(at: 2)) }
            for (uid, series, instances) in rows { counts[uid] = (series, instances) }
            return counts
        }
        return matched.map { record in
            let uid = record.string(.studyInstanceUID) ?? ""
            return StudyHolding(
                studyInstanceUID: uid, patientID: record.string(.patientID), patientName: record.string(.patientName),
                studyDate: record.string(.studyDate), studyDescription: record.string(.studyDescription),
                accessionNumber: record.string(Tag(0x0008, 0x0050)), seriesCount: counts[uid]?.0,
                instanceCount: counts[uid]?.1)
        }
    }

    /// The Study Instance UIDs `keys` asks for when they are its only matching key (an empty list: no matching
    /// key at all, every study), `nil` when another key matches (a non-empty value, a sequence) or a UID value
    /// has a wild card: then the studies are found by matching the records.
    static func studyUIDsOnly(_ keys: DataSet) -> [String]? {
        for key in keys where AttributeMatching.isMatchingKey(key.tag) {
            if key.tag == .studyInstanceUID { continue }
            guard key.vr != .SQ, key.isEmpty else { return nil }
        }
        let uids = (keys.strings(.studyInstanceUID) ?? []).filter { !$0.isEmpty }
        guard !uids.contains(where: { $0.contains("*") || $0.contains("?") }) else { return nil }
        return uids
    }

    /// The studies with these UIDs (every study for none) straight from the index, as matching their records
    /// would answer them when no other key matches: in the order of each study's first file (by path), the
    /// patient and study values of that file, the counts of the whole study. SQLite takes the bare columns of a
    /// query with one min() aggregate from the row of that minimum.
    private func studyHoldings(_ uids: [String]) async throws(PXError) -> [StudyHolding] {
        var sql = """
            SELECT study_uid, min(path), patient_id, patient_name, study_date, study_description, accession,
                count(DISTINCT series_uid), count(DISTINCT sop_instance)
            FROM instances
            """
        if !uids.isEmpty { sql += " WHERE study_uid IN " + Self.placeholders(uids.count) }
        sql += " GROUP BY study_uid ORDER BY 2"
        let query = sql
        return try await self.reading { db throws(SQLiteError) in
            try db.fetchAll(query, uids.map { .text($0) }) { row in
                StudyHolding(
                    studyInstanceUID: row.string(at: 0) ?? "", patientID: IndexRow.nonEmpty(row.string(at: 2)),
                    patientName: row.string(at: 3), studyDate: row.string(at: 4), studyDescription: row.string(at: 5),
                    accessionNumber: row.string(at: 6), seriesCount: row.int(at: 7), instanceCount: row.int(at: 8))
            }
        }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        try await self.reading { db throws(SQLiteError) in
            try db.fetchAll(
                """
                SELECT series_uid, modality, series_number, series_description, instance_count
                FROM series WHERE study_uid = ? ORDER BY series_uid
                """, [.text(studyInstanceUID)]
            ) { row in
                SeriesHolding(
                    studyInstanceUID: studyInstanceUID, seriesInstanceUID: row.string(at: 0) ?? "",
                    modality: row.string(at: 1), seriesNumber: row.string(at: 2),
                    seriesDescription: row.string(at: 3), instanceCount: row.isNull(at: 4) ? nil : row.int(at: 4))
            }
        }
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        try await self.reading { db throws(SQLiteError) in
            Set(
                try db.fetchAll(
                    "SELECT sop_instance FROM instances WHERE study_uid = ? AND series_uid = ?",
                    [.text(studyInstanceUID), .text(seriesInstanceUID)]
                ) { row in row.string(at: 0) ?? "" })
        }
    }

    /// One index query for the whole study.
    public func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>] {
        try await self.reading { db throws(SQLiteError) in
            var out: [String: Set<String>] = [:]
            let rows = try db.fetchAll(
                "SELECT series_uid, sop_instance FROM instances WHERE study_uid = ?", [.text(studyInstanceUID)]
            ) { row in (row.string(at: 0) ?? "", row.string(at: 1) ?? "") }
            for (series, sop) in rows { out[series, default: []].insert(sop) }
            return out
        }
    }

    // MARK: - Files

    /// The files of a study, of one series of it, or of some instances of that series, straight from the index
    /// (no matching: the UIDs are compared exactly), ordered by path. Each carries what the index recorded of it
    /// (``DICOMData/IndexedFile``), so it is sent only while it is still that file.
    public func files(study studyInstanceUID: String, series seriesInstanceUID: String? = nil, instances: [String] = [])
        async throws(PXError) -> [StorableFile]
    {
        var sql = "SELECT path, sop_class, sop_instance, transfer_syntax, size, modified FROM instances"
        sql += " WHERE study_uid = ?"
        var arguments = [studyInstanceUID]
        if let seriesInstanceUID {
            sql += " AND series_uid = ?"
            arguments.append(seriesInstanceUID)
        }
        if !instances.isEmpty {
            sql += " AND sop_instance IN " + Self.placeholders(instances.count)
            arguments += instances
        }
        sql += " ORDER BY path"
        let root = self.root
        let query = sql
        let values = arguments
        return try await self.reading { db throws(SQLiteError) in
            try db.fetchAll(query, values.map { .text($0) }) { row in
                StorableFile(
                    indexedIn: root, relativePath: row.string(at: 0) ?? "", sopClassUID: row.string(at: 1) ?? "",
                    sopInstanceUID: row.string(at: 2) ?? "", transferSyntaxUID: row.string(at: 3) ?? "",
                    size: row.int(at: 4), modified: row.int64(at: 5))
            }
        }
    }

    // MARK: - Records for matching

    /// The instance records (header data sets without Pixel Data, with the computed counts of
    /// ``DICOMData/EntityMatching/Counts``) a query with `identifier` can match, in path order: every instance
    /// of the patients concerned (so the patient-level counts of PS3.4 §C.6.1.1 stay whole), narrowed by a
    /// single Patient ID, or by the Study, Series or SOP Instance UIDs asked for, else the whole place.
    /// Match them with ``DICOMData/EntityMatching``.
    public func records(for identifier: DataSet) async throws(PXError) -> [DataSet] {
        EntityMatching.addingComputedAttributes(try await self.indexed(for: identifier).map(\.record))
    }

    /// The indexed instances a query with `identifier` can match, without computed attributes.
    private func indexed(for identifier: DataSet) async throws(PXError) -> [DirectoryArchive.Instance] {
        let scope = Self.scope(for: identifier)
        let root = self.root
        let query =
            "SELECT path, sop_class, sop_instance, transfer_syntax, record, size, modified FROM instances"
            + scope.clause + " ORDER BY path"
        let rows = try await self.reading { db throws(SQLiteError) in
            try db.fetchAll(query, scope.arguments.map { .text($0) }) { row in
                (
                    path: row.string(at: 0) ?? "", sopClass: row.string(at: 1) ?? "",
                    sopInstance: row.string(at: 2) ?? "", syntax: row.string(at: 3) ?? "", record: row.bytes(at: 4),
                    size: row.int(at: 5), modified: row.int64(at: 6)
                )
            }
        }
        var instances: [DirectoryArchive.Instance] = []
        instances.reserveCapacity(rows.count)
        for row in rows {
            guard let record = self.decodedRecord(row.record, path: row.path) else { continue }
            instances.append(
                DirectoryArchive.Instance(
                    file: StorableFile(
                        indexedIn: root, relativePath: row.path, sopClassUID: row.sopClass,
                        sopInstanceUID: row.sopInstance, transferSyntaxUID: row.syntax, size: row.size,
                        modified: row.modified),
                    record: record))
        }
        return instances
    }

    /// The instance records a query with `identifier` can match (``records(for:)``, the same records with the
    /// same computed attributes, in the same path order) handed to `body` one at a time, until it returns
    /// `false`: what is kept is the counts and one batch, never every record (``IndexedInstanceCursor``).
    public func forEachRecord(for identifier: DataSet, _ body: (DataSet) throws(PXError) -> Bool)
        async throws(PXError)
    {
        var cursor = try await self.instanceCursor(for: identifier, withFiles: false)
        while let instance = try await cursor.next() {
            guard try body(instance.record) else { return }
        }
    }

    /// A cursor over the instances a query with `identifier` can match (``records(for:)``: the same records with
    /// the same computed attributes, in the same path order), read from the index a batch at a time as they are
    /// asked for: the counts are taken from the index's columns first, so what is kept is the counts and one
    /// batch, never every record.
    /// - Parameter withFiles: whether each instance comes with its file (for C-GET and C-MOVE).
    public func instanceCursor(for identifier: DataSet, withFiles: Bool) async throws(PXError)
        -> IndexedInstanceCursor
    {
        let scope = Self.scope(for: identifier)
        let arguments = scope.arguments.map { SQLiteValue.text($0) }
        let countQuery =
            "SELECT patient_id, study_uid, series_uid, sop_instance, modality FROM instances" + scope.clause
            + " ORDER BY path"
        let distinct = try await self.instancesAreDistinct(for: identifier)
        let counts = try await self.reading { db throws(SQLiteError) in
            var counts = EntityMatching.Counts(distinctInstances: distinct)
            try db.withStatement(countQuery) { rows throws(SQLiteError) in
                try rows.bind(arguments)
                while try rows.step() {
                    counts.add(
                        patient: rows.string(at: 0) ?? "", study: rows.string(at: 1) ?? "",
                        series: rows.string(at: 2) ?? "", sopInstance: rows.string(at: 3) ?? "",
                        modality: rows.string(at: 4))
                }
            }
            return counts
        }
        let columns =
            withFiles ? "path, record, sop_class, sop_instance, transfer_syntax, size, modified" : "path, record"
        let batchQuery =
            "SELECT \(columns) FROM instances" + (scope.clause.isEmpty ? " WHERE" : scope.clause + " AND")
            + " path > ? ORDER BY path LIMIT \(Self.batchSize)"
        return IndexedInstanceCursor(
            place: self, query: batchQuery, arguments: arguments, counts: counts, withFiles: withFiles)
    }

    /// Whether every SOP Instance UID among the rows a query with `identifier` can match (``records(for:)``) is
    /// held once (no instance in two files): then neither the counts nor an image-level listing need to remember
    /// the UIDs they have seen.
    public func instancesAreDistinct(for identifier: DataSet) async throws(PXError) -> Bool {
        let scope = Self.scope(for: identifier)
        let query = "SELECT count(*) = count(DISTINCT sop_instance) FROM instances" + scope.clause
        return try await self.reading { db throws(SQLiteError) in
            try db.fetchInt(query, scope.arguments.map { .text($0) }) == 1
        }
    }

    /// An index row's record, `nil` (logged) when it cannot be read.
    func decodedRecord(_ bytes: [UInt8], path: String) -> DataSet? {
        do {
            return try DataSetReader.read(bytes, transferSyntax: .explicitVRLittleEndian).dataSet
        } catch {
            self.logger.debug(
                "index record unreadable", metadata: ["file": "\(self.root)/\(path)", "error": "\(error)"])
            return nil
        }
    }

    /// The rows a query with `identifier` can match, as a WHERE clause (empty for the whole place) and its
    /// arguments: every instance of the patients concerned (so the patient-level counts of PS3.4 §C.6.1.1 stay
    /// whole), narrowed by a single Patient ID, or by the Study, Series or SOP Instance UIDs asked for.
    private static func scope(for identifier: DataSet) -> (clause: String, arguments: [String]) {
        if let patient = identifier.string(.patientID), !patient.isEmpty,
            !patient.contains(where: { "*?\\".contains($0) })
        {
            return (" WHERE patient_id = ?", [patient])
        }
        for (tag, column) in [
            (Tag.studyInstanceUID, "study_uid"), (.seriesInstanceUID, "series_uid"), (.sopInstanceUID, "sop_instance"),
        ] {
            guard let values = identifier.strings(tag)?.filter({ !$0.isEmpty }), !values.isEmpty else { continue }
            return (
                " WHERE patient_id IN (SELECT patient_id FROM instances WHERE \(column) IN "
                    + Self.placeholders(values.count) + ")", values
            )
        }
        return ("", [])
    }

    /// `(?, ?, ?)` for `count` values.
    static func placeholders(_ count: Int) -> String {
        "(" + Array(repeating: "?", count: count).joined(separator: ", ") + ")"
    }
}

/// The instances of a folder place's index a query can match, one at a time
/// (``FolderPlace/instanceCursor(for:withFiles:)``): each batch of ``FolderPlace/batchSize`` rows is read when
/// the previous one is used up, so px-serve's C-FIND, C-GET and C-MOVE and px-ls hold one batch whatever the
/// place holds (issue 34: px-serve held every record of the place, 200 MiB for 30,000 instances).
public struct IndexedInstanceCursor: Sendable {
    /// One instance: its record with the computed attributes, and its file when asked for.
    public struct Instance: Sendable {
        public var record: DataSet
        public var file: StorableFile?
    }

    private struct Row: Sendable {
        var path: String
        var record: [UInt8]
        var file: (sopClass: String, sopInstance: String, syntax: String, size: Int, modified: Int64)?
    }

    private let place: FolderPlace
    private let query: String
    private let arguments: [SQLiteValue]
    private let counts: EntityMatching.Counts
    private let withFiles: Bool
    private var after = ""
    private var batch: [Row] = []
    private var position = 0
    private var exhausted = false

    init(place: FolderPlace, query: String, arguments: [SQLiteValue], counts: EntityMatching.Counts, withFiles: Bool) {
        self.place = place
        self.query = query
        self.arguments = arguments
        self.counts = counts
        self.withFiles = withFiles
    }

    /// The next instance, `nil` after the last (a row whose record cannot be read is skipped, logged).
    public mutating func next() async throws(PXError) -> Instance? {
        while true {
            while position < batch.count {
                let row = batch[position]
                position += 1
                guard let record = place.decodedRecord(row.record, path: row.path) else { continue }
                let root = place.root
                return Instance(
                    record: counts.completing(record),
                    file: row.file.map { file in
                        StorableFile(
                            indexedIn: root, relativePath: row.path, sopClassUID: file.sopClass,
                            sopInstanceUID: file.sopInstance, transferSyntaxUID: file.syntax, size: file.size,
                            modified: file.modified)
                    })
            }
            if exhausted { return nil }
            let (query, values, withFiles) = (self.query, self.arguments + [.text(after)], self.withFiles)
            batch = try await place.reading { db throws(SQLiteError) in
                try db.fetchAll(query, values) { row in
                    Row(
                        path: row.string(at: 0) ?? "", record: row.bytes(at: 1),
                        file: withFiles
                            ? (
                                row.string(at: 2) ?? "", row.string(at: 3) ?? "", row.string(at: 4) ?? "",
                                row.int(at: 5), row.int64(at: 6)
                            ) : nil)
                }
            }
            position = 0
            exhausted = batch.count < FolderPlace.batchSize
            guard let last = batch.last else { return nil }
            after = last.path
        }
    }
}

/// A ``DICOMNetwork/QueryRetrieveProvider`` over a folder place's index: C-FIND at every level of both models
/// and the files of C-MOVE and C-GET, answered from the index at each request, so a file recorded or found by a
/// refresh is served without a restart. The matching and responses are ``DICOMNetwork/DirectoryArchive``'s,
/// over the index read a batch at a time (``IndexedInstanceCursor``): a C-FIND's responses are made as the
/// association takes them.
public struct FolderPlaceProvider: QueryRetrieveProvider {
    public let place: FolderPlace
    /// C-MOVE destinations by AE title.
    public let moveDestinations: [String: DICOMPeer]

    public init(place: FolderPlace, moveDestinations: [String: DICOMPeer]) {
        self.place = place
        self.moveDestinations = moveDestinations
    }

    public func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error> {
        try DirectoryArchive.checkKeys(request)
        let uniqueKey = request.level.uniqueKey
        // An index holding each SOP Instance UID once: an image-level listing remembers none of them.
        let distinct =
            uniqueKey == .sopInstanceUID ? try await self.place.instancesAreDistinct(for: request.identifier) : false
        let responses = MatchingResponses(
            cursor: try await self.place.instanceCursor(for: request.identifier, withFiles: false),
            first: EntityMatching.FirstOfEachEntity(
                matching: request.identifier, uniqueKey: uniqueKey, distinctKeys: distinct),
            request: request)
        return AsyncThrowingStream { try await responses.next() }
    }

    public func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile] {
        defer { FreedMemory.release() }
        try DirectoryArchive.checkRetrieve(request)
        try DirectoryArchive.checkKeys(request)
        var cursor = try await self.place.instanceCursor(for: request.identifier, withFiles: true)
        var files: [StorableFile] = []
        while let instance = try await cursor.next() {
            if AttributeMatching.matches(request.identifier, instance.record), let file = instance.file {
                files.append(file)
            }
        }
        return files
    }

    public func moveDestination(_ aeTitle: String) async -> DICOMPeer? {
        self.moveDestinations[aeTitle]
    }

    /// The file is no longer the one indexed: its row is brought up to date (``FolderPlace/refresh(file:)``).
    public func indexedFileChanged(_ file: StorableFile) async {
        guard let indexed = file.indexed else { return }
        do {
            try await self.place.refresh(file: indexed.relativePath)
        } catch {
            self.place.logger.warning(
                "index entry not refreshed", metadata: ["file": "\(indexed.path)", "error": "\(error)"])
        }
    }
}

/// A C-FIND's responses made one at a time, as the association asks for the next (``FolderPlaceProvider``):
/// the first matching record of each entity (``DICOMData/EntityMatching/FirstOfEachEntity``) as its response.
private actor MatchingResponses {
    private var cursor: IndexedInstanceCursor
    private var first: EntityMatching.FirstOfEachEntity
    private let request: QueryRetrieveRequest

    init(cursor: IndexedInstanceCursor, first: EntityMatching.FirstOfEachEntity, request: QueryRetrieveRequest) {
        self.cursor = cursor
        self.first = first
        self.request = request
    }

    /// Called by one consumer at a time (the stream's iterator): the cursor is taken out while it reads.
    func next() async throws -> DataSet? {
        var cursor = self.cursor
        defer { self.cursor = cursor }
        while let instance = try await cursor.next() {
            if first.accepts(instance.record) { return DirectoryArchive.response(to: request, from: instance.record) }
        }
        return nil
    }
}

extension StorableFile {
    /// A file of a folder place as its index recorded it: at `relativePath` below `root`, sent only if it is still
    /// the file of that size and modification time (``IndexedFile``).
    init(
        indexedIn root: String, relativePath: String, sopClassUID: String, sopInstanceUID: String,
        transferSyntaxUID: String, size: Int, modified: Int64
    ) {
        self.init(
            path: root + "/" + relativePath, sopClassUID: sopClassUID, sopInstanceUID: sopInstanceUID,
            transferSyntaxUID: transferSyntaxUID,
            indexed: IndexedFile(root: root, relativePath: relativePath, size: size, modified: modified))
    }
}
