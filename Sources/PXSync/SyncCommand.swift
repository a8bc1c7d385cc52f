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
        let data: (()) -> JSONValue = { _ in JSONValueEncoder.encode(summary.value) }
        try await CommandRunner.run(
            output: outputOptions.output, backend: options, need: .nodes, state: (), data: data
        ) { backend, _ in
            let config = try PX.config()
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
                    if showProgress { CommandOutput.writeStandardError("\r" + SyncProgressText.line(progress)) }
                default:
                    if event.isNDJSONLine { output.write(JSONValueEncoder.encode(event), pretty: false) }
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

/// px-sync's progress line for a terminal's stderr (its JSON is ``SyncEvent``'s and ``SyncSummary``'s `Encodable`
/// conformances, in PXPlaces).
enum SyncProgressText {
    static func line(_ progress: SyncProgress) -> String {
        "px-sync: \(progress.done)/\(progress.total) studies, \(progress.instances) instances transferred, "
            + "\(progress.failed) failed   "
    }
}
