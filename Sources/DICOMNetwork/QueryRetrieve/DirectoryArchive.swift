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
                    let sopClass = header.meta.string(.mediaStorageSOPClassUID) ?? header.dataSet.string(.sopClassUID),
                    let sopInstance = header.meta.string(.mediaStorageSOPInstanceUID)
                        ?? header.dataSet.string(.sopInstanceUID),
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
        // The level's unique key must be given (PS3.4 §C.4.2.1.4: "Unique Key Attributes ... at the level").
        let key = request.level.uniqueKey
        guard let values = request.identifier.strings(key), !values.allSatisfy(\.isEmpty) else {
            throw QueryRetrieveFailure(
                status: .dataSetDoesNotMatchSOPClass,
                comment: "no unique key \(key) for level \(request.level.rawValue)", offendingElement: key)
        }
        return try self.validated(request).compactMap {
            AttributeMatching.matches(request.identifier, $0.record) ? $0.file : nil
        }
    }

    public func moveDestination(_ aeTitle: String) async -> DICOMPeer? {
        self.moveDestinations[aeTitle]
    }

    // MARK: - Matching

    /// The first matching instance of every matching entity at the request's level, in index order.
    public func matchingEntities(_ request: QueryRetrieveRequest) throws -> [Instance] {
        let key = request.level.uniqueKey
        var seen = Set<String>()
        var result: [Instance] = []
        for instance in try self.validated(request) where AttributeMatching.matches(request.identifier, instance.record)
        {
            let entity = instance.record.string(key) ?? ""
            if seen.insert(entity).inserted { result.append(instance) }
        }
        return result
    }

    /// The instances, once the identifier has been checked for keys that cannot be matched.
    private func validated(_ request: QueryRetrieveRequest) throws -> [Instance] {
        for element in request.identifier where element.tag.group == 0x0000 || element.tag.group == 0x0002 {
            throw QueryRetrieveFailure(
                status: .dataSetDoesNotMatchSOPClass, comment: "\(element.tag) does not belong in an identifier",
                offendingElement: element.tag)
        }
        return self.instances
    }

    /// The response identifier for one matching record (PS3.4 §C.4.1.1.3.2).
    static func response(to request: QueryRetrieveRequest, from record: DataSet) -> DataSet {
        var elements: [DataElement] = []
        elements.reserveCapacity(request.identifier.count + 3)
        if let charset = record[.specificCharacterSet] {
            elements.append(charset)
        }
        elements.append(
            DataElement(tag: .queryRetrieveLevel, vr: .CS, bytes: Self.padded(request.level.rawValue, 0x20)))
        for key in request.identifier where AttributeMatching.isMatchingKey(key.tag) || key.tag == Tag(0x0008, 0x0054) {
            if key.tag == Tag(0x0008, 0x0054) {
                elements.append(DataElement(tag: key.tag, vr: .AE, bytes: Self.padded(request.calledAETitle, 0x20)))
            } else if let value = record[key.tag] {
                elements.append(value)
            } else {
                elements.append(
                    DataElement(tag: key.tag, vr: key.vr, value: key.vr == .SQ ? .sequence([]) : .bytes([])))
            }
        }
        let unique = request.level.uniqueKey
        if !elements.contains(where: { $0.tag == unique }), let value = record[unique] {
            elements.append(value)
        }
        return DataSet(elements, inheriting: record.characterSet)
    }

    static func padded(_ text: String, _ pad: UInt8) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.count & 1 == 1 { bytes.append(pad) }
        return bytes
    }

    // MARK: - Index

    /// Adds Number of Patient/Study/Series Related Studies/Series/Instances and Modalities in Study
    /// (PS3.4 §C.6.1.1.2 to §C.6.1.1.4) to every record that lacks them.
    static func addingComputedAttributes(_ instances: [Instance]) -> [Instance] {
        var patientStudies: [String: Set<String>] = [:]
        var patientSeries: [String: Set<String>] = [:]
        var patientInstances: [String: Int] = [:]
        var studySeries: [String: Set<String>] = [:]
        var studyInstances: [String: Int] = [:]
        var studyModalities: [String: [String]] = [:]
        var seriesInstances: [String: Int] = [:]
        for instance in instances {
            let record = instance.record
            let patient = record.string(.patientID) ?? ""
            let study = record.string(.studyInstanceUID) ?? ""
            let series = record.string(.seriesInstanceUID) ?? ""
            patientStudies[patient, default: []].insert(study)
            patientSeries[patient, default: []].insert(series)
            patientInstances[patient, default: 0] += 1
            studySeries[study, default: []].insert(series)
            studyInstances[study, default: 0] += 1
            if let modality = record.string(.modality), !modality.isEmpty,
                !(studyModalities[study] ?? []).contains(modality)
            {
                studyModalities[study, default: []].append(modality)
            }
            seriesInstances[series, default: 0] += 1
        }
        return instances.map { instance in
            var record = instance.record
            let patient = record.string(.patientID) ?? ""
            let study = record.string(.studyInstanceUID) ?? ""
            let series = record.string(.seriesInstanceUID) ?? ""
            func setIfMissing(_ tag: Tag, _ vr: VR, _ values: [String]) {
                guard record[tag] == nil else { return }
                record.set(DataElement(tag: tag, vr: vr, bytes: Self.padded(values.joined(separator: "\\"), 0x20)))
            }
            setIfMissing(Tag(0x0008, 0x0061), .CS, studyModalities[study] ?? [])
            setIfMissing(Tag(0x0020, 0x1200), .IS, ["\(patientStudies[patient]?.count ?? 0)"])
            setIfMissing(Tag(0x0020, 0x1202), .IS, ["\(patientSeries[patient]?.count ?? 0)"])
            setIfMissing(Tag(0x0020, 0x1204), .IS, ["\(patientInstances[patient] ?? 0)"])
            setIfMissing(Tag(0x0020, 0x1206), .IS, ["\(studySeries[study]?.count ?? 0)"])
            setIfMissing(Tag(0x0020, 0x1208), .IS, ["\(studyInstances[study] ?? 0)"])
            setIfMissing(Tag(0x0020, 0x1209), .IS, ["\(seriesInstances[series] ?? 0)"])
            return Instance(file: instance.file, record: record)
        }
    }

    /// The record re-read from its own encoding: its values then share one buffer of the header's size instead
    /// of keeping the whole prefix read from the file (up to 16 KiB or more, pixel data included) alive.
    public static func compacted(_ record: DataSet) throws -> DataSet {
        let bytes = try DataSetWriter.encode(record, transferSyntax: .explicitVRLittleEndian)
        return try DataSetReader.read(bytes, transferSyntax: .explicitVRLittleEndian).dataSet
    }
}
