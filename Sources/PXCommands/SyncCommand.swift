import DICOMData
import DICOMWeb
import Logging
import NativeBackend
import PX
import PXCommandLine
import PXCore
import PXIndex
import PXPlaces
import PXStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// px-sync: make sure the selected studies of the sources are in the destination, transferring only what is
/// missing. The places are resolved once (``PlaceContext``), PXPlaces' ``SyncEngine`` runs the sync, and this
/// command renders its events: NDJSON on stdout as it goes, a progress line on a terminal's stderr, then the
/// envelope.
public enum SyncCommand {
    /// - Parameter pipedSource: dcm's `px-find ... | px-sync DEST` (one place given): the source place px-find
    ///   asked, from its output on stdin.
    public static func run(
        sync: SyncOptions, query: QueryOptions, timeouts: TimeoutOptions, backend options: BackendOptions,
        commit: CommitOptions, logging: LoggingOptions, output outputOptions: OutputOptions,
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
            var destinations = [resolved.removeLast().deflating(sync.zipDeflate)]
            for text in sync.alsoTo {
                destinations.append(
                    try await context.resolve(text, asDestination: true, layout: sync.layout, dryRun: sync.dryRun)
                        .deflating(sync.zipDeflate))
            }
            var transfer = SyncTransfer(logger: logger)
            transfer.retrieve = SyncTransfer.Retrieve(rawValue: sync.retrieve) ?? .auto
            transfer.window = sync.window
            let commitment = sync.dryRun ? nil : try commit.settings()
            transfer.collectsStored = commitment != nil
            var receiverFolder: FolderPlace?
            // The receiver places into one folder: it serves a run with that one destination.
            if sync.receiverPort != nil, !sync.dryRun, destinations.count == 1,
                let folder = destinations[0].receivingFolder,
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
            var commitments: [SyncCommitment] = []
            defer {
                summary.value = engine.summary
                summary.value.commitments = commitments
            }
            if let port = sync.receiverPort, let folder = receiverFolder {
                try await SyncReceiver.run(port: port, aeTitle: sync.receiverAETitle, into: folder, logger: logger) {
                    () async throws(PXError) in try await engine.run(selection)
                }
            } else {
                try await engine.run(selection)
            }
            if showProgress && engine.summary.found > 0 { CommandOutput.writeStandardError("\n") }
            var done = engine.summary
            if let commitment {
                commitments = await requestCommitment(
                    commitment, of: engine, destinations: destinations, logger: logger)
                done.commitments = commitments
            }
            return done.failure
        }
    }

    /// Storage commitment (PS3.4 Annex J, Push Model SCU) of what the run stored at each node destination: one
    /// transaction per destination on an association of its own, after the transfers (native: DCMTK has no
    /// storage commitment tool), the report on it or on the listener at ``CommitmentSettings/listenPort``.
    static func requestCommitment(
        _ settings: CommitmentSettings, of engine: SyncEngine, destinations: [Endpoint], logger: Logger
    ) async -> [SyncCommitment] {
        var out: [SyncCommitment] = []
        for (index, destination) in destinations.enumerated() {
            // The node's connection already has the run's calling AE title (PlaceContext).
            guard let connection = destination.dimsePeer?.connection else { continue }
            let instances = engine.storedInstances(destination: index)
            guard !instances.isEmpty else { continue }
            var entry = SyncCommitment(destination: destination.label)
            do {
                entry.result = try await NativeBackend().commit(
                    instances, settings: settings, connection: connection, logger: logger)
            } catch {
                entry.failure = error
            }
            out.append(entry)
        }
        return out
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
