import DICOMData

/// A C-FIND request (PS3.4 C.4.1): level, information model and identifier.
///
/// The identifier holds the matching keys (with values) and return keys (empty); the
/// QueryRetrieveLevel element is set from ``level`` by the backends, so it need not be in it.
public struct FindRequest: Sendable {
    public var level: QueryLevel
    public var model: QueryModel
    public var identifier: DataSet
    /// After this many matches the query is cancelled with C-CANCEL (PS3.7 §9.3.2.3); `nil` for all.
    public var limit: Int?
    /// A guard against a flood: more pending responses than this cancel the query (C-CANCEL) and fail
    /// it with ``PXError/tooManyResponses(limit:)``; `nil` for no bound. Unlike ``limit``, reaching it
    /// is an error: the answer is incomplete.
    public var maxResponses: Int?
    /// Whether ``FindResult/matches`` keeps the identifiers; `false` when the caller consumes each
    /// response as it arrives (px-find's ndjson), so that memory does not grow with the responses.
    public var keepMatches: Bool

    /// The default ``maxResponses`` of px-find.
    public static let defaultMaxResponses = 100_000

    public init(
        level: QueryLevel, model: QueryModel = .studyRoot, identifier: DataSet, limit: Int? = nil,
        maxResponses: Int? = nil,
        keepMatches: Bool = true
    ) {
        self.level = level
        self.model = model
        self.identifier = identifier
        self.limit = limit
        self.maxResponses = maxResponses
        self.keepMatches = keepMatches
    }

    /// The number of matches after which the backend sends C-CANCEL: ``limit``, or one past
    /// ``maxResponses`` (which shows that the bound was exceeded), whichever comes first.
    public var cancelAfter: Int? {
        [limit, maxResponses.map { $0 + 1 }].compactMap { $0 }.min()
    }

    /// The identifier with (0008,0052) QueryRetrieveLevel set to ``level``.
    public var identifierWithLevel: DataSet {
        var ds = identifier
        ds.set(.queryRetrieveLevel, vr: .CS, string: level.dicomValue)
        return ds
    }
}

/// One C-FIND-RSP: its status and, for a pending response, the matching identifier.
public struct FindResponse: Sendable {
    public var status: DIMSEStatus
    public var identifier: DataSet?

    public init(status: DIMSEStatus, identifier: DataSet?) {
        self.status = status
        self.identifier = identifier
    }
}

/// A finished C-FIND: the matches in order and the final status.
public struct FindResult: Sendable {
    public var request: FindRequest
    /// The identifiers of the pending responses, in arrival order (empty unless ``FindRequest/keepMatches``).
    public var matches: [DataSet]
    /// The final response's status (success, cancel or a failure).
    public var status: DIMSEStatus
    /// How many matches arrived (also when they were not kept).
    public var count: Int

    public init(request: FindRequest, matches: [DataSet], status: DIMSEStatus, count: Int? = nil) {
        self.request = request
        self.matches = matches
        self.status = status
        self.count = count ?? matches.count
    }
}

/// A study with the series found under it: the result of the two-phase query
/// (``DICOMBackend/findStudiesWithSeries(_:connection:logger:)``).
public struct StudyWithSeries: Sendable {
    public var study: DataSet
    public var series: [DataSet]
    /// The status of the series-level query for this study.
    public var seriesStatus: DIMSEStatus

    public init(study: DataSet, series: [DataSet], seriesStatus: DIMSEStatus) {
        self.study = study
        self.series = series
        self.seriesStatus = seriesStatus
    }
}
