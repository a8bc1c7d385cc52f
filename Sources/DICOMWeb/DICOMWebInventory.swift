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
public struct DICOMWebInventory: MatchingInventory {
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

    /// Every match at `level`, page by page.
    public func matches(_ level: QueryLevel, _ identifier: DataSet) async throws(PXError) -> [DataSet] {
        var bounded = FindRequest(level: level, identifier: identifier)
        bounded.maxResponses = maxResponses
        let question = bounded
        return try await PXError.catching {
            try await DICOMWebClient.with(place, timeouts: timeouts, logger: logger) { client in
                try await client.search(question, pageSize: pageSize) { _ in }
            }
        }
    }
}
