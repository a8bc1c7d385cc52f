import DICOMData
import Logging
import PXCore

#if canImport(Glibc)
import Glibc
#endif

extension DCMTKBackend {
    /// Receives with ONE long-running `storescp` child (single process, `-d`), following its log as
    /// it arrives, and moves each received file from a staging directory under the root into the
    /// ``StorageLayout`` tree with `rename`.
    ///
    /// storescp logs `storing DICOM file:` before it writes the file, so a file is taken only when
    /// the next log event shows storescp has moved on (the next request, or the association's end).
    /// A series is reported complete when the association that brought it ends. What this backend
    /// cannot promise: storescp has already answered the C-STORE with success when px moves the
    /// file, so a failure to move it is reported as a `storeFailed` event, not to the sender.
    public func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws {
        try FileSystem.makeDirectories(configuration.root)
        let staging = try TemporaryDirectory(prefix: ".px-incoming", in: configuration.root)
        defer { staging.remove(logger: logger) }
        let t = configuration.timeouts
        let arguments = [
            "-d", "-aet", configuration.aeTitle, "-od", staging.path, "-pm", "+xa",
            "-ta", String(Timeouts.wholeSeconds(t.acse)), "-td", String(Timeouts.wholeSeconds(t.dimse)),
            String(configuration.port),
        ]
        var parser = StoreSCPLogParser()
        var session = ListenSession(configuration: configuration, logger: logger)
        let outcome = try await runner("storescp").run(arguments, deadline: nil, logger: logger) { line in
            // A pending file is complete once storescp logs its next info-level event.
            if line.level == .info, let event = session.finishPending() { await onEvent(event) }
            for event in parser.feed(line) {
                switch event {
                case .associationOpened(let host, let calling, let called):
                    session.opened(host: host, calling: calling)
                    await onEvent(.associationOpened(peerHost: host, callingAETitle: calling, calledAETitle: called))
                case .fileStored(let path):
                    session.pendingPath = path.hasPrefix("/") ? path : staging.path + "/" + path
                case .associationClosed(let aborted):
                    if let event = session.finishPending() { await onEvent(event) }
                    for event in session.closed() { await onEvent(event) }
                    await onEvent(.associationClosed(peerHost: session.host, callingAETitle: session.calling, aborted: aborted))
                case .failure(let text):
                    logger.info("storescp reported an error", metadata: ["line": "\(text)"])
                }
            }
        }
        try Task.checkCancellation()
        if let line = outcome.diagnostics.first(where: { $0.text.contains("cannot create network") }) {
            throw PXError.io("cannot listen on port \(configuration.port): \(line.text)")
        }
        if let error = Self.failure(tool: "storescp", outcome: outcome, connection: try placeholderConnection(configuration)) {
            throw error
        }
        throw PXError.aborted("storescp ended unexpectedly (exit \(outcome.exitCode ?? -1))")
    }

    private func placeholderConnection(_ configuration: ListenConfiguration) throws -> Connection {
        Connection(
            node: try DICOMNode(host: "127.0.0.1", port: configuration.port, calledAETitle: configuration.aeTitle),
            local: try LocalAE(aeTitle: configuration.aeTitle), timeouts: configuration.timeouts)
    }
}

/// The state of one px-listen run: the current association and its series, and the file
/// storescp is writing.
struct ListenSession {
    let configuration: ListenConfiguration
    let logger: Logger
    var host: String?
    var calling: String?
    var pendingPath: String?
    /// Series received in the current association: directory and count, in arrival order.
    var series: [(uid: String, directory: String, count: Int)] = []

    init(configuration: ListenConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    mutating func opened(host: String?, calling: String?) {
        self.host = host
        self.calling = calling
        series.removeAll()
    }

    /// The series-complete events for the association that ended.
    mutating func closed() -> [ListenEvent] {
        defer { series.removeAll() }
        return series.map { .seriesComplete(directory: $0.directory, seriesInstanceUID: $0.uid, instances: $0.count) }
    }

    /// Moves the pending file into the tree.
    mutating func finishPending() -> ListenEvent? {
        guard let path = pendingPath else { return nil }
        pendingPath = nil
        do {
            let file = try Part10File.readHeader(contentsOf: path)
            let ds = file.dataSet
            let destination = try configuration.layout.path(for: ds, root: configuration.root)
            let directory = String(destination[..<destination.lastIndex(of: "/")!])
            try FileSystem.makeDirectories(directory)
            guard rename(path, destination) == 0 else {
                throw PXError.io("cannot move the received file into place (\(errnoText()))", path: destination)
            }
            var info = stat()
            let size = stat(destination, &info) == 0 ? Int(info.st_size) : 0
            let seriesUID = ds.string(.seriesInstanceUID) ?? ""
            if let i = series.firstIndex(where: { $0.uid == seriesUID }) {
                series[i].count += 1
            } else {
                series.append((seriesUID, directory, 1))
            }
            return .instanceReceived(
                ReceivedInstance(
                    path: destination,
                    sopClassUID: ds.string(.sopClassUID) ?? file.meta.string(.mediaStorageSOPClassUID) ?? "",
                    sopInstanceUID: ds.string(.sopInstanceUID) ?? file.meta.string(.mediaStorageSOPInstanceUID) ?? "",
                    studyInstanceUID: ds.string(.studyInstanceUID) ?? "", seriesInstanceUID: seriesUID,
                    callingAETitle: calling, bytes: size, transferSyntaxUID: file.transferSyntax.uid))
        } catch let error as PXError {
            logger.info("could not store a received file", metadata: ["path": "\(path)", "error": "\(error)"])
            return .storeFailed(path: path, sopInstanceUID: nil, error: error)
        } catch {
            let pxError = PXError.io("cannot read the received file: \(error)", path: path)
            return .storeFailed(path: path, sopInstanceUID: nil, error: pxError)
        }
    }
}

/// Small POSIX helpers.
enum FileSystem {
    /// `mkdir -p`.
    static func makeDirectories(_ path: String) throws(PXError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory (\(errnoText()))", path: current)
            }
        }
    }
}

func errnoText() -> String {
    let code = errno
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
}
