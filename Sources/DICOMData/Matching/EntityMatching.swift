/// Matching of a Query/Retrieve identifier against the entities of a set of instance records, and the
/// attributes computed over them (PS3.4 §C.2.2.2, §C.6.1.1, §C.6.2.1): the one definition px-serve's C-FIND
/// SCP, px-ls and the local places share.
///
/// Records are instance records (one per SOP instance: its header data set without Pixel Data). An entity
/// (patient, study, series or instance) is named by the unique key of its level: Patient ID, Study, Series or
/// SOP Instance UID (PS3.4 §C.6.1.1.2 to §C.6.1.1.5). Matching is relational: an entity matches when one of its
/// instances matches every key (``AttributeMatching``).
///
/// ```swift
/// let records = EntityMatching.addingComputedAttributes(headers)
/// let studies = EntityMatching.firstOfEachEntity(matching: keys, in: records, uniqueKey: .studyInstanceUID)
/// let answers = studies.map { EntityMatching.response(to: keys, level: "STUDY", uniqueKey: .studyInstanceUID, from: $0) }
/// ```
public enum EntityMatching {
    /// Modalities in Study (0008,0061).
    public static let modalitiesInStudy = Tag(0x0008, 0x0061)
    /// Retrieve AE Title (0008,0054): a return key only.
    public static let retrieveAETitle = Tag(0x0008, 0x0054)
    /// Number of Patient Related Studies (0020,1200).
    public static let numberOfPatientRelatedStudies = Tag(0x0020, 0x1200)
    /// Number of Patient Related Series (0020,1202).
    public static let numberOfPatientRelatedSeries = Tag(0x0020, 0x1202)
    /// Number of Patient Related Instances (0020,1204).
    public static let numberOfPatientRelatedInstances = Tag(0x0020, 0x1204)
    /// Number of Study Related Series (0020,1206).
    public static let numberOfStudyRelatedSeries = Tag(0x0020, 0x1206)
    /// Number of Study Related Instances (0020,1208).
    public static let numberOfStudyRelatedInstances = Tag(0x0020, 0x1208)
    /// Number of Series Related Instances (0020,1209).
    public static let numberOfSeriesRelatedInstances = Tag(0x0020, 0x1209)

    /// The unique key of a Query/Retrieve Level (0008,0052) value (PS3.4 §C.6.1.1.2 to §C.6.1.1.5): Patient ID,
    /// Study, Series or SOP Instance UID for PATIENT, STUDY, SERIES and IMAGE; `nil` for any other value.
    public static func uniqueKey(level: String) -> Tag? {
        switch level {
        case "PATIENT": return .patientID
        case "STUDY": return .studyInstanceUID
        case "SERIES": return .seriesInstanceUID
        case "IMAGE": return .sopInstanceUID
        default: return nil
        }
    }

    // MARK: - Matching

    /// The first matching record of every matching entity, in the order of `records`: the entity of a record is
    /// its value of `uniqueKey` (a record without one belongs to the entity with an empty key).
    public static func firstOfEachEntity<Record>(
        matching identifier: DataSet, in records: some Sequence<Record>, uniqueKey: Tag,
        record: (Record) -> DataSet
    ) -> [Record] {
        var first = FirstOfEachEntity(matching: identifier, uniqueKey: uniqueKey)
        return records.filter { first.accepts(record($0)) }
    }

    /// ``firstOfEachEntity(matching:in:uniqueKey:record:)`` one record at a time, for records read as a stream:
    /// it keeps only the unique keys of the entities that matched so far.
    public struct FirstOfEachEntity {
        public let identifier: DataSet
        public let uniqueKey: Tag
        /// The records are known to hold each non-empty value of the unique key once.
        public let distinctKeys: Bool
        private var seen = Set<String>()

        /// - Parameter distinctKeys: the caller knows no two records share a non-empty value of `uniqueKey` (an
        ///   index whose SOP Instance UIDs are distinct): then only the empty value is remembered, so a listing
        ///   of every instance keeps none of their UIDs.
        public init(matching identifier: DataSet, uniqueKey: Tag, distinctKeys: Bool = false) {
            self.identifier = identifier
            self.uniqueKey = uniqueKey
            self.distinctKeys = distinctKeys
        }

        /// Whether `record` matches and is the first record of its entity seen so far.
        public mutating func accepts(_ record: DataSet) -> Bool {
            guard AttributeMatching.matches(self.identifier, record) else { return false }
            let key = record.string(self.uniqueKey) ?? ""
            if self.distinctKeys && !key.isEmpty { return true }
            return self.seen.insert(key).inserted
        }
    }

    /// ``firstOfEachEntity(matching:in:uniqueKey:record:)`` over data sets.
    public static func firstOfEachEntity(
        matching identifier: DataSet, in records: some Sequence<DataSet>, uniqueKey: Tag
    ) -> [DataSet] {
        self.firstOfEachEntity(matching: identifier, in: records, uniqueKey: uniqueKey) { $0 }
    }

    /// The first element of `identifier` that cannot be a key (a command or file meta information element,
    /// groups 0000 and 0002), `nil` when there is none: such an identifier does not match the SOP class
    /// (PS3.4 §C.4.1.2.1, status 0xA900).
    public static func misplacedKey(in identifier: DataSet) -> Tag? {
        identifier.first { $0.tag.group == 0x0000 || $0.tag.group == 0x0002 }?.tag
    }

    // MARK: - Responses

    /// The response identifier for one matching record (PS3.4 §C.4.1.1.3.2): Specific Character Set when the
    /// record has one, Query/Retrieve Level, each key of `identifier` with the record's value (empty when it has
    /// none), Retrieve AE Title as `retrieveAETitle` when asked for, and the level's unique key.
    public static func response(
        to identifier: DataSet, level: String, uniqueKey: Tag, from record: DataSet, retrieveAETitle: String = ""
    ) -> DataSet {
        var elements: [DataElement] = []
        elements.reserveCapacity(identifier.count + 3)
        if let charset = record[.specificCharacterSet] {
            elements.append(charset)
        }
        elements.append(DataElement(tag: .queryRetrieveLevel, vr: .CS, bytes: self.padded(level)))
        for key in identifier where AttributeMatching.isMatchingKey(key.tag) || key.tag == self.retrieveAETitle {
            if key.tag == self.retrieveAETitle {
                elements.append(DataElement(tag: key.tag, vr: .AE, bytes: self.padded(retrieveAETitle)))
            } else if let value = record[key.tag] {
                elements.append(value)
            } else {
                elements.append(
                    DataElement(tag: key.tag, vr: key.vr, value: key.vr == .SQ ? .sequence([]) : .bytes([])))
            }
        }
        if !elements.contains(where: { $0.tag == uniqueKey }), let value = record[uniqueKey] {
            elements.append(value)
        }
        return DataSet(elements, inheriting: record.characterSet)
    }

    /// Text padded with a space to an even length.
    static func padded(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.count & 1 == 1 { bytes.append(0x20) }
        return bytes
    }

    // MARK: - Computed attributes

    /// The attributes a Q/R SCP computes over what it holds (PS3.4 §C.6.1.1.2 to §C.6.1.1.4): per patient the
    /// numbers of related studies, series and instances; per study the numbers of related series and instances
    /// and the modalities in study (in the order first seen); per series the number of related instances.
    /// Patients are keyed by Patient ID, studies and series by their UIDs (a missing value counts as empty).
    public struct Counts: Sendable, Hashable {
        public var patientStudies: [String: Set<String>] = [:]
        public var patientSeries: [String: Set<String>] = [:]
        public var patientInstances: [String: Int] = [:]
        public var studySeries: [String: Set<String>] = [:]
        public var studyInstances: [String: Int] = [:]
        public var studyModalities: [String: [String]] = [:]
        public var seriesInstances: [String: Int] = [:]
        /// The SOP Instance UIDs counted so far: an instance held twice (two files, two records) counts once.
        var instances: Set<String> = []
        /// Whether ``instances`` is kept: not when each SOP Instance UID is known to come once.
        var keepsInstances = true

        public init() {}

        /// Counts over records known to hold each SOP Instance UID once (an index whose UIDs are distinct):
        /// no instance's UID is kept to count it once.
        public init(distinctInstances: Bool) {
            self.keepsInstances = !distinctInstances
        }

        /// The counts over `records` (one per instance).
        public init(_ records: some Sequence<DataSet>) {
            for record in records { self.add(record) }
        }

        /// Counts one more instance record.
        public mutating func add(_ record: DataSet) {
            self.add(
                patient: record.string(.patientID) ?? "", study: record.string(.studyInstanceUID) ?? "",
                series: record.string(.seriesInstanceUID) ?? "", sopInstance: record.string(.sopInstanceUID) ?? "",
                modality: record.string(.modality))
        }

        /// Counts one more instance by its identifying values (an index's columns: no record to decode), a
        /// missing one as empty.
        public mutating func add(
            patient: String, study: String, series: String, sopInstance sop: String, modality: String?
        ) {
            self.patientStudies[patient, default: []].insert(study)
            self.patientSeries[patient, default: []].insert(series)
            self.studySeries[study, default: []].insert(series)
            // The numbers of related instances count distinct instances (PS3.4 §C.6.1.1.3): a second record of
            // a SOP Instance UID counted already is not another instance. A record without one is counted.
            if !sop.isEmpty && self.keepsInstances && !self.instances.insert(sop).inserted { return }
            self.patientInstances[patient, default: 0] += 1
            self.studyInstances[study, default: 0] += 1
            if let modality, !modality.isEmpty,
                !(self.studyModalities[study] ?? []).contains(modality)
            {
                self.studyModalities[study, default: []].append(modality)
            }
            self.seriesInstances[series, default: 0] += 1
        }

        /// The computed attributes of the patient, study and series of `record`, as data elements
        /// (ModalitiesInStudy CS, the numbers IS).
        public func attributes(of record: DataSet) -> [DataElement] {
            let patient = record.string(.patientID) ?? ""
            let study = record.string(.studyInstanceUID) ?? ""
            let series = record.string(.seriesInstanceUID) ?? ""
            func element(_ tag: Tag, _ vr: VR, _ values: [String]) -> DataElement {
                DataElement(tag: tag, vr: vr, bytes: EntityMatching.padded(values.joined(separator: "\\")))
            }
            return [
                element(EntityMatching.modalitiesInStudy, .CS, self.studyModalities[study] ?? []),
                element(
                    EntityMatching.numberOfPatientRelatedStudies, .IS, ["\(self.patientStudies[patient]?.count ?? 0)"]),
                element(
                    EntityMatching.numberOfPatientRelatedSeries, .IS, ["\(self.patientSeries[patient]?.count ?? 0)"]),
                element(
                    EntityMatching.numberOfPatientRelatedInstances, .IS, ["\(self.patientInstances[patient] ?? 0)"]),
                element(EntityMatching.numberOfStudyRelatedSeries, .IS, ["\(self.studySeries[study]?.count ?? 0)"]),
                element(EntityMatching.numberOfStudyRelatedInstances, .IS, ["\(self.studyInstances[study] ?? 0)"]),
                element(EntityMatching.numberOfSeriesRelatedInstances, .IS, ["\(self.seriesInstances[series] ?? 0)"]),
            ]
        }

        /// `record` with the computed attributes it lacks (a value the record holds is kept).
        public func completing(_ record: DataSet) -> DataSet {
            var completed = record
            for element in self.attributes(of: record) where completed[element.tag] == nil {
                completed.set(element)
            }
            return completed
        }
    }

    /// Every record with the computed attributes it lacks, counted over `records` (which must hold every
    /// instance of each patient concerned, or the patient-level numbers are short).
    public static func addingComputedAttributes<Record>(
        _ records: [Record], record: WritableKeyPath<Record, DataSet>
    ) -> [Record] {
        let counts = Counts(records.lazy.map { $0[keyPath: record] })
        return records.map { candidate in
            var completed = candidate
            completed[keyPath: record] = counts.completing(candidate[keyPath: record])
            return completed
        }
    }

    /// ``addingComputedAttributes(_:record:)`` over data sets.
    public static func addingComputedAttributes(_ records: [DataSet]) -> [DataSet] {
        self.addingComputedAttributes(records, record: \.self)
    }
}
