import DICOMData
import Logging
import PXCore

/// What a DICOMweb place holds, asked with QIDO-RS (PS3.18 §10.6): the ``PlaceInventory`` px-sync uses
/// for a DICOMweb source or destination.
///
/// - Studies: `GET {base}/studies?…&includefield=00201206&includefield=00201208` — the counts
///   NumberOfStudyRelatedSeries and NumberOfStudyRelatedInstances are optional return keys (PS3.18
///   §10.6.1.3.1), asked for with includefield (§8.3.4.3); `nil` when the service leaves them out.
/// - Series: `GET {base}/studies/{study}/series?includefield=00201209` (NumberOfSeriesRelatedInstances).
/// - Instances: `GET {base}/studies/{study}/series/{series}/instances`, SOP Instance UIDs only.
///
/// Large answers come in pages of ``pageSize`` (`limit` and `offset`, PS3.18 §8.3.4.4). Each question
/// opens its own HTTP client (connections are not kept between questions).
public struct DICOMWebInventory: PlaceInventory {
    public let place: DICOMWebPlace
    public let timeouts: Timeouts
    /// Matches asked for per QIDO-RS request.
    public let pageSize: Int
    /// The most matches one question may have (``FindRequest/maxResponses``), whatever the service does
    /// with `limit`; more fail with ``PXError/tooManyResponses(limit:)``.
    public var maxResponses: Int? = FindRequest.defaultMaxResponses
    let logger: Logger

    public init(
        place: DICOMWebPlace, timeouts: Timeouts = .standard, pageSize: Int = DICOMWebClient.pageSize,
        logger: Logger = Logger(label: "px.dicomweb.inventory")
    ) {
        self.place = place
        self.timeouts = timeouts
        self.pageSize = max(1, pageSize)
        self.logger = logger
    }

    /// The return keys of a study question besides those in `keys`.
    static let studyReturnKeys: [(Tag, VR)] = [
        (.studyInstanceUID, .UI), (.patientID, .LO), (.patientName, .PN), (.studyDate, .DA),
        (.studyDescription, .LO), (InventoryTag.accessionNumber, .SH), (InventoryTag.numberOfStudyRelatedSeries, .IS),
        (InventoryTag.numberOfStudyRelatedInstances, .IS),
    ]

    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        var identifier = keys
        for (tag, vr) in Self.studyReturnKeys where identifier[tag] == nil {
            identifier.set(DataElement(tag: tag, vr: vr, bytes: []))
        }
        let matches = try await search(FindRequest(level: .study, identifier: identifier))
        return matches.compactMap { match in
            guard let uid = Self.value(match, .studyInstanceUID) else { return nil }
            return StudyHolding(
                studyInstanceUID: uid, patientID: Self.value(match, .patientID),
                patientName: Self.value(match, .patientName), studyDate: Self.value(match, .studyDate),
                studyDescription: Self.value(match, .studyDescription),
                accessionNumber: Self.value(match, InventoryTag.accessionNumber),
                seriesCount: match.integer(InventoryTag.numberOfStudyRelatedSeries),
                instanceCount: match.integer(InventoryTag.numberOfStudyRelatedInstances))
        }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        for (tag, vr) in [
            (Tag.seriesInstanceUID, VR.UI), (.modality, .CS), (InventoryTag.seriesNumber, .IS),
            (.seriesDescription, .LO),
            (InventoryTag.numberOfSeriesRelatedInstances, .IS),
        ] {
            identifier.set(DataElement(tag: tag, vr: vr, bytes: []))
        }
        let matches = try await search(FindRequest(level: .series, identifier: identifier))
        return matches.compactMap { match in
            guard let uid = Self.value(match, .seriesInstanceUID) else { return nil }
            return SeriesHolding(
                studyInstanceUID: studyInstanceUID, seriesInstanceUID: uid, modality: Self.value(match, .modality),
                seriesNumber: Self.value(match, InventoryTag.seriesNumber),
                seriesDescription: Self.value(match, .seriesDescription),
                instanceCount: match.integer(InventoryTag.numberOfSeriesRelatedInstances))
        }
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        identifier.set(.seriesInstanceUID, vr: .UI, string: seriesInstanceUID)
        identifier.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: []))
        let matches = try await search(FindRequest(level: .image, identifier: identifier))
        return Set(matches.compactMap { Self.value($0, .sopInstanceUID) })
    }

    /// Every match of `request`, page by page.
    private func search(_ request: FindRequest) async throws(PXError) -> [DataSet] {
        var bounded = request
        bounded.maxResponses = request.maxResponses ?? maxResponses
        let question = bounded
        return try await PXError.catching {
            try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
                try await client.search(question, pageSize: pageSize) { _ in }
            }
        }
    }

    /// A non-empty value, `nil` otherwise.
    static func value(_ match: DataSet, _ tag: Tag) -> String? {
        guard let value = match.string(tag), !value.isEmpty else { return nil }
        return value
    }
}

/// The keys the inventory asks for that ``Tag`` has no constant for (kept here, not as ``Tag``
/// members, so they cannot clash with constants another module adds).
enum InventoryTag {
    static let accessionNumber = Tag(0x0008, 0x0050)
    static let seriesNumber = Tag(0x0020, 0x0011)
    /// PS3.4 §C.6.2.1.2 (optional return keys answered by the SCP).
    static let numberOfStudyRelatedSeries = Tag(0x0020, 0x1206)
    static let numberOfStudyRelatedInstances = Tag(0x0020, 0x1208)
    static let numberOfSeriesRelatedInstances = Tag(0x0020, 0x1209)
}
