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
}
