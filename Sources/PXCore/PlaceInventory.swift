import DICOMData

/// A study as a place holds it: its identity, the patient keys px-sync reports, and its counts.
///
/// Counts are what a place knows without listing instances: a DIMSE node's NumberOfStudyRelatedSeries
/// and NumberOfStudyRelatedInstances (PS3.4 §C.6.2.1.2, optional for the SCP, so `nil` when it did not
/// answer them), a folder's index, a zip's directory.
public struct StudyHolding: Hashable, Sendable {
    public var studyInstanceUID: String
    public var patientID: String?
    public var patientName: String?
    public var studyDate: String?
    public var studyDescription: String?
    public var accessionNumber: String?
    /// NumberOfStudyRelatedSeries, `nil` when the place did not say.
    public var seriesCount: Int?
    /// NumberOfStudyRelatedInstances, `nil` when the place did not say.
    public var instanceCount: Int?

    public init(
        studyInstanceUID: String, patientID: String? = nil, patientName: String? = nil, studyDate: String? = nil,
        studyDescription: String? = nil, accessionNumber: String? = nil, seriesCount: Int? = nil,
        instanceCount: Int? = nil
    ) {
        self.studyInstanceUID = studyInstanceUID
        self.patientID = patientID
        self.patientName = patientName
        self.studyDate = studyDate
        self.studyDescription = studyDescription
        self.accessionNumber = accessionNumber
        self.seriesCount = seriesCount
        self.instanceCount = instanceCount
    }
}

/// A series as a place holds it, with NumberOfSeriesRelatedInstances (`nil` when the place did not say).
public struct SeriesHolding: Hashable, Sendable {
    public var studyInstanceUID: String
    public var seriesInstanceUID: String
    public var modality: String?
    public var seriesNumber: String?
    public var seriesDescription: String?
    public var instanceCount: Int?

    public init(
        studyInstanceUID: String, seriesInstanceUID: String, modality: String? = nil, seriesNumber: String? = nil,
        seriesDescription: String? = nil, instanceCount: Int? = nil
    ) {
        self.studyInstanceUID = studyInstanceUID
        self.seriesInstanceUID = seriesInstanceUID
        self.modality = modality
        self.seriesNumber = seriesNumber
        self.seriesDescription = seriesDescription
        self.instanceCount = instanceCount
    }
}

/// What a place holds, asked level by level: the questions px-sync asks of a source and of a destination
/// (studies first, series only where a study's counts differ, instance UIDs only where a series' counts
/// differ).
///
/// Every kind of place answers them its own way: a DIMSE node with C-FIND at STUDY, SERIES and IMAGE level
/// (Study Root, PS3.4 §C.6.2), a folder place from its index, a zip place from its archives' directories,
/// a DICOMweb place with QIDO-RS (PS3.18 §10.6).
public protocol PlaceInventory: Sendable {
    /// The studies that match `keys` (C-FIND matching: values with wildcards and ranges; an empty value
    /// is a return key).
    func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding]
    /// The series of one study.
    func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding]
    /// The SOP Instance UIDs of one series.
    func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    /// The SOP Instance UIDs of one study by series, in one question where the place can answer it so (an
    /// IMAGE-level C-FIND or QIDO-RS search under the study, an index query); what px-sync's planner compares.
    func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>]
}

extension PlaceInventory {
    /// The series, then each one's instances: a question per series.
    public func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>] {
        var out: [String: Set<String>] = [:]
        for series in try await series(ofStudy: studyInstanceUID) {
            out[series.seriesInstanceUID, default: []].formUnion(
                try await instances(ofStudy: studyInstanceUID, series: series.seriesInstanceUID))
        }
        return out
    }
}

/// An inventory that answers by matching identifiers level by level, as a C-FIND SCP (PS3.4 §C.6.2, Study
/// Root) or a QIDO-RS service (PS3.18 §10.6) does: the three questions are asked one way for both, with
/// ``InventoryKeys``; a conforming place only says how one question is sent.
public protocol MatchingInventory: PlaceInventory {
    /// Every match of `identifier` at `level`; a failure or an incomplete answer is thrown (a partial
    /// answer would make a sync plan wrong).
    func matches(_ level: QueryLevel, _ identifier: DataSet) async throws(PXError) -> [DataSet]
}

extension MatchingInventory {
    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        var identifier = keys
        InventoryKeys.ask(&identifier, InventoryKeys.study)
        return try await matches(.study, identifier).compactMap { StudyHolding(match: $0) }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        InventoryKeys.ask(&identifier, InventoryKeys.series)
        return try await matches(.series, identifier).compactMap {
            SeriesHolding(match: $0, studyInstanceUID: studyInstanceUID)
        }
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        identifier.set(.seriesInstanceUID, vr: .UI, string: seriesInstanceUID)
        InventoryKeys.ask(&identifier, [(.sopInstanceUID, .UI)])
        return Set(try await matches(.image, identifier).compactMap { InventoryKeys.text($0, .sopInstanceUID) })
    }

    /// One IMAGE-level question under the study, asking each instance's Series Instance UID (a universal match
    /// on the series key, PS3.4 §C.2.2.2.3).
    public func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>] {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        InventoryKeys.ask(&identifier, [(.seriesInstanceUID, .UI), (.sopInstanceUID, .UI)])
        var out: [String: Set<String>] = [:]
        for match in try await matches(.image, identifier) {
            guard let sop = InventoryKeys.text(match, .sopInstanceUID) else { continue }
            out[InventoryKeys.text(match, .seriesInstanceUID) ?? "", default: []].insert(sop)
        }
        return out
    }
}

/// The keys an inventory asks a peer for at each level, and how a peer's match becomes a holding: one
/// definition for the C-FIND inventory of a node (PS3.4 §C.6.2, Study Root) and the QIDO-RS one of a DICOMweb
/// service (PS3.18 §10.6), which answer the same attributes.
public enum InventoryKeys {
    public static let accessionNumber = Tag(0x0008, 0x0050)
    public static let seriesNumber = Tag(0x0020, 0x0011)
    /// PS3.4 §C.6.2.1.2: optional return keys the SCP computes.
    public static let numberOfStudyRelatedSeries = Tag(0x0020, 0x1206)
    public static let numberOfStudyRelatedInstances = Tag(0x0020, 0x1208)
    public static let numberOfSeriesRelatedInstances = Tag(0x0020, 0x1209)

    /// The return keys of a study question.
    public static let study: [(Tag, VR)] = [
        (.studyInstanceUID, .UI), (.patientID, .LO), (.patientName, .PN), (.studyDate, .DA),
        (.studyDescription, .LO), (accessionNumber, .SH), (numberOfStudyRelatedSeries, .IS),
        (numberOfStudyRelatedInstances, .IS),
    ]

    /// The return keys of a series question.
    public static let series: [(Tag, VR)] = [
        (.seriesInstanceUID, .UI), (.modality, .CS), (seriesNumber, .IS), (.seriesDescription, .LO),
        (numberOfSeriesRelatedInstances, .IS),
    ]

    /// Adds each key as an empty return key unless the identifier already matches on it.
    public static func ask(_ identifier: inout DataSet, _ keys: [(Tag, VR)]) {
        for (tag, vr) in keys where !identifier.contains(tag) { identifier.set(tag, vr: vr, strings: []) }
    }

    /// A value with its padding removed, `nil` when empty.
    public static func text(_ match: DataSet, _ tag: Tag) -> String? {
        guard let value = match.string(tag), !value.isEmpty else { return nil }
        return value
    }

    /// An IS count, `nil` when the peer left it empty or sent something that is not a count (then the planner
    /// goes one level down instead of trusting it).
    public static func count(_ match: DataSet, _ tag: Tag) -> Int? {
        text(match, tag).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }
}

extension StudyHolding {
    /// A study-level match (``InventoryKeys/study``); `nil` without a StudyInstanceUID.
    public init?(match: DataSet) {
        guard let uid = InventoryKeys.text(match, .studyInstanceUID) else { return nil }
        self.init(
            studyInstanceUID: uid, patientID: InventoryKeys.text(match, .patientID),
            patientName: InventoryKeys.text(match, .patientName), studyDate: InventoryKeys.text(match, .studyDate),
            studyDescription: InventoryKeys.text(match, .studyDescription),
            accessionNumber: InventoryKeys.text(match, InventoryKeys.accessionNumber),
            seriesCount: InventoryKeys.count(match, InventoryKeys.numberOfStudyRelatedSeries),
            instanceCount: InventoryKeys.count(match, InventoryKeys.numberOfStudyRelatedInstances))
    }
}

extension SeriesHolding {
    /// A series-level match of study `studyInstanceUID` (``InventoryKeys/series``); `nil` without a
    /// SeriesInstanceUID.
    public init?(match: DataSet, studyInstanceUID: String) {
        guard let uid = InventoryKeys.text(match, .seriesInstanceUID) else { return nil }
        self.init(
            studyInstanceUID: studyInstanceUID, seriesInstanceUID: uid, modality: InventoryKeys.text(match, .modality),
            seriesNumber: InventoryKeys.text(match, InventoryKeys.seriesNumber),
            seriesDescription: InventoryKeys.text(match, .seriesDescription),
            instanceCount: InventoryKeys.count(match, InventoryKeys.numberOfSeriesRelatedInstances))
    }
}
