import DICOMData
import PXCore

/// px-sync's JSON, the one rendering of a run: each ``SyncEvent`` encodes to the NDJSON line px-sync prints
/// for it, a ``SyncSummary`` to the envelope's `data`, through ``PXCore/JSONValueEncoder``.
///
/// The events px-sync does not print as a line (``isNDJSONLine`` is false) encode in the same shape:
/// `{"event": "progress", "done", "total", "instances", "failed"}`, `{"event": "finished", ...the summary}`, and
/// a dry run's end `{"event": "studyPlanned", ...}`.
extension SyncEvent: Encodable {
    /// Whether px-sync prints the event as an NDJSON line (progress goes to a terminal's stderr, the finished
    /// summary into the envelope, a dry run's end was its `planned` line).
    public var isNDJSONLine: Bool {
        switch self {
        case .lineFailed, .planned, .studyStarted: return true
        case .studyEnded(let result): return result.result != .planned
        case .progress, .finished: return false
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .lineFailed(let error):
            try SyncOutput.LineError(error, event: "failed").encode(to: encoder)
        case .planned(let study, let plan):
            var output = SyncOutput.Study(study, event: "planned")
            output.instances = PXOutput.Nullable(plan.instances)
            output.units = plan.units.map(SyncOutput.Unit.init)
            try output.encode(to: encoder)
        case .studyStarted(let study):
            try SyncOutput.Study(study, event: "studyStarted").encode(to: encoder)
        case .studyEnded(let result):
            let name: String
            switch result.result {
            case .alreadyPresent: name = "skipped"
            case .failed: name = "failed"
            case .transferred: name = "studyFinished"
            case .planned: name = "studyPlanned"
            }
            try SyncOutput.Study(result, event: name).encode(to: encoder)
        case .progress(let progress):
            try SyncOutput.Progress(progress).encode(to: encoder)
        case .finished(let summary):
            try SyncOutput.Summary(summary, event: "finished").encode(to: encoder)
        }
    }
}

/// px-sync's `data`: the counts, each study's end (by StudyInstanceUID), the batch lines that failed.
extension SyncSummary: Encodable {
    public func encode(to encoder: any Encoder) throws { try SyncOutput.Summary(self).encode(to: encoder) }
}

/// The members of px-sync's lines and summary.
enum SyncOutput {
    /// A study: the event's name (not in the summary), its identity, then a plan (`instances`, `units`) or
    /// its end (`result`, and what its transfer did).
    struct Study: Encodable {
        var event: String?
        var studyInstanceUID: String
        var patientID: String?
        var accessionNumber: String?
        var source: String
        var destination: String?
        var instances: PXOutput.Nullable<Int>?
        var units: [Unit]?
        var result: String?
        var transferred: Int?
        var failed: Int?
        var error: PXOutput.ErrorOutput?

        enum CodingKeys: String, CodingKey {
            case event
            case studyInstanceUID = "StudyInstanceUID"
            case patientID = "PatientID"
            case accessionNumber = "AccessionNumber"
            case source
            case destination
            case instances
            case units
            case result
            case transferred
            case failed
            case error
        }

        init(_ study: SyncStudy, event: String?) {
            self.event = event
            studyInstanceUID = study.holding.studyInstanceUID
            patientID = study.holding.patientID
            accessionNumber = study.holding.accessionNumber
            source = study.source
            destination = study.destination
        }

        init(_ result: SyncStudyResult, event: String?) {
            self.init(result.study, event: event)
            self.result = result.result.rawValue
            if let outcome = result.outcome {
                transferred = outcome.transferred
                failed = outcome.failed
                error = outcome.failure.map(PXOutput.ErrorOutput.init)
            }
        }
    }

    /// One unit of a plan: its level, its series, how many instances it names, how many it holds.
    struct Unit: Encodable {
        var level: String
        var seriesInstanceUID: String?
        var sopInstanceUIDs: Int?
        var instances: PXOutput.Nullable<Int>

        enum CodingKeys: String, CodingKey {
            case level
            case seriesInstanceUID = "SeriesInstanceUID"
            case sopInstanceUIDs = "SOPInstanceUIDs"
            case instances
        }

        init(_ unit: TransferUnit) {
            level = unit.level.dicomValue
            seriesInstanceUID = unit.seriesInstanceUID
            sopInstanceUIDs = unit.sopInstanceUIDs.isEmpty ? nil : unit.sopInstanceUIDs.count
            instances = PXOutput.Nullable(unit.instances)
        }
    }

    /// A batch line that failed (an event, or an entry of the summary's `lineErrors`).
    struct LineError: Encodable {
        var event: String?
        var line: Int
        var text: String
        var error: PXOutput.ErrorOutput

        init(_ error: SyncSelection.LineError, event: String? = nil) {
            self.event = event
            line = error.number
            text = error.text
            self.error = PXOutput.ErrorOutput(error.error)
        }
    }

    /// Studies done so far.
    struct Progress: Encodable {
        var event = "progress"
        var done: Int
        var total: Int
        var instances: Int
        var failed: Int

        init(_ progress: SyncProgress) {
            done = progress.done
            total = progress.total
            instances = progress.instances
            failed = progress.failed
        }
    }

    /// The envelope's data (with `event` only as the `finished` event).
    struct Summary: Encodable {
        var event: String?
        var found: Int
        var alreadyPresent: Int
        var transferred: Int
        var failed: Int
        var planned: Int
        var instancesTransferred: Int
        var studies: [Study]
        var lineErrors: [LineError]
        /// Only with `--commit`.
        var commitment: [Commitment]?

        struct Commitment: Encodable {
            var destination: String
            var report: PXOutput.CommitmentOutput?
            var error: PXOutput.ErrorOutput?
        }

        init(_ summary: SyncSummary, event: String? = nil) {
            self.event = event
            found = summary.found
            alreadyPresent = summary.alreadyPresent
            transferred = summary.transferred
            failed = summary.failed
            planned = summary.planned
            instancesTransferred = summary.instancesTransferred
            studies = summary.studies.sorted {
                ($0.study.holding.studyInstanceUID, $0.study.destinationIndex)
                    < ($1.study.holding.studyInstanceUID, $1.study.destinationIndex)
            }.map { Study($0, event: nil) }
            lineErrors = summary.lineErrors.map { LineError($0) }
            commitment =
                summary.commitments.isEmpty
                ? nil
                : summary.commitments.map {
                    Commitment(
                        destination: $0.destination, report: $0.result.map(PXOutput.CommitmentOutput.init),
                        error: $0.failure.map(PXOutput.ErrorOutput.init))
                }
        }
    }
}
