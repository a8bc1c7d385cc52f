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
        let matched = EntityMatching.firstOfEachEntity(
            matching: keys, in: try await self.records(for: keys), uniqueKey: .studyInstanceUID)
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
        var sql = "SELECT path, sop_class, sop_instance, transfer_syntax, record, size, modified FROM instances"
        var arguments: [String] = []
        if let patient = identifier.string(.patientID), !patient.isEmpty,
            !patient.contains(where: { "*?\\".contains($0) })
        {
            sql += " WHERE patient_id = ?"
            arguments = [patient]
        } else {
            for (tag, column) in [
                (Tag.studyInstanceUID, "study_uid"), (.seriesInstanceUID, "series_uid"),
                (.sopInstanceUID, "sop_instance"),
            ] {
                guard let values = identifier.strings(tag)?.filter({ !$0.isEmpty }), !values.isEmpty else { continue }
                sql +=
                    " WHERE patient_id IN (SELECT patient_id FROM instances WHERE \(column) IN "
                    + Self.placeholders(values.count) + ")"
                arguments = values
                break
            }
        }
        sql += " ORDER BY path"
        let root = self.root
        let query = sql
        let values = arguments
        let rows = try await self.reading { db throws(SQLiteError) in
            try db.fetchAll(query, values.map { .text($0) }) { row in
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
            let record: DataSet
            do {
                record = try DataSetReader.read(row.record, transferSyntax: .explicitVRLittleEndian).dataSet
            } catch {
                self.logger.debug(
                    "index record unreadable", metadata: ["file": "\(root)/\(row.path)", "error": "\(error)"])
                continue
            }
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
