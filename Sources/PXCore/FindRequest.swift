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
    /// Keys not sent in the identifier that ``shapedResponse(_:)`` adds to every match, with the peer's value when
    /// it returned one and empty otherwise: pypx's two-phase output shows the Retrieve AE Title a C-FIND SCP adds
    /// (PS3.4 §C.4.1.1.3.2) though pypx does not ask for it, so the pypx formats keep it; a peer that returns none
    /// (a QIDO-RS service has no AE title) gives it empty, so every peer and protocol gives the same keys.
    public var keptIfReturned: [Tag] = []

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

    /// Matches a peer may still send after px's C-CANCEL-RQ (PS3.7 §9.3.2.3), those in flight when it arrived;
    /// past them the peer ignores the cancel, and both backends stop reading and end the association.
    public static let responsesAfterCancel = 1000

    /// The number of matches after which the backend sends C-CANCEL: ``limit``, or one past
    /// ``maxResponses`` (which shows that the bound was exceeded), whichever comes first.
    public var cancelAfter: Int? {
        [limit, maxResponses.map { $0 + 1 }].compactMap { $0 }.min()
    }

    /// The identifier with (0008,0052) QueryRetrieveLevel set to ``level``; for the worklist model, which has
    /// no levels (PS3.4 §K.6.1.2), the identifier without one.
    public var identifierWithLevel: DataSet {
        var ds = identifier
        if model == .worklist {
            _ = ds.remove(.queryRetrieveLevel)
        } else {
            ds.set(.queryRetrieveLevel, vr: .CS, string: level.dicomValue)
        }
        return ds
    }
}

extension FindRequest {
    /// A match shaped as the answer to exactly this request (PS3.4 §C.4.1.1.3.2): the keys asked for, in tag
    /// order, empty when the peer returned no value; QueryRetrieveLevel as asked; the peer's Specific Character
    /// Set kept. What a peer adds unasked (Orthanc's RetrieveAETitle on C-FIND, the NumberOf* and other
    /// attributes a QIDO-RS service returns, PS3.18 §10.6.3.3) is dropped, so px-find prints the same keys
    /// whichever peer and protocol answered. A sequence asked for is kept as the peer returned it.
    public func shapedResponse(_ match: DataSet) -> DataSet {
        var out = DataSet()
        if let charset = match[.specificCharacterSet] { out.set(charset) }
        for key in identifierWithLevel {
            if key.tag == .specificCharacterSet || key.tag.isGroupLength { continue }
            if key.tag == .queryRetrieveLevel {
                out.set(key)
            } else if let element = match[key.tag] {
                out.set(element)
            } else {
                out.set(DataElement(tag: key.tag, vr: key.vr, bytes: []))
            }
        }
        for tag in keptIfReturned where out[tag] == nil {
            // Retrieve AE Title is the only such key (its VR, AE, for the empty value).
            out.set(match[tag] ?? DataElement(tag: tag, vr: .AE, bytes: []))
        }
        return out
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
/// (``Querying/findStudiesWithSeries(_:connection:logger:)``).
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
