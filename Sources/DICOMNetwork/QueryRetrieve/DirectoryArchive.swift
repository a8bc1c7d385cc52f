import DICOMData
import DICOMProtocol
import Logging

/// A ``QueryRetrieveProvider`` over a folder of Part 10 files, indexed once from their headers (everything
/// before Pixel Data), with a table of C-MOVE destinations.
///
/// Queries are relational over the index: an entity at the query level (patient, study, series, instance)
/// matches when one of its instances matches every key (PS3.4 §C.2.2.2, see ``AttributeMatching``). Each
/// instance's record also carries the counts and ModalitiesInStudy of its patient, study and series
/// (PS3.4 §C.6.1.1), so those keys can be asked for and matched. Responses hold the requested keys with the
/// values of the first matching instance (empty when it has none), the Query/Retrieve Level, the level's unique
/// key, Specific Character Set when the record has one, and Retrieve AE Title when asked for.
///
/// The index is a snapshot held in memory (about the size of the headers) and every query scans it: meant for
/// test corpora and small archives. ``init(directory:moveDestinations:logger:)`` reads synchronously; files added later are not seen.
/// Date and time keys are matched each on its own (no combined StudyDate/StudyTime range, PS3.4 §C.2.2.2.5.1).
public struct DirectoryArchive: QueryRetrieveProvider {
    /// One indexed instance.
    public struct Instance: Sendable {
        /// The file, for C-STORE.
        public var file: StorableFile
        /// Its data set without Pixel Data, plus the computed attributes.
        public var record: DataSet

        public init(file: StorableFile, record: DataSet) {
            self.file = file
            self.record = record
        }
    }

    /// The indexed instances, ordered by path.
    public let instances: [Instance]
    /// C-MOVE destinations by AE title.
    public let moveDestinations: [String: DICOMPeer]

    /// Indexes every Part 10 file below `directory` (files that are not, or lack SOP Class/Instance UIDs, are
    /// skipped and logged at debug level).
    ///
    /// - Throws: ``DICOMNetworkError/fileError(_:)`` when the directory cannot be read.
    public init(directory: String, moveDestinations: [String: DICOMPeer] = [:], logger: Logger) throws {
        let found: [FolderWalk.Entry]
        do {
            found = try FolderWalk.regularFiles(below: directory).files
        } catch {
            throw DICOMNetworkError.fileError("cannot read directory \(directory): \(error)")
        }
        var instances: [Instance] = []
        instances.reserveCapacity(found.count)
        for entry in found.sorted(by: { $0.relativePath < $1.relativePath }) {
            let path = directory + "/" + entry.relativePath
            do {
                let header = try Part10File.readHeader(contentsOf: path)
                guard
                    // The data set's identity first, as C-FIND answers it and a receiver checks it (PS3.4 §B.2.3).
                    let sopClass = Self.identity(
                        header.dataSet.string(.sopClassUID), header.meta.string(.mediaStorageSOPClassUID)),
                    let sopInstance = Self.identity(
                        header.dataSet.string(.sopInstanceUID), header.meta.string(.mediaStorageSOPInstanceUID)),
                    !sopClass.isEmpty, !sopInstance.isEmpty
                else {
                    logger.debug("not indexed: no SOP Class/Instance UID", metadata: ["file": "\(path)"])
                    continue
                }
                var record = header.dataSet
                record.remove(.pixelData)
                record = try Self.compacted(record)
                // Sent only while it is still the file indexed here (StorableFile.open()).
                let file = StorableFile(
                    path: path, sopClassUID: sopClass, sopInstanceUID: sopInstance,
                    transferSyntaxUID: header.transferSyntax.uid,
                    indexed: IndexedFile(
                        root: directory, relativePath: entry.relativePath, size: entry.size, modified: entry.modified))
                instances.append(Instance(file: file, record: record))
            } catch {
                logger.debug("not indexed", metadata: ["file": "\(path)", "error": "\(error)"])
            }
        }
        self.instances = Self.addingComputedAttributes(instances)
        self.moveDestinations = moveDestinations
        logger.debug("archive indexed", metadata: ["directory": "\(directory)", "instances": "\(instances.count)"])
    }

    /// An archive over instances indexed elsewhere (a folder place's SQLite index): the same matching,
    /// responses and computed attributes. `instances` must hold every instance of each patient they belong to,
    /// or the patient-level counts are short.
    public init(instances: [Instance], moveDestinations: [String: DICOMPeer] = [:]) {
        self.instances = Self.addingComputedAttributes(instances)
        self.moveDestinations = moveDestinations
    }

    // MARK: - QueryRetrieveProvider

    public func find(_ request: QueryRetrieveRequest) async throws -> AsyncThrowingStream<DataSet, any Error> {
        let matches = try self.matchingEntities(request)
        return AsyncThrowingStream { continuation in
            for instance in matches {
                continuation.yield(Self.response(to: request, from: instance.record))
            }
            continuation.finish()
        }
    }

    public func retrieve(_ request: QueryRetrieveRequest) async throws -> [StorableFile] {
        try Self.checkRetrieve(request)
        return try self.validated(request).compactMap {
            AttributeMatching.matches(request.identifier, $0.record) ? $0.file : nil
        }
    }

    public func moveDestination(_ aeTitle: String) async -> DICOMPeer? {
        self.moveDestinations[aeTitle]
    }

    // MARK: - Matching

    /// The first matching instance of every matching entity at the request's level, in index order
    /// (``DICOMData/EntityMatching/firstOfEachEntity(matching:in:uniqueKey:record:)``).
    public func matchingEntities(_ request: QueryRetrieveRequest) throws -> [Instance] {
        EntityMatching.firstOfEachEntity(
            matching: request.identifier, in: try self.validated(request), uniqueKey: request.level.uniqueKey,
            record: \.record)
    }

    /// The instances, once the identifier has been checked for keys that cannot be matched.
    private func validated(_ request: QueryRetrieveRequest) throws -> [Instance] {
        try Self.checkKeys(request)
        return self.instances
    }

    /// Refuses an identifier with a key that cannot be matched (a command or file meta element): 0xA900,
    /// PS3.4 §C.4.1.2.1.
    /// - Throws: ``QueryRetrieveFailure``.
    public static func checkKeys(_ request: QueryRetrieveRequest) throws {
        if let tag = EntityMatching.misplacedKey(in: request.identifier) {
            throw QueryRetrieveFailure(
                status: .dataSetDoesNotMatchSOPClass, comment: "\(tag) does not belong in an identifier",
                offendingElement: tag)
        }
    }

    /// Refuses a retrieve without the level's unique key (PS3.4 §C.4.2.1.4: "Unique Key Attributes ... at the
    /// level").
    /// - Throws: ``QueryRetrieveFailure``.
    public static func checkRetrieve(_ request: QueryRetrieveRequest) throws {
        let key = request.level.uniqueKey
        guard let values = request.identifier.strings(key), !values.allSatisfy(\.isEmpty) else {
            throw QueryRetrieveFailure(
                status: .dataSetDoesNotMatchSOPClass,
                comment: "no unique key \(key) for level \(request.level.rawValue)", offendingElement: key)
        }
    }

    /// The response identifier for one matching record (PS3.4 §C.4.1.1.3.2,
    /// ``DICOMData/EntityMatching/response(to:level:uniqueKey:from:retrieveAETitle:)``).
    public static func response(to request: QueryRetrieveRequest, from record: DataSet) -> DataSet {
        EntityMatching.response(
            to: request.identifier, level: request.level.rawValue, uniqueKey: request.level.uniqueKey, from: record,
            retrieveAETitle: request.calledAETitle)
    }

    // MARK: - Index

    /// Adds Number of Patient/Study/Series Related Studies/Series/Instances and Modalities in Study
    /// (PS3.4 §C.6.1.1.2 to §C.6.1.1.4) to every record that lacks them (``DICOMData/EntityMatching/Counts``).
    static func addingComputedAttributes(_ instances: [Instance]) -> [Instance] {
        EntityMatching.addingComputedAttributes(instances, record: \.record)
    }

    /// The record re-read from its own encoding: its values then share one buffer of the header's size instead
    /// of keeping the whole prefix read from the file (up to 16 KiB or more, pixel data included) alive.
    public static func compacted(_ record: DataSet) throws -> DataSet {
        let bytes = try DataSetWriter.encode(record, transferSyntax: .explicitVRLittleEndian)
        return try DataSetReader.read(bytes, transferSyntax: .explicitVRLittleEndian).dataSet
    }
}

extension DirectoryArchive {
    /// The data set's UID, else the file meta's (an empty value counts as none).
    static func identity(_ dataSet: String?, _ meta: String?) -> String? {
        if let dataSet, !dataSet.isEmpty { return dataSet }
        return meta
    }
}
