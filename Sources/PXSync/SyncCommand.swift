import ArgumentParser
import DICOMData
import DICOMWeb
import Logging
import PX
import PXCommandLine
import PXCommands
import PXCore
import PXIndex
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
        name: .customLong("from-file"), help: "A CSV file with a PatientID, AccessionNumber or StudyInstanceUID column."
    )
    public var fromFile: String?

    @Flag(name: .long, help: "Transfer every selected study, even what the destination already holds.")
    public var force = false

    @Flag(name: .customLong("dry-run"), help: "Print the plan (planned and skipped events), transfer nothing.")
    public var dryRun = false

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

    public init() {}

    public func validate() throws {
        guard places.count >= 2 else { throw ValidationError("give at least one SOURCE and the DEST place") }
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        guard window >= 1 else { throw ValidationError("--window must be at least 1") }
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
/// missing. NDJSON events on stdout as it goes, then the envelope.
public enum SyncCommand {
    public static func run(
        sync: SyncOptions, query: QueryOptions, timeouts: TimeoutOptions, backend options: BackendOptions,
        logging: LoggingOptions, output outputOptions: OutputOptions
    ) async throws {
        // The selection first, before the logger, the backend or any place exists, so a usage error in it is
        // reported before anything connects.
        let chosen = Result { () throws(PXError) in try selection(sync: sync, query: query) }
        let logger = logging.makeLogger(label: "px-sync")
        let output = CommandOutput(pretty: false, command: outputOptions.output.command)
        let report = Report()
        let data: (()) -> JSONValue = { _ in report.json() }
        try await CommandRunner.run(
            output: outputOptions.output, backend: options, executables: [:], tool: "findscu", state: (), data: data
        ) { backend, _ in
            let config = try PXConfig.load()
            let calling = try LocalAE(aeTitle: sync.callingAETitle ?? config.localAETitle ?? LocalAE.defaultTitle)
            let selection = try chosen.get()
            var resolved: [SyncPlace] = []
            for (index, text) in sync.places.enumerated() {
                let isDestination = index == sync.places.count - 1
                var place = try Place.parse(text, config: config)
                if isDestination { place = try place.withLayout(sync.layout) }
                resolved.append(
                    try await resolve(
                        place, isDestination: isDestination, config: config, calling: calling,
                        timeouts: timeouts.timeouts, backend: backend, logger: logger))
            }
            let destination = resolved.removeLast()
            for source in resolved where !SyncTransfer.pairs(source, destination) {
                throw PXError.usage(
                    "px-sync \(source.label) -> \(destination.label): this pair is not supported (sync through a folder)"
                )
            }
            var transfer = SyncTransfer(logger: logger)
            transfer.retrieve = SyncTransfer.Retrieve(rawValue: sync.retrieve) ?? .auto
            transfer.window = sync.window
            var receiverFolder: FolderPlace?
            if sync.receiverPort != nil, !sync.dryRun, case .folder(let folder) = destination,
                resolved.contains(where: { if case .node = $0 { true } else { false } })
            {
                receiverFolder = folder
                transfer.receiverAETitle = sync.receiverAETitle
            }
            let engine = SyncEngine(
                sources: resolved, destination: destination, transfer: transfer, force: sync.force,
                dryRun: sync.dryRun, parallel: sync.parallel, report: report, logger: logger
            ) { event in output.write(event, pretty: false) }
            let hold = try StagingHold(destination: destination, dryRun: sync.dryRun)
            defer { hold.release() }
            if let port = sync.receiverPort, let folder = receiverFolder {
                try await withReceiver(port: port, aeTitle: sync.receiverAETitle, into: folder, logger: logger) {
                    () async throws(PXError) in try await engine.run(selection)
                }
            } else {
                try await engine.run(selection)
            }
            return report.failure()
        }
    }

    /// The selection the options give: `--from-file`, else query keys, else a px-find result on stdin, else
    /// every study.
    static func selection(sync: SyncOptions, query: QueryOptions) throws(PXError) -> SyncSelection {
        if let file = sync.fromFile {
            guard let text = PXConfig.readFile(file) else { throw .usage("--from-file: cannot read \(file)") }
            return try SyncSelection.parseBatch(text)
        }
        let keys = try query.matchingKeys()
        if keys.isEmpty && stdinIsPipeOrFile {
            let text = StandardInput.readText()
            if !text.trimmed.isEmpty {
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

    /// A parsed place made ready: a node's connection, a folder read.
    static func resolve(
        _ place: Place, isDestination: Bool, config: PXConfig, calling: LocalAE, timeouts: Timeouts,
        backend: any DICOMBackend, logger: Logger
    ) async throws(PXError) -> SyncPlace {
        switch place {
        case .node(let peer):
            let node: DICOMNode
            var tls: TLSSettings?
            switch peer {
            case .address(let host, let port, let ae):
                node = try DICOMNode(host: host, port: port, calledAETitle: ae ?? "ANY-SCP")
            case .node(let name):
                guard let entry = config.nodes[name] else { throw .usage("no [nodes.\(name)] in the config file") }
                node = try DICOMNode(host: entry.host, port: entry.port, calledAETitle: entry.aeTitle)
                tls = entry.tls
            case .url(let url):
                return try await resolve(
                    .web(url: url), isDestination: isDestination, config: config, calling: calling,
                    timeouts: timeouts, backend: backend, logger: logger)
            }
            var connection = Connection(node: node, local: calling, timeouts: timeouts)
            connection.tls = tls
            return .node(NodePlace(backend: backend, connection: connection, logger: logger))
        case .folder(let path, let template):
            let layout: StorageLayout
            do {
                layout =
                    try template.map { (t: String) throws(StorageError) in try StorageLayout(template: t) }
                    ?? StorageLayout()
            } catch { throw .usage("layout: \(error)") }
            if isDestination {
                // A destination folder is made when missing (mkdir -p).
                do { _ = try StorageRoot(path: path) } catch { throw .storage(error) }
            }
            let folder = try FolderPlace(root: path, layout: layout, logger: logger)
            // Files added or removed by hand since the last run are seen: only new or changed ones are read.
            let report = try await folder.refresh()
            logger.info(
                "folder index refreshed",
                metadata: ["root": "\(path)", "added": "\(report.added)", "removed": "\(report.removed)"])
            return .folder(folder)
        case .zip(let path):
            if isDestination {
                do { _ = try StorageRoot(path: path) } catch { throw .storage(error) }
            }
            return .zip(ZipPlace(root: path))
        case .web(let url):
            // A [nodes.NAME] with this url brings its credentials and transfer syntax; a URL alone takes them
            // from $PX_DICOMWEB_TOKEN / $PX_DICOMWEB_BASIC, as the other commands do.
            let web: DICOMWebBackend
            let place: DICOMWebPlace
            if let entry = config.nodes.values.first(where: { $0.url == url }),
                let configured = try entry.dicomWebPlace()
            {
                place = configured
                web = DICOMWebBackend(place: place, transferSyntax: entry.transferSyntax)
            } else {
                place = try DICOMWebPlace(url: url, authentication: DICOMWebPlace.authenticationFromEnvironment())
                web = DICOMWebBackend(place: place)
            }
            let node = try DICOMNode(host: place.host, port: place.port, calledAETitle: "DICOMWEB")
            return .node(
                NodePlace(
                    backend: web, connection: Connection(node: node, local: calling, timeouts: timeouts), logger: logger
                ))
        }
    }

    /// Runs `body` with px-sync's C-STORE receiver listening (native backend, in this process), placing into
    /// `folder`; stops it after.
    static func withReceiver(
        port: Int, aeTitle: String, into folder: FolderPlace, logger: Logger,
        _ body: () async throws(PXError) -> Void
    ) async throws(PXError) {
        let configuration = try ListenConfiguration(
            port: port, aeTitle: aeTitle, root: folder.root, layout: folder.layout, duplicates: .overwrite,
            acceptsAnyCalledAETitle: false, shutdownGrace: 5)
        let receiver = try PX.backend(.native)
        let started = ReceiverState()
        let task = Task {
            do {
                try await receiver.listen(configuration, logger: logger) { event in
                    switch event {
                    case .listening: started.ready()
                    case .instanceReceived(let instance):
                        do { try await folder.record(path: instance.path) } catch {
                            logger.warning(
                                "received file not indexed",
                                metadata: ["file": "\(instance.path)", "error": "\(error)"])
                        }
                    case .storeFailed(let path, let uid, let error):
                        logger.warning(
                            "receiver could not store",
                            metadata: ["path": "\(path ?? "-")", "uid": "\(uid ?? "-")", "error": "\(error)"])
                    default: break
                    }
                }
            } catch {
                started.fail(PXError.from(error))
            }
        }
        defer { task.cancel() }
        if let failure = await started.wait() { throw failure }
        try await body()
        task.cancel()
        _ = await task.result
    }
}

/// Whether the receiver is listening, or why it could not.
final class ReceiverState: Sendable {
    private let state = Mutex<(ready: Bool, failure: PXError?)>((false, nil))
    func ready() { state.withLock { $0.ready = true } }
    func fail(_ error: PXError) { state.withLock { $0.failure = error } }
    func wait() async -> PXError? {
        while true {
            let now = state.withLock { $0 }
            if let failure = now.failure { return failure }
            if now.ready { return nil }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return .aborted("cancelled") }
        }
    }
}

/// Keeps a folder destination's staging folder (`.px-incoming`) for the whole run: every retrieval into the
/// folder (C-GET on the native backend, WADO-RS) removes it with rmdir when it ends, which, with `--parallel`
/// retrievals into the same root, pulled it from under the others (their next temporary file failed with
/// ENOENT). A file in it makes those rmdirs fail harmlessly; it is removed, and the folder with it, at the end.
struct StagingHold {
    let file: String?
    let folder: String?

    init(destination: SyncPlace, dryRun: Bool) throws(PXError) {
        guard !dryRun, case .folder(let place) = destination else {
            (file, folder) = (nil, nil)
            return
        }
        let staging: String
        do { staging = try StorageRoot(path: place.root).stagingFolder() } catch { throw .storage(error) }
        let path = staging + "/.px-sync-hold"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .io("cannot hold the staging folder (\(POSIX.errorText()))", path: path) }
        close(descriptor)
        (file, folder) = (path, staging)
    }

    func release() {
        if let file { unlink(file) }
        if let folder { rmdir(folder) }
    }
}
