import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import NIOCore
import PXCore
import PXStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension NativeBackend {
    /// A C-STORE SCP (PS3.4 Annex B): a ``DICOMServer`` whose ``DICOMServer/Handlers`` place each instance and
    /// report ``ListenEvent``s.
    ///
    /// What it promises:
    /// - each instance is streamed to a temporary file under `<root>/.px-incoming` (same file system as the
    ///   tree), then given its final ``StorageLayout`` name with link(2)/rename(2) (``InstancePlacer``,
    ///   optionally fsync'ed) *before* the C-STORE-RSP is sent: success means the file is complete at its
    ///   final name; no partial file ever has a final name;
    /// - a full disk, an unwritable folder or a symbolic link in the tree where a folder or the file goes
    ///   is answered 0xA700 (Refused: Out of Resources, PS3.4 §B.2.3), a data set that cannot be read (truncated)
    ///   0xC000 (Error: Cannot understand), each reported as a `storeFailed` event, and the server goes on
    ///   serving; nothing is written outside the root;
    /// - every transfer syntax a sender offers that px stores unchanged (``TransferSyntaxLists/storage``: the
    ///   uncompressed ones, Big Endian and Deflated included, and every encapsulated one) is accepted, and the
    ///   data set is stored as it arrived, the transfer syntax in its file meta information;
    /// - a data set whose SOP Instance UID is not the request's Affected SOP Instance UID is answered
    ///   0xA900 (Error: Data Set does not match SOP Class, PS3.4 §B.2.3) and not stored;
    /// - up to ``ListenConfiguration/maximumAssociations`` associations at once, more are rejected
    ///   (A-ASSOCIATE-RJ transient, local limit exceeded, PS3.8 §9.3.4); other called AE titles are rejected
    ///   unless ``ListenConfiguration/acceptsAnyCalledAETitle``; each refusal is an `associationRejected` event, and so
    ///   is an association accepted with none of its presentation contexts (nothing it proposed is served);
    /// - ARTIM bounds negotiation and release, the DIMSE timeout bounds every wait on an established
    ///   association (a silent sender is aborted, its partial file removed);
    /// - when the task is cancelled it stops accepting, lets the associations in progress run for
    ///   ``ListenConfiguration/shutdownGrace`` seconds, then aborts them (A-ABORT); their series keep
    ///   `receiving.series`.
    public func listen(
        _ configuration: ListenConfiguration, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError) {
        try await self.receive(configuration, queryRetrieve: nil, onPlaced: nil, logger: logger, onEvent: onEvent)
    }

    /// px-serve: ``listen(_:logger:onEvent:)``'s C-STORE SCP, with the same promises, that also serves C-FIND,
    /// C-MOVE and C-GET (PS3.4 Annex C) from `queryRetrieve`, and calls `onPlaced` with each file's final path
    /// and header once it is at its final name, before the C-STORE-RSP (so an index that records it answers the
    /// next query with it).
    public func serve(
        _ configuration: ListenConfiguration, queryRetrieve: QueryRetrieveSCPConfiguration,
        onPlaced: @escaping @Sendable (String, Part10File) async -> Void, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError) {
        try await self.receive(
            configuration, queryRetrieve: queryRetrieve, onPlaced: onPlaced, logger: logger, onEvent: onEvent)
    }

    private func receive(
        _ configuration: ListenConfiguration, queryRetrieve: QueryRetrieveSCPConfiguration?,
        onPlaced: (@Sendable (String, Part10File) async -> Void)?, logger: Logger,
        onEvent: @Sendable (ListenEvent) async -> Void
    ) async throws(PXError) {
        let placer: InstancePlacer
        let incoming: String
        do {
            placer = try InstancePlacer(
                root: configuration.root, layout: configuration.layout, duplicates: configuration.duplicates,
                fsync: configuration.fsync)
            incoming = try placer.storage.stagingFolder()
        } catch {
            throw PXError.storage(error)
        }
        let continuation = ListenEventChannel()
        let book = SeriesBook(storage: placer.storage, seriesTimeout: configuration.seriesTimeout, logger: logger) {
            continuation.yield(.seriesComplete($0))
        }
        let placed = PlacedInstances(folder: incoming, logger: logger)
        let storage = LayoutStorage(
            placer: placer, book: book, logger: logger, events: continuation, onPlaced: onPlaced, placed: placed)
        var serverConfiguration = DICOMServer.Configuration(
            host: "0.0.0.0", port: configuration.port, aeTitle: configuration.aeTitle, temporaryDirectory: incoming,
            acceptsAnyCalledAETitle: configuration.acceptsAnyCalledAETitle,
            allowedCallingAETitles: configuration.allowedCallingAETitles,
            maximumAssociations: configuration.maximumAssociations)
        // A sender that proposes an asynchronous operations window may send the next instance while this
        // one is being placed (PS3.7 §D.3.3.3); they are still stored one after another, in order.
        serverConfiguration.maximumOperationsPerformed = 16
        serverConfiguration.artimTimeout = .milliseconds(Int64(configuration.timeouts.acse * 1000))
        serverConfiguration.idleTimeout = .milliseconds(Int64(configuration.timeouts.dimse * 1000))
        serverConfiguration.connectionLimits = ConnectionLimits(
            minimumTransferRate: configuration.limits.minimumTransferRate,
            transferRateWindow: .milliseconds(Int64(configuration.limits.transferRateWindow * 1000)),
            writeTimeout: .milliseconds(Int64(configuration.limits.writeTimeout * 1000)),
            maximumPendingConnections: configuration.limits.maximumPendingConnections)
        serverConfiguration.decodingBudget = DecodingBudget(limit: configuration.limits.decodingMemory)
        if configuration.limits.maximumAssociationSeconds > 0 {
            serverConfiguration.maximumAssociationLifetime = .seconds(configuration.limits.maximumAssociationSeconds)
        }
        serverConfiguration.tls = configuration.tls?.network
        serverConfiguration.queryRetrieve = queryRetrieve
        // Storage Commitment Push Model SCP (PS3.4 §J.3) for what this receiver placed.
        serverConfiguration.supportedAbstractSyntaxes[StorageCommitment.sopClassUID] = TransferSyntaxLists.uncompressed
        var handlers = DICOMServer.Handlers(
            onAssociationAccepted: { association in
                continuation.yield(
                    .associationOpened(
                        peerHost: association.peerHost, callingAETitle: association.callingAETitle,
                        calledAETitle: association.calledAETitle, association: association.id,
                        userIdentity: association.userIdentity.map {
                            PresentedUserIdentity(type: UserIdentity.typeName(code: $0.type), username: $0.username)
                        }))
                if association.acceptedPresentationContexts == 0 {
                    continuation.yield(
                        .noPresentationContextAccepted(
                            peerHost: association.peerHost, callingAETitle: association.callingAETitle,
                            calledAETitle: association.calledAETitle))
                }
            },
            onAssociationRejected: { rejected in
                let rejection = rejected.rejection
                continuation.yield(
                    .associationRejected(
                        peerHost: rejected.peerHost, callingAETitle: rejected.callingAETitle,
                        calledAETitle: rejected.calledAETitle, result: rejection.result.description,
                        source: rejection.source.description, reason: rejection.reasonDescription))
            },
            onAssociationClosed: { association, aborted in
                // Associations aborted at shutdown leave their series incomplete.
                if !(aborted && storage.shuttingDown.load(ordering: .relaxed)) {
                    await book.associationEnded(association.id)
                }
                continuation.yield(
                    .associationClosed(
                        peerHost: association.peerHost, callingAETitle: association.callingAETitle, aborted: aborted,
                        association: association.id))
            },
            onStore: { try await storage.didReceive($0) },
            onStoreFailed: { await storage.didFailToStore(sopInstanceUID: $0, associationID: $1, reason: $2) })
        self.installStorageCommitment(
            &handlers, placed: placed, configuration: configuration, events: continuation, logger: logger)
        if let accounts = configuration.userAccounts {
            // Only a username and passcode (type 2) can be checked against the accounts (PS3.7 §D.3.3.7).
            handlers.checkUserIdentity = { identity in
                guard let identity, identity.identityType == .usernameAndPasscode else { return false }
                return accounts.verify(
                    username: String(decoding: identity.primaryField.readableBytesView, as: UTF8.self),
                    password: Array(identity.secondaryField.readableBytesView))
            }
        }
        let server: DICOMServer
        do {
            server = try await DICOMServer.bind(configuration: serverConfiguration, handlers: handlers, logger: logger)
        } catch let error as DICOMNetworkError where error.code == .tlsConfiguration {
            throw Self.pxTLSError(error) ?? PXError.io(error.detail)
        } catch {
            throw PXError.io("cannot listen on port \(configuration.port): \(error)")
        }
        await onEvent(.listening(port: server.localPort, aeTitle: configuration.aeTitle))
        let grace = configuration.shutdownGrace
        try await PXError.catchingUntilCancelled {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await book.runTimer() }
                group.addTask {
                    defer { continuation.finish() }
                    try await withTaskCancellationHandler {
                        try await server.run()
                    } onCancel: {
                        // Stop accepting (run() closes the listening socket); abort what is left after the grace.
                        Task {
                            do { try await Task.sleep(for: .milliseconds(Int64(grace * 1000))) } catch {}
                            if server.openConnections > 0 {
                                logger.info(
                                    "shutdown grace over: aborting the associations in progress",
                                    metadata: ["count": "\(server.openConnections)"])
                                storage.shuttingDown.store(true, ordering: .relaxed)
                            }
                            server.abortAssociations()
                        }
                    }
                }
                while let event = await continuation.next() { await onEvent(event) }
                group.cancelAll()
                try await group.waitForAll()
            }
        }
    }
}

/// Places received instances into the ``StorageLayout`` tree and reports ``ListenEvent``s.
///
/// px-listen reports each file's size in ``PXCore/ReceivedInstance/bytes``; px-get
/// (`reportsDataSetLength`) the data set's, which does not depend on who wrote the file meta information.
/// px-get keeps no ``SeriesBook`` (`book` is `nil`): no info files, as with the DCMTK backend's getscu.
final class LayoutStorage: StorageDelegate {
    let placer: InstancePlacer
    let book: SeriesBook<ContinuousClock>?
    let logger: Logger
    let events: ListenEventChannel
    let reportsDataSetLength: Bool
    /// The AE title reported as the sender, instead of the calling AE title (C-GET: the peer).
    let senderAETitle: String?
    /// Set when associations are being aborted at shutdown: their series are not complete.
    let shuttingDown = Atomic<Bool>(false)
    /// Told each placed file's final path and header (px-serve records it in the place's index).
    let onPlaced: (@Sendable (String, Part10File) async -> Void)?
    /// Told each placed file, for the storage commitment SCP.
    let placed: PlacedInstances?

    init(
        placer: InstancePlacer, book: SeriesBook<ContinuousClock>?, logger: Logger, events: ListenEventChannel,
        reportsDataSetLength: Bool = false, senderAETitle: String? = nil,
        onPlaced: (@Sendable (String, Part10File) async -> Void)? = nil, placed: PlacedInstances? = nil
    ) {
        self.onPlaced = onPlaced
        self.placed = placed
        self.placer = placer
        self.book = book
        self.logger = logger
        self.events = events
        self.reportsDataSetLength = reportsDataSetLength
        self.senderAETitle = senderAETitle
    }

    func didFailToStore(sopInstanceUID: String, associationID: UInt64, reason: String) async {
        // The connection answers such a C-STORE with 0xA700, out of resources.
        events.yield(
            .storeFailed(path: nil, sopInstanceUID: sopInstanceUID, error: .io(reason), status: .outOfResources))
    }

    /// Why a received data set cannot be understood, or `nil`: it ends before its elements do (a sender
    /// that stopped mid-instance, a truncated file sent as it was). Other irregularities (odd lengths, a
    /// stray delimiter) are stored as received, as storescp does. A deflated data set is left to the header
    /// read, which inflates only as far as it needs (checking it whole would hold it inflated in memory).
    static func unreadable(_ instance: IncomingInstance) -> String? {
        guard !TransferSyntax(uid: instance.transferSyntaxUID).isDeflated else { return nil }
        do throws(DICOMDataError) {
            _ = try Part10File.checkStructure(contentsOf: instance.path, maximumInflatedSize: 0)
        } catch  where error.code == .truncated || error.code == .lengthPastEnd {
            return "the data set is truncated: \(error)"
        } catch {
            return nil
        }
        return nil
    }

    func didReceive(_ instance: IncomingInstance) async throws -> DIMSEStatus {
        do throws(PXError) {
            if let reason = Self.unreadable(instance) {
                // PS3.4 §B.2.3: 0xCxxx, Error: Cannot understand; not the sender's resources or ours.
                unlink(instance.path)
                let error = PXError.malformedFile(path: "C-STORE \(instance.sopInstanceUID)", reason: reason)
                logger.info(
                    "refused a C-STORE", metadata: ["sop.instance": "\(instance.sopInstanceUID)", "error": "\(error)"])
                events.yield(
                    .storeFailed(
                        path: nil, sopInstanceUID: instance.sopInstanceUID, error: error, status: .cannotUnderstand))
                return .cannotUnderstand
            }
            let header: Part10File
            do {
                header = try await instance.readHeader()
            } catch let error as DICOMDataError where error.code != .tooLarge && error.code != .io {
                // Malformed: 0xC000. Past the memory limits (a deflate bomb) or unreadable on our side it is
                // 0xA700 below, out of resources.
                unlink(instance.path)
                let failure = PXError.malformedFile(
                    path: "C-STORE \(instance.sopInstanceUID)", reason: "cannot read the data set: \(error)")
                logger.info(
                    "refused a C-STORE",
                    metadata: ["sop.instance": "\(instance.sopInstanceUID)", "error": "\(failure)"])
                events.yield(
                    .storeFailed(
                        path: nil, sopInstanceUID: instance.sopInstanceUID, error: failure, status: .cannotUnderstand))
                return .cannotUnderstand
            } catch {
                unlink(instance.path)
                throw PXError.io("cannot read the received data set: \(error)", path: nil)
            }
            let ds = header.dataSet
            // PS3.7 §9.1.1.1: the Affected SOP Instance UID names the instance the data set holds.
            // storescp answers a disagreement with 0xA900 too.
            let stored = ds.uid(.sopInstanceUID) ?? []
            guard stored.elementsEqual(instance.sopInstanceUID.utf8) else {
                unlink(instance.path)
                let error = PXError.sopInstanceMismatch(
                    request: instance.sopInstanceUID, dataSet: String(decoding: stored, as: UTF8.self))
                logger.info(
                    "refused a C-STORE", metadata: ["sop.instance": "\(instance.sopInstanceUID)", "error": "\(error)"])
                events.yield(
                    .storeFailed(
                        path: nil, sopInstanceUID: instance.sopInstanceUID, error: error,
                        status: .dataSetDoesNotMatchSOPClass))
                return .dataSetDoesNotMatchSOPClass
            }
            let placement: InstancePlacer.Placement
            do {
                placement = try placer.place(temporaryFile: instance.path, dataSet: ds)
            } catch {
                throw PXError.storage(error)
            }
            await onPlaced?(placement.path, header)
            placed?.record(
                sopInstanceUID: instance.sopInstanceUID, sopClassUID: instance.sopClassUID, path: placement.path)
            await book?.added(placement, facts: SeriesFacts(ds), association: instance.associationID)
            events.yield(
                .instanceReceived(
                    PXCore.ReceivedInstance(
                        path: placement.path, sopClassUID: instance.sopClassUID,
                        sopInstanceUID: instance.sopInstanceUID,
                        studyInstanceUID: ds.string(.studyInstanceUID) ?? "",
                        seriesInstanceUID: ds.string(.seriesInstanceUID) ?? "",
                        callingAETitle: senderAETitle ?? instance.callingAETitle,
                        bytes: reportsDataSetLength ? instance.dataSetLength : instance.fileLength,
                        transferSyntaxUID: instance.transferSyntaxUID, duplicate: placement.duplicate,
                        association: instance.associationID,
                        header: placement.duplicate == .keep ? nil : header)))
            return .success
        } catch {
            logger.info(
                "could not store a received instance",
                metadata: ["sop.instance": "\(instance.sopInstanceUID)", "error": "\(error)"])
            // The connection answers a C-STORE whose delegate threw with 0xA700, out of resources.
            events.yield(
                .storeFailed(path: nil, sopInstanceUID: instance.sopInstanceUID, error: error, status: .outOfResources))
            throw error
        }
    }
}
