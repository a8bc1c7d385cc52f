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

    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        var identifier = keys
        InventoryKeys.ask(&identifier, InventoryKeys.study)
        return try await search(FindRequest(level: .study, identifier: identifier)).compactMap {
            StudyHolding(match: $0)
        }
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        var identifier = DataSet()
        identifier.set(.studyInstanceUID, vr: .UI, string: studyInstanceUID)
        InventoryKeys.ask(&identifier, InventoryKeys.series)
        return try await search(FindRequest(level: .series, identifier: identifier)).compactMap {
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
        let matches = try await search(FindRequest(level: .image, identifier: identifier))
        return Set(matches.compactMap { InventoryKeys.text($0, .sopInstanceUID) })
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
}
