/// The bookkeeping of one px-push across associations, the same for both backends: which files are
/// answered, how often each went out, and whether to open another association after one ended early.
///
/// When an association ends before the peer answered (an A-ABORT, a dropped connection), the files sent
/// on it and not answered are charged one attempt, and the push goes on with every file not yet answered
/// on a new association: one bad file costs that file, not the rest of the run. A file charged
/// ``PushResult/maximumAttempts`` times is failed instead of being sent again, and the push stops after
/// ``PushResult/maximumFruitlessAssociations`` associations in a row on which nothing was answered (a peer
/// that aborts everything), so the number of associations is bounded whatever the peer does.
public struct PushSession: Sendable {
    public let request: PushRequest
    /// One entry per file of the request, unanswered (``PushFileResults/isAnswered(_:)``) until the file is answered
    /// or given up.
    public private(set) var results: PushFileResults
    /// How many associations each file was sent on.
    public private(set) var attempts: [Int32]
    /// Associations opened so far.
    public private(set) var associations = 0
    private var answeredOnThisAssociation = 0
    private var fruitless = 0

    /// Plans the session: files that planning refused have their result already (``planned``).
    public init(_ request: PushRequest) {
        self.request = request
        self.results = PushFileResults(unanswered: request.files)
        for index in request.files.indices where request.files.isRefused(at: index) {
            let file = request.files[index]
            self.results.record(index, PushFileResult(file: file, status: nil, error: file.error))
        }
        self.attempts = Array(repeating: 0, count: request.files.count)
    }

    /// The results that planning decided (files never to be sent), in order.
    public var planned: [PushFileResult] {
        request.files.indices.filter { request.files.isRefused(at: $0) }.map { results[$0] }
    }

    /// The files still to send, in request order.
    public var unanswered: [Int] { results.indices.filter { !results.isAnswered($0) } }

    /// Whether any file was answered by the peer (on any association).
    public var anyAnswered: Bool { results.indices.contains { results.status($0) != nil } }

    /// The files the peer stored, in order.
    public var stored: [Int] { results.indices.filter { results.succeeded($0) } }

    /// A new association is being opened.
    public mutating func startAssociation() {
        associations += 1
        answeredOnThisAssociation = 0
    }

    /// File `index` went out (its C-STORE-RQ and data set) on the current association.
    public mutating func sent(_ index: Int) {
        attempts[index] += 1
    }

    /// File `index`, counted as going out, was not sent after all (storescu names each file before it finds
    /// that no accepted context can carry it).
    public mutating func withdraw(_ index: Int) {
        attempts[index] = max(0, attempts[index] - 1)
    }

    /// File `index` is done on the current association: `result` with its attempts filled in.
    @discardableResult
    public mutating func finish(_ index: Int, _ result: PushFileResult) -> PushFileResult {
        var result = result
        result.attempts = Int(attempts[index])
        results.record(index, result)
        if result.status != nil { answeredOnThisAssociation += 1 }
        return result
    }

    /// The current association ended with `error` while `inFlight` (sent, not answered) were out. Files
    /// that used up their attempts are failed (returned, to report); the answer says whether to open a
    /// new association for the files still unanswered. Only an association that ended by an abort or a
    /// lost connection (``PXError/Code/aborted``) is worth another; a timeout is not retried.
    public mutating func associationEnded(by error: PXError, inFlight: [Int]) -> (failed: [PushFileResult], goOn: Bool)
    {
        var failed: [PushFileResult] = []
        for index in inFlight where !results.isAnswered(index) && attempts[index] >= PushResult.maximumAttempts {
            failed.append(
                finish(
                    index,
                    PushFileResult(
                        file: request.files[index], status: nil,
                        error: .aborted(
                            "not stored: the association ended while the file was being stored, \(attempts[index]) times (\(error.message))"
                        ))))
        }
        fruitless = answeredOnThisAssociation == 0 ? fruitless + 1 : 0
        let goOn = error.code == .aborted && fruitless < PushResult.maximumFruitlessAssociations && !unanswered.isEmpty
        return (failed, goOn)
    }

    /// The finished push: files never answered are reported as not stored, with their attempts.
    public func result(failure: PXError?) -> PushResult {
        var results = self.results
        for index in results.indices where !results.isAnswered(index) {
            results.record(index, PushResult.notSent(request.files[index], attempts: Int(attempts[index])))
        }
        return PushResult(results: results, failure: failure, associations: associations)
    }
}
