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
                let path = row.string(at: 0) ?? ""
                return StorableFile(
                    path: root + "/" + path, sopClassUID: row.string(at: 1) ?? "",
                    sopInstanceUID: row.string(at: 2) ?? "", transferSyntaxUID: row.string(at: 3) ?? "",
                    indexed: IndexedFile(
                        root: root, relativePath: path, size: row.int(at: 4), modified: row.int64(at: 5)))
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

    /// An archive over the instances a query with `identifier` can match (``records(for:)``), with their files.
    func archive(for identifier: DataSet, moveDestinations: [String: DICOMPeer] = [:]) async throws(PXError)
        -> DirectoryArchive
    {
        DirectoryArchive(instances: try await self.indexed(for: identifier), moveDestinations: moveDestinations)
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
                        path: root + "/" + row.path, sopClassUID: row.sopClass, sopInstanceUID: row.sopInstance,
                        transferSyntaxUID: row.syntax,
                        indexed: IndexedFile(
                            root: root, relativePath: row.path, size: row.size, modified: row.modified)),
                    record: record))
        }
        return instances
    }

    /// The instance records a query with `identifier` can match (``records(for:)``, the same records with the
    /// same computed attributes, in the same path order) handed to `body` one at a time, until it returns
    /// `false`: the counts are taken from the index's columns first, then the records are read a batch at a time,
    /// so what is kept is the counts, never every record.
    public func forEachRecord(for identifier: DataSet, _ body: (DataSet) throws(PXError) -> Bool)
        async throws(PXError)
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
        let batchQuery =
            "SELECT path, record FROM instances" + (scope.clause.isEmpty ? " WHERE" : scope.clause + " AND")
            + " path > ? ORDER BY path LIMIT \(Self.batchSize)"
        var after = ""
        while true {
            let last = after
            let batch = try await self.reading { db throws(SQLiteError) in
                try db.fetchAll(batchQuery, arguments + [.text(last)]) { row in
                    (path: row.string(at: 0) ?? "", record: row.bytes(at: 1))
                }
            }
            guard let final = batch.last else { return }
            after = final.path
            for row in batch {
                guard let record = self.decodedRecord(row.record, path: row.path) else { continue }
                guard try body(counts.completing(record)) else { return }
            }
        }
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
    private func decodedRecord(_ bytes: [UInt8], path: String) -> DataSet? {
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

/// A ``DICOMNetwork/QueryRetrieveProvider`` over a folder place's index: C-FIND at every level of both models
/// and the files of C-MOVE and C-GET, answered from the index at each request, so a file recorded or found by a
/// refresh is served without a restart. The matching and responses are ``DICOMNetwork/DirectoryArchive``'s.
public struct FolderPlaceProvider: QueryRetrieveProvider {
    public let place: FolderPlace
    /// C-MOVE destinations by AE title.
    public let moveDestinations: [String: DICOMPeer]

    public init(place: FolderPlace, moveDestinations: [String: DICOMPeer]) {
        self.place = place
        self.moveDestinations = moveDestinations
    }

    public func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error> {
        // The archive (every record the identifier can match) is gone once the responses are made.
        defer { FreedMemory.release() }
        return try await self.place.archive(for: request.identifier).find(request)
    }

    public func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile] {
        defer { FreedMemory.release() }
        return try await self.place.archive(for: request.identifier).retrieve(request)
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
