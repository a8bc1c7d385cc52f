import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

#if canImport(Glibc)
import Glibc
#endif

extension NativeBackend {
    /// A C-STORE SCP (PS3.4 Annex B) on ``DICOMServer``: each instance is streamed to a temporary file
    /// under the root, then renamed into the ``StorageLayout`` tree *before* the C-STORE-RSP is sent, so
    /// success means the file is at its final name; a failure is answered 0xA700 (out of resources).
    public func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws {
        let incoming = configuration.root + "/.px-incoming"
        do {
            try PlacementFileSystem.makeDirectories(incoming)
        } catch {
            throw PXError.io("cannot create the storage root (\(error))", path: configuration.root)
        }
        let (events, continuation) = AsyncStream<ListenEvent>.makeStream()
        let storage = LayoutStorage(root: configuration.root, layout: configuration.layout, logger: logger, events: continuation)
        var serverConfiguration = DICOMServer.Configuration(
            host: "0.0.0.0", port: configuration.port, aeTitle: configuration.aeTitle, temporaryDirectory: incoming,
            // Like storescp: answer whatever AE title the peer calls.
            acceptsAnyCalledAETitle: true)
        serverConfiguration.artimTimeout = .seconds(configuration.timeouts.acse)
        serverConfiguration.idleTimeout = .seconds(configuration.timeouts.dimse)
        let server: DICOMServer
        do {
            server = try await DICOMServer.bind(configuration: serverConfiguration, storage: storage, logger: logger)
        } catch {
            throw PXError.io("cannot listen on port \(configuration.port): \(error)")
        }
        await onEvent(.listening(port: server.localPort, aeTitle: configuration.aeTitle))
        async let serving: Void = {
            defer { continuation.finish() }
            try await server.run()
        }()
        for await event in events { await onEvent(event) }
        try await serving
        try Task.checkCancellation()
    }
}

/// Places received instances into the ``StorageLayout`` tree and reports ``ListenEvent``s.
///
/// px-listen reports each file's size in ``PXCore/ReceivedInstance/bytes``; px-get
/// (`reportsDataSetLength`) the data set's, which does not depend on who wrote the file meta information.
final class LayoutStorage: StorageDelegate {
    let root: String
    let layout: StorageLayout
    let logger: Logger
    let events: AsyncStream<ListenEvent>.Continuation
    let reportsDataSetLength: Bool
    /// The AE title reported as the sender, instead of the calling AE title (C-GET: the peer).
    let senderAETitle: String?
    let series = SeriesTracker()

    init(
        root: String, layout: StorageLayout, logger: Logger, events: AsyncStream<ListenEvent>.Continuation,
        reportsDataSetLength: Bool = false, senderAETitle: String? = nil
    ) {
        self.root = root
        self.layout = layout
        self.logger = logger
        self.events = events
        self.reportsDataSetLength = reportsDataSetLength
        self.senderAETitle = senderAETitle
    }

    func associationOpened(_ association: ServedAssociation) async {
        events.yield(.associationOpened(
            peerHost: association.peerHost, callingAETitle: association.callingAETitle,
            calledAETitle: association.calledAETitle))
    }

    func associationClosed(_ association: ServedAssociation, aborted: Bool) async {
        for entry in await series.close(association.id) {
            events.yield(.seriesComplete(directory: entry.directory, seriesInstanceUID: entry.uid, instances: entry.count))
        }
        events.yield(.associationClosed(peerHost: association.peerHost, callingAETitle: association.callingAETitle, aborted: aborted))
    }

    func didReceive(_ instance: DICOMNetwork.ReceivedInstance) async throws -> DICOMProtocol.DIMSEStatus {
        do {
            let file = try Part10File.readHeader(contentsOf: instance.path)
            let ds = file.dataSet
            let destination = try layout.path(for: ds, root: root)
            let directory = String(destination[..<(destination.lastIndex(of: "/") ?? destination.endIndex)])
            try PlacementFileSystem.makeDirectories(directory)
            guard rename(instance.path, destination) == 0 else {
                throw PXError.io("cannot move the received file into place (errno \(errno))", path: destination)
            }
            let seriesUID = ds.string(.seriesInstanceUID) ?? ""
            await series.add(association: instance.associationID, uid: seriesUID, directory: directory)
            events.yield(.instanceReceived(PXCore.ReceivedInstance(
                path: destination, sopClassUID: instance.sopClassUID, sopInstanceUID: instance.sopInstanceUID,
                studyInstanceUID: ds.string(.studyInstanceUID) ?? "", seriesInstanceUID: seriesUID,
                callingAETitle: senderAETitle ?? instance.callingAETitle,
                bytes: reportsDataSetLength ? instance.dataSetLength : instance.fileLength,
                transferSyntaxUID: instance.transferSyntaxUID)))
            return .success
        } catch {
            let pxError = error as? PXError ?? PXError.io("cannot read the received file: \(error)", path: instance.path)
            logger.info("could not store a received instance", metadata: ["sop.instance": "\(instance.sopInstanceUID)", "error": "\(pxError)"])
            events.yield(.storeFailed(path: nil, sopInstanceUID: instance.sopInstanceUID, error: pxError))
            throw pxError
        }
    }
}

/// The series each open association has brought, in arrival order.
actor SeriesTracker {
    struct Entry {
        var uid: String
        var directory: String
        var count: Int
    }
    private var open: [UInt64: [Entry]] = [:]

    func add(association: UInt64, uid: String, directory: String) {
        var list = open[association, default: []]
        if let i = list.firstIndex(where: { $0.uid == uid && $0.directory == directory }) {
            list[i].count += 1
        } else {
            list.append(Entry(uid: uid, directory: directory, count: 1))
        }
        open[association] = list
    }

    func close(_ association: UInt64) -> [Entry] {
        open.removeValue(forKey: association) ?? []
    }
}

/// `mkdir -p`.
enum PlacementFileSystem {
    static func makeDirectories(_ path: String) throws(PXError) {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if mkdir(current, 0o755) != 0 && errno != EEXIST {
                throw .io("cannot create directory (errno \(errno))", path: current)
            }
        }
    }
}
