import DICOMData
import Logging
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

extension DCMTKBackend {
    /// Receives with ONE long-running `storescp` child (single process, `-d`), following its log as
    /// it arrives, and moves each received file from a staging directory under the root into the
    /// ``StorageLayout`` tree with ``InstancePlacer`` (link/rename, optional fsync, duplicate policy).
    ///
    /// storescp logs `storing DICOM file:` before it writes the file, so a file is taken only when
    /// the next log event shows storescp has moved on (the next request, or the association's end).
    /// Series completion, `patient.info`/`study.info`/`receiving.series`/`series.info` and the series
    /// timeout work as in the native backend (``SeriesBook``).
    ///
    /// What this backend cannot promise, because storescp owns the association:
    /// - storescp answers the C-STORE (success) *before* px moves the file: a failure to place it
    ///   (disk full at rename time, unwritable folder, a symbolic link in the tree where a folder or the
    ///   file goes) is a `storeFailed` event, not a failure status to the sender; nothing is written
    ///   outside the root. storescp itself answers a failure status when it cannot write its staging file.
    /// - storescp checks that the data set's SOP Class and Instance UIDs are the request's Affected ones
    ///   and answers 0xA900 (Error: Data Set does not match SOP Class) when they are not, but it has
    ///   written its staging file by then (named by the request's UID) and does not log the status:
    ///   px reads the request's Affected SOP Instance UID from storescp's dump of it and drops a file
    ///   whose data set holds another (a `storeFailed` event), so neither backend stores such an instance.
    /// - one association at a time (storescp without `--fork`; others wait in the TCP backlog), so
    ///   ``ListenConfiguration/maximumAssociations`` is not enforced; storescp answers any called AE title
    ///   and has no calling-AE allow-list, so ``ListenConfiguration/allowedCallingAETitles`` is refused.
    /// - no graceful stop: on cancellation storescp is killed at once; the file it was writing is in
    ///   the staging directory, which is removed, so no partial file ever has a final name.
    public func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError) {
        if configuration.allowedCallingAETitles != nil {
            throw PXError.usage(
                "--allow-calling is not supported by the dcmtk backend (storescp has no allow-list); use --backend native"
            )
        }
        if !configuration.acceptsAnyCalledAETitle {
            throw PXError.backendUnavailable(
                "dcmtk", reason: "storescp answers any called AE title: --strict-called-aet needs the native backend")
        }
        if configuration.userAccounts != nil {
            throw PXError.backendUnavailable(
                "dcmtk", reason: "storescp (DCMTK 3.6.7) cannot check a user identity: use --backend native or auto")
        }
        let placer: InstancePlacer
        do {
            placer = try InstancePlacer(
                root: configuration.root, layout: configuration.layout, duplicates: configuration.duplicates,
                fsync: configuration.fsync)
        } catch {
            throw PXError.storage(error)
        }
        // After the layout's check, which both backends make first.
        if configuration.port == 0 {
            throw PXError.usage(
                "storescp cannot pick a free port: give --port with the dcmtk backend (0 is native only)")
        }
        let staging = try TemporaryDirectory(prefix: ".px-incoming", in: placer.root)
        defer { staging.remove(logger: logger) }
        let t = configuration.timeouts
        let arguments =
            [
                "-d", "-aet", configuration.aeTitle, "-od", staging.path, "-pm", "+xa",
                // Unique staging names (a generated UID with ".X."): by default storescp names a file after its
                // SOP Instance UID with unusual characters replaced, so "1.2.3.4+5" and "1.2.3.4/5" (or one UID
                // sent twice) shared a staging file, and one instance was lost when the second write came before
                // px had placed the first. The path px places from is the one storescp logs.
                "+uf",
                // The peer's address, not a reverse DNS lookup: events name the peer as the native receiver does
                // ("127.0.0.1", not "localhost"), and a slow resolver does not hold up every association.
                "-dhl",
                "-ta", String(Timeouts.wholeSeconds(t.acse)), "-td", String(Timeouts.wholeSeconds(t.dimse)),
                // storescp 3.6.7 does not apply -td while a data set is arriving; the socket timeout closes a
                // sender that goes silent mid-instance.
                "-ts", String(Timeouts.wholeSeconds(t.dimse)),
                String(configuration.port),
            ] + Self.serverTLSArguments(configuration.tls)
        let continuation = ListenEventChannel()
        let book = SeriesBook(storage: placer.storage, seriesTimeout: configuration.seriesTimeout, logger: logger) {
            continuation.yield(.seriesComplete($0))
        }
        let runner = self.runner("storescp")
        let connection = try placeholderConnection(configuration)
        // storescp logs nothing when it is ready: `listening` goes out once its socket listens (never for a
        // port it failed to bind; that ends storescp, an error below).
        let waitForListening: @Sendable (Int32) async throws(PXError) -> Void = { pid throws(PXError) in
            guard
                let port = try await Self.waitUntilListening(
                    pid: pid, port: configuration.port, seconds: Self.listeningDeadline(configuration.timeouts))
            else { return }
            continuation.yield(.listening(port: port, aeTitle: configuration.aeTitle))
        }
        try await PXError.catchingUntilCancelled {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await book.runTimer() }
                group.addTask {
                    defer { continuation.finish() }
                    var parser = StoreSCPLogParser()
                    var session = ListenSession(placer: placer, book: book, logger: logger)
                    let outcome = try await runner.run(
                        arguments, deadline: nil, logger: logger, onStart: waitForListening
                    ) { line in
                        // A pending file is complete once storescp logs its next info-level event.
                        if line.level == .info, let event = await session.finishPending() { continuation.yield(event) }
                        for event in parser.feed(line) {
                            switch event {
                            case .associationOpened(let host, let calling, let called):
                                session.opened(host: host, calling: calling)
                                continuation.yield(
                                    .associationOpened(
                                        peerHost: host, callingAETitle: calling, calledAETitle: called,
                                        association: session.association))
                            case .fileStored(let path, let affected):
                                session.pendingPath = path.hasPrefix("/") ? path : staging.path + "/" + path
                                session.pendingAffectedSOPInstanceUID = affected
                            case .associationClosed(let aborted):
                                if let event = await session.finishPending() { continuation.yield(event) }
                                await book.associationEnded(session.association)
                                continuation.yield(
                                    .associationClosed(
                                        peerHost: session.host, callingAETitle: session.calling, aborted: aborted,
                                        association: session.association))
                            case .associationRejected(
                                let host, let calling, let called, let result, let source, let reason):
                                logger.warning(
                                    "association rejected",
                                    metadata: [
                                        "peer.aet": "\(calling ?? "")", "called.aet": "\(called ?? "")",
                                        "result": "\(result)", "source": "\(source)", "reason": "\(reason)",
                                    ])
                                continuation.yield(
                                    .associationRejected(
                                        peerHost: host, callingAETitle: calling, calledAETitle: called, result: result,
                                        source: source, reason: reason))
                            case .failure(let text):
                                logger.info("storescp reported an error", metadata: ["line": "\(text)"])
                                session.lastFailure = text
                            case .storeUnconfirmed(let uid):
                                // storescp never stored it: the sender got a failure, or nothing.
                                let reason = session.lastFailure.map { ": \($0)" } ?? ""
                                continuation.yield(
                                    .storeFailed(
                                        path: nil, sopInstanceUID: uid,
                                        error: .io("storescp did not store the data set\(reason)")))
                            }
                        }
                    }
                    try Task.checkCancellation()
                    if let line = outcome.diagnostics.first(where: { $0.text.contains("cannot create network") }) {
                        throw PXError.io("cannot listen on port \(configuration.port): \(line.text)")
                    }
                    if let error = Self.failure(tool: "storescp", outcome: outcome, connection: connection) {
                        throw error
                    }
                    throw PXError.aborted("storescp ended unexpectedly (exit \(outcome.exitCode ?? -1))")
                }
                while let event = await continuation.next() { await onEvent(event) }
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }

    /// How long storescp may take to listen: its start-up (dictionaries, TLS files) takes well under a
    /// second; the connect timeout, at least 10 s, bounds it.
    static func listeningDeadline(_ timeouts: Timeouts) -> Double { max(10, timeouts.connect) }

    /// Polls (every 10 ms, at most `seconds`) until process `pid` listens on `port`, and returns the port;
    /// `nil` when the wait is cancelled: storescp that exits first (a port it cannot bind) ends the wait with
    /// the cancellation its runner sends when the tool ends.
    static func waitUntilListening(pid: Int32, port: Int, seconds: Double) async throws(PXError) -> Int? {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .milliseconds(Int(seconds * 1000)))
        while clock.now < end {
            if ListeningSockets.ports(ofProcess: pid).contains(port) { return port }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                return nil
            }
        }
        throw PXError.timeout("listen", seconds: seconds, detail: "storescp did not listen on port \(port)")
    }

    private func placeholderConnection(_ configuration: ListenConfiguration) throws(PXError) -> Connection {
        Connection(
            node: try DICOMNode(
                host: "127.0.0.1", port: max(1, configuration.port), calledAETitle: configuration.aeTitle),
            local: try LocalAE(aeTitle: configuration.aeTitle), timeouts: configuration.timeouts)
    }
}

/// The state of one px-listen run: the current association, and the file storescp is writing.
struct ListenSession {
    let placer: InstancePlacer
    let book: SeriesBook<ContinuousClock>
    let logger: Logger
    var host: String?
    var calling: String?
    var pendingPath: String?
    /// The Affected SOP Instance UID of the request whose file is ``pendingPath``.
    var pendingAffectedSOPInstanceUID: String?
    /// A number for the current association (storescp serves one at a time).
    var association: UInt64 = 0
    /// storescp's last `E:`/`F:` line, to explain a data set it did not store.
    var lastFailure: String?

    init(placer: InstancePlacer, book: SeriesBook<ContinuousClock>, logger: Logger) {
        self.placer = placer
        self.book = book
        self.logger = logger
    }

    mutating func opened(host: String?, calling: String?) {
        self.host = host
        self.calling = calling
        self.association += 1
        self.lastFailure = nil
    }

    /// Moves the pending file into the tree.
    mutating func finishPending() async -> ListenEvent? {
        guard let path = pendingPath else { return nil }
        let requested = pendingAffectedSOPInstanceUID
        pendingPath = nil
        pendingAffectedSOPInstanceUID = nil
        do throws(PXError) {
            let (instance, placement, dataSet) = try DCMTKBackend.place(
                staged: path, with: placer, sender: calling, reportsDataSetLength: false, association: association,
                requestedSOPInstanceUID: requested)
            await book.added(placement, facts: SeriesFacts(dataSet), association: association)
            return .instanceReceived(instance)
        } catch {
            logger.info("could not store a received file", metadata: ["path": "\(path)", "error": "\(error)"])
            return .storeFailed(path: nil, sopInstanceUID: requested, error: error)
        }
    }
}
