import ArgumentParser
import DICOMData
import DICOMWeb
import Logging
import PX
import PXCommandLine
import PXCommands
import PXCore
import PXIndex
import PXPlaces
import PXStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// px-sync's own options (the query keys are ``QueryOptions``).
public struct SyncOptions: ParsableArguments {
    @Argument(help: "SOURCE... DEST: places (see PLACES above); the last one is the destination.")
    public var places: [String] = []

    @Option(
        name: .customLong("also-to"),
        help: "A further destination (repeat for more): each selected study is synced into DEST and into these.")
    public var alsoTo: [String] = []

    @Option(
        name: .customLong("from-file"), help: "A CSV file with a PatientID, AccessionNumber or StudyInstanceUID column."
    )
    public var fromFile: String?

    @Option(
        name: .customShort("s"),
        help: ArgumentHelp(
            "dcm: a source place (repeatable); the places given are then all destinations.", valueName: "place"))
    public var sources: [String] = []

    @Option(
        name: .customShort("q"),
        help: ArgumentHelp("dcm: a query key Keyword=value (repeatable), as px-find's -k.", valueName: "key"))
    public var dcmKeys: [String] = []

    @Flag(
        name: [.long, .customLong("force-all")],
        help: "Transfer every selected study, even what the destination already holds (dcm: --force-all).")
    public var force = false

    @Flag(name: .customLong("dry-run"), help: "Print the plan (planned and skipped events), transfer nothing.")
    public var dryRun = false

    @Flag(
        name: .long,
        help: ArgumentHelp(
            "Audit: also compare the bytes (size, CRC-32) of instances both folder or zip places hold.",
            discussion: "Every run compares SOP Instance UIDs; --verify reads each file of a folder place (a zip "
                + "place's checksums are in its archives) and fails a study whose copies differ "
                + "(contentMismatch), without overwriting either."))
    public var verify = false

    @Option(name: .long, help: "Studies transferred at once (one association each).")
    public var parallel = 4

    @Option(name: .long, help: "C-STOREs outstanding on each push (asynchronous operations window).")
    public var window: UInt16 = PushRequest.defaultWindow

    @Option(
        name: .long,
        help: "Node to folder: get (C-GET), move (C-MOVE to the receiver) or auto (C-GET, C-MOVE when refused).")
    public var retrieve: String = "auto"

    @Option(name: .customLong("receiver-port"), help: "Port of px-sync's own C-STORE receiver for C-MOVE (0: none).")
    public var receiverPort: Int?

    @Option(name: .customLong("receiver-aet"), help: "AE title of that receiver, as the source node knows it.")
    public var receiverAETitle: String = "PXSYNC"

    @Option(name: .customLong("aet"), help: "Calling AE title (default: [local] ae_title from the config, else PXSCU).")
    public var callingAETitle: String?

    @Option(name: .long, help: "Folder destination: layout template of new files (default pypx's tree).")
    public var layout: String?

    @Option(
        name: .customLong("lock-timeout"),
        help: ArgumentHelp(
            "Seconds to wait while another px-sync writes the folder or zip destination (default 600).",
            discussion: "A run locks its folder and zip destinations (DEST/.px/lock) while it plans and "
                + "transfers; a second run into one of them waits, then fails with placeBusy (exit 75)."))
    public var lockTimeout: Double = Double(SyncEngine.Options.defaultLockTimeout.components.seconds)

    public init() {}

    public func validate() throws {
        guard !places.isEmpty else {
            throw ValidationError("give SOURCE... DEST, or pipe px-find's output into px-sync DEST")
        }
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard window >= 1 else { throw ValidationError("--window must be at least 1") }
        guard lockTimeout >= 0, lockTimeout <= 31_536_000 else {
            throw ValidationError("--lock-timeout must be 0 to 31536000 seconds (a year)")
        }
        guard SyncTransfer.Retrieve(rawValue: retrieve) != nil else {
            throw ValidationError("--retrieve must be auto, get or move")
        }
        if let receiverPort, !(1...65535).contains(receiverPort) {
            throw ValidationError("--receiver-port must be 1-65535")
        }
        do { try AETitle.validate(receiverAETitle, role: "--receiver-aet") } catch {
            throw ValidationError(error.message)
        }
        if let callingAETitle {
            do { try AETitle.validate(callingAETitle, role: "--aet") } catch { throw ValidationError(error.message) }
        }
    }
}

/// px-sync: make sure the selected studies of the sources are in the destination, transferring only what is
/// missing. The places are resolved once (``PlaceContext``), PXPlaces' ``SyncEngine`` runs the sync, and this
/// command renders its events: NDJSON on stdout as it goes, a progress line on a terminal's stderr, then the
/// envelope.
public enum SyncCommand {
    /// - Parameter pipedSource: dcm's `px-find ... | px-sync DEST` (one place given): the source place px-find
    ///   asked, from its output on stdin.
    public static func run(
        sync: SyncOptions, query: QueryOptions, timeouts: TimeoutOptions, backend options: BackendOptions,
        logging: LoggingOptions, output outputOptions: OutputOptions,
        pipedSource: (String) throws(PXError) -> String
    ) async throws {
        // The selection first, before the logger, the backend or any place exists, so a usage error in it is
        // reported before anything connects.
        let chosen = Result { () throws(PXError) -> (selection: SyncSelection, places: [String]) in
            var places = sync.places
            var input: String?
            if places.count == 1 {
                guard stdinIsPipeOrFile else {
                    throw .usage("give SOURCE... DEST, or pipe px-find's output into px-sync DEST")
                }
                let text = StandardInput.readText()
                places.insert(try pipedSource(text), at: 0)
                input = text
            }
            return (try selection(sync: sync, query: query, input: input), places)
        }
        let logger = logging.makeLogger(label: "px-sync")
        let output = CommandOutput(pretty: false, command: outputOptions.output.command)
        let summary = SummaryBox()
        let data: (()) -> JSONValue = { _ in SyncJSON.summary(summary.value) }
        try await CommandRunner.run(
            output: outputOptions.output, backend: options, need: .nodes, state: (), data: data
        ) { backend, _ in
            let config = try CommandConfig.value()
            let calling = try LocalAE(aeTitle: sync.callingAETitle ?? config.localAETitle ?? LocalAE.defaultTitle)
            let context = PlaceContext(
                config: config, calling: calling, timeouts: timeouts.timeouts, backend: backend, logger: logger)
            let (selection, places) = try chosen.get()
            var resolved: [Endpoint] = []
            for (index, text) in places.enumerated() {
                let isDestination = index == places.count - 1
                resolved.append(
                    try await context.resolve(
                        text, asDestination: isDestination, layout: sync.layout, dryRun: sync.dryRun))
            }
            var destinations = [resolved.removeLast()]
            for text in sync.alsoTo {
                destinations.append(
                    try await context.resolve(text, asDestination: true, layout: sync.layout, dryRun: sync.dryRun))
            }
            var transfer = SyncTransfer(logger: logger)
            transfer.retrieve = SyncTransfer.Retrieve(rawValue: sync.retrieve) ?? .auto
            transfer.window = sync.window
            var receiverFolder: FolderPlace?
            // The receiver places into one folder: it serves a run with that one destination.
            if sync.receiverPort != nil, !sync.dryRun, destinations.count == 1,
                case .folder(let folder) = destinations[0],
                resolved.contains(where: { $0.mover != nil })
            {
                receiverFolder = folder
                transfer.receiverAETitle = sync.receiverAETitle
            }
            let showProgress = CommandOutput.standardErrorIsTerminal
            let engine = SyncEngine(
                sources: resolved, destinations: destinations, transfer: transfer,
                options: SyncEngine.Options(
                    force: sync.force, dryRun: sync.dryRun, parallel: sync.parallel,
                    lockTimeout: .milliseconds(Int64(sync.lockTimeout * 1000)), verify: sync.verify),
                logger: logger
            ) { event in
                switch event {
                case .progress(let progress):
                    if showProgress { CommandOutput.writeStandardError("\r" + SyncJSON.progressLine(progress)) }
                default:
                    if let json = SyncJSON.event(event) { output.write(json, pretty: false) }
                }
            }
            defer { summary.value = engine.summary }
            if let port = sync.receiverPort, let folder = receiverFolder {
                try await SyncReceiver.run(port: port, aeTitle: sync.receiverAETitle, into: folder, logger: logger) {
                    () async throws(PXError) in try await engine.run(selection)
                }
            } else {
                try await engine.run(selection)
            }
            if showProgress && engine.summary.found > 0 { CommandOutput.writeStandardError("\n") }
            return engine.summary.failure
        }
    }

    /// The selection the options give: `--from-file`, else query keys, else a px-find result on stdin (`input`
    /// when it was read already), else every study.
    static func selection(sync: SyncOptions, query: QueryOptions, input: String? = nil) throws(PXError)
        -> SyncSelection
    {
        if let file = sync.fromFile {
            guard let text = try PXConfig.readFile(file, limit: BoundedFile.batchLimit, role: "--from-file") else {
                throw .usage("--from-file: cannot read \(file)")
            }
            return try SyncSelection.parseBatch(text)
        }
        let keys = try query.matchingKeys()
        if keys.isEmpty && (input != nil || stdinIsPipeOrFile) {
            let text = input ?? StandardInput.readText()
            if text.contains(where: { !$0.isWhitespace }) {
                let studies = try RetrieveSelection.parse(pxFindOutput: text).map(\.studyInstanceUID)
                var seen = Set<String>()
                return .studies(studies.filter { seen.insert($0).inserted })
            }
        }
        var identifier = DataSet()
        for key in keys { identifier.set(key) }
        return .keys(identifier)
    }

    /// Whether stdin is a pipe or a file (a px-find result can be there), not a terminal, /dev/null or a socket.
    static var stdinIsPipeOrFile: Bool {
        var info = stat()
        guard fstat(0, &info) == 0 else { return false }
        let kind = info.st_mode & S_IFMT
        return kind == S_IFIFO || kind == S_IFREG
    }
}

/// The run's summary once the engine has it (the envelope is rendered after the run).
final class SummaryBox: Sendable {
    private let state = Mutex(SyncSummary())
    var value: SyncSummary {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}

/// px-sync's JSON: each ``SyncEvent`` as an NDJSON line, the ``SyncSummary`` as the envelope's data, through
/// `Encodable` types rendered by ``JSONValueEncoder``.
enum SyncJSON {
    /// The event's line; `nil` for what is not printed (a dry run's `planned` end, progress).
    static func event(_ event: SyncEvent) -> JSONValue? {
        switch event {
        case .lineFailed(let error):
            return JSONValueEncoder.encode(LineError(error, event: "failed"))
        case .planned(let study, let plan):
            var output = Study(study, event: "planned")
            output.instances = PXOutput.Nullable(plan.instances)
            output.units = plan.units.map(Unit.init)
            return JSONValueEncoder.encode(output)
        case .studyStarted(let study):
            return JSONValueEncoder.encode(Study(study, event: "studyStarted"))
        case .studyEnded(let result):
            let name: String
            switch result.result {
            case .alreadyPresent: name = "skipped"
            case .failed: name = "failed"
            case .transferred: name = "studyFinished"
            case .planned: return nil
            }
            return JSONValueEncoder.encode(Study(result, event: name))
        case .progress, .finished:
            return nil
        }
    }

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

    /// The envelope's data: the counts, each study's end (by StudyInstanceUID), the batch lines that failed.
    struct Summary: Encodable {
        var found: Int
        var alreadyPresent: Int
        var transferred: Int
        var failed: Int
        var planned: Int
        var instancesTransferred: Int
        var studies: [Study]
        var lineErrors: [LineError]

        init(_ summary: SyncSummary) {
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
        }
    }

    /// The envelope's data (``Summary``).
    static func summary(_ summary: SyncSummary) -> JSONValue { JSONValueEncoder.encode(Summary(summary)) }

    static func progressLine(_ progress: SyncProgress) -> String {
        "px-sync: \(progress.done)/\(progress.total) studies, \(progress.instances) instances transferred, "
            + "\(progress.failed) failed   "
    }
}
