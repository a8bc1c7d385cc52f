import DICOMData
import Logging
import PXCore

/// A DIMSE node as a place: what it holds, asked with C-FIND in the Study Root model (PS3.4 §C.6.2) at
/// STUDY level (with NumberOfStudyRelatedSeries / NumberOfStudyRelatedInstances, PS3.4 §C.6.2.1.2), SERIES
/// level (NumberOfSeriesRelatedInstances) and IMAGE level (the SOP Instance UIDs).
///
/// The counts are optional for an SCP (dcmqrscp leaves them empty): an empty or unreadable count is `nil`,
/// and the planner then goes one level down instead of trusting it.
public struct NodePlace: PlaceInventory {
    public let backend: any DICOMBackend
    public let connection: Connection
    public let logger: Logger
    /// Bound on the responses to one query (``FindRequest/maxResponses``).
    public var maxResponses: Int? = FindRequest.defaultMaxResponses

    public init(backend: any DICOMBackend, connection: Connection, logger: Logger) {
        self.backend = backend
        self.connection = connection
        self.logger = logger
    }

    static let accessionNumber = Tag(0x0008, 0x0050)
    static let seriesNumber = Tag(0x0020, 0x0011)
    static let numberOfStudyRelatedSeries = Tag(0x0020, 0x1206)
    static let numberOfStudyRelatedInstances = Tag(0x0020, 0x1208)
    static let numberOfSeriesRelatedInstances = Tag(0x0020, 0x1209)

    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        var identifier = keys
        Self.ask(
            &identifier,
            [
                (.studyInstanceUID, .UI), (.patientID, .LO), (.patientName, .PN), (.studyDate, .DA),
                (.studyDescription, .LO), (Self.accessionNumber, .SH), (Self.numberOfStudyRelatedSeries, .IS),
                (Self.numberOfStudyRelatedInstances, .IS),
            ])
        return try await find(.study, identifier).compactMap { match in
            guard let uid = Self.text(match, .studyInstanceUID) else { return nil }
            return StudyHolding(
                studyInstanceUID: uid, patientID: Self.text(match, .patientID),
                patientName: Self.text(match, .patientName), studyDate: Self.text(match, .studyDate),
                studyDescription: Self.text(match, .studyDescription),
                accessionNumber: Self.text(match, Self.accessionNumber),
                seriesCount: Self.count(match, Self.numberOfStudyRelatedSeries),
                instanceCount: Self.count(match, Self.numberOfStudyRelatedInstances))
        }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        Self.ask(
            &identifier,
            [
                (.seriesInstanceUID, .UI), (.modality, .CS), (Self.seriesNumber, .IS), (.seriesDescription, .LO),
                (Self.numberOfSeriesRelatedInstances, .IS),
            ])
        return try await find(.series, identifier).compactMap { match in
            guard let uid = Self.text(match, .seriesInstanceUID) else { return nil }
            return SeriesHolding(
                studyInstanceUID: studyInstanceUID, seriesInstanceUID: uid, modality: Self.text(match, .modality),
                seriesNumber: Self.text(match, Self.seriesNumber),
                seriesDescription: Self.text(match, .seriesDescription),
                instanceCount: Self.count(match, Self.numberOfSeriesRelatedInstances))
        }
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        identifier.set(.seriesInstanceUID, vr: .UI, string: seriesInstanceUID)
        Self.ask(&identifier, [(.sopInstanceUID, .UI)])
        return Set(try await find(.image, identifier).compactMap { Self.text($0, .sopInstanceUID) })
    }

    /// One C-FIND; a failure status is thrown (a partial answer would make the plan wrong).
    func find(_ level: QueryLevel, _ identifier: DataSet) async throws(PXError) -> [DataSet] {
        let request = FindRequest(level: level, model: .studyRoot, identifier: identifier, maxResponses: maxResponses)
        let result = try await backend.find(request, connection: connection, logger: logger) { _ in }
        if result.status.isFailure { throw .dimseFailure(result.status, operation: "C-FIND (\(level.dicomValue))") }
        if let maxResponses, result.matches.count > maxResponses { throw .tooManyResponses(limit: maxResponses) }
        return result.matches
    }

    /// Adds each tag as an empty return key unless the identifier already matches on it.
    static func ask(_ identifier: inout DataSet, _ keys: [(Tag, VR)]) {
        for (tag, vr) in keys where !identifier.contains(tag) { identifier.set(tag, vr: vr, strings: []) }
    }

    /// A value with its padding removed, `nil` when empty.
    static func text(_ match: DataSet, _ tag: Tag) -> String? {
        guard let value = match.string(tag), !value.isEmpty else { return nil }
        return value
    }

    /// An IS count, `nil` when the SCP left it empty or sent something that is not a count.
    static func count(_ match: DataSet, _ tag: Tag) -> Int? {
        text(match, tag).flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
    }
}
