import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A DICOM SCP: accepts associations (PS3.8 §9.2), answers C-ECHO (Verification, PS3.7 §9.1.5), and calls its
/// ``Handlers`` for what else happens: each received C-STORE instance (PS3.4 Annex B), streamed to a file first,
/// and the associations accepted, rejected and closed. With ``Configuration/queryRetrieve`` it also serves C-FIND,
/// C-MOVE and C-GET (PS3.4 Annex C). px-listen and px-serve are two uses of it.
///
/// A small storage SCP:
///
/// ```swift
/// var handlers = DICOMServer.Handlers()
/// handlers.onStore = { instance in
///     logger.info("received \(instance.sopInstanceUID) from \(instance.callingAETitle)")
///     return .success                      // the file at instance.path is removed when this returns
/// }
/// let server = try await DICOMServer.bind(
///     configuration: .init(port: 0, aeTitle: "MYSCP", temporaryDirectory: "/tmp"), handlers: handlers, logger: logger)
/// print(server.localPort)                  // port 0: the port the system chose
/// try await server.run()                   // until the task is cancelled
/// ```
///
/// Each association runs in its own task. Cancelling ``run()`` stops accepting and lets the associations in
/// progress finish (each is bounded by the idle timeout); ``abortAssociations()`` ends them sooner.
public struct DICOMServer: Sendable {
    /// Server settings: where to listen, who may associate, what is negotiated, and the limits. Plain values;
    /// what the server does with associations and instances is its ``Handlers``.
    public struct Configuration: Sendable {
        /// Address to listen on.
        public var host: String
        /// Port to listen on; 0 picks a free one (see ``DICOMServer/localPort``).
        public var port: Int
        /// The AE title this server answers to.
        public var aeTitle: String
        /// Accept any called AE title instead of only ``aeTitle``.
        public var acceptsAnyCalledAETitle: Bool
        /// Calling AE titles allowed; `nil` allows any.
        public var allowedCallingAETitles: Set<String>?
        /// Associations served at once; more are rejected (transient, local limit exceeded).
        public var maximumAssociations: Int
        /// The largest P-DATA-TF this server accepts (announced in sub-item 0x51, enforced by the frame decoder).
        public var maximumPDULength: UInt32
        /// How long to wait for the A-ASSOCIATE-RQ and for the peer to close after release or reject (ARTIM).
        public var artimTimeout: TimeAmount
        /// How long a peer may stay silent on an established association before it is aborted.
        public var idleTimeout: TimeAmount
        /// Where incoming instances are written: temporary files, handed to ``Handlers/onStore``. Choose one on the
        /// file system where the handler keeps them, so that moving one is a rename.
        public var temporaryDirectory: String
        /// Abstract syntaxes and their transfer syntaxes, in preference order.
        public var supportedAbstractSyntaxes: [String: [String]]
        /// Implementation Class UID (sub-item 0x52).
        public var implementationClassUID: String
        /// Implementation Version Name (sub-item 0x55).
        public var implementationVersionName: String?
        /// How many C-STORE (or C-ECHO) requests a requestor may have outstanding on one association when it
        /// proposes an asynchronous operations window (PS3.7 §D.3.3.3); `1` (the default) is synchronous.
        /// Requests are still served one after another, in order: a window only lets the requestor send the
        /// next data set while the previous one is being stored. Not offered to a requestor of a
        /// Query/Retrieve service, whose operations are synchronous here.
        public var maximumOperationsPerformed: UInt16 = 1
        /// DICOM TLS (PS3.15 Annex B.9); `nil` (the default): plain TCP. The handshake must complete within
        /// ``artimTimeout``; a failed handshake is logged and ends only that connection.
        public var tls: DICOMTLSConfiguration? = nil
        /// Query/Retrieve SCP (C-FIND, C-MOVE, C-GET, PS3.4 Annex C); `nil` (the default) serves none.
        public var queryRetrieve: QueryRetrieveSCPConfiguration? = nil
        /// Limits on each connection that a hostile peer cannot reset: transfer rate, write timeout,
        /// connections before negotiation (issue 14).
        public var connectionLimits = ConnectionLimits()
        /// What reading one received instance's header may cost (``IncomingInstance/readHeader()``).
        public var headerLimits = HeaderLimits()
        /// How long one connection may be served, whatever it does: then it gets an A-ABORT (service-provider
        /// source, PS3.8 §9.3.8) and is closed, so a peer that keeps an association busy with valid requests
        /// (an endless stream of C-ECHOs) cannot hold a ``maximumAssociations`` slot forever. `nil`: no limit.
        public var maximumAssociationLifetime: TimeAmount? = nil
        /// The memory all associations together may spend decoding received instances; shared by every copy
        /// of this configuration.
        public var decodingBudget = DecodingBudget(limit: 256 << 20)

        /// The default abstract syntaxes: Verification, and every storage SOP class with
        /// ``TransferSyntaxLists/storage``.
        public static var defaultAbstractSyntaxes: [String: [String]] {
            var syntaxes: [String: [String]] = [WellKnownUID.verificationSOPClass: TransferSyntaxLists.uncompressed]
            for uid in UIDDictionary.storageSOPClasses {
                syntaxes[uid] = TransferSyntaxLists.storage
            }
            return syntaxes
        }

        /// Settings with the defaults: every storage SOP class and Verification accepted in
        /// ``defaultAbstractSyntaxes``, only `aeTitle` as called AE title, any calling AE title, 16 associations.
        /// `port` 0 lets the system choose a free port (``DICOMServer/localPort``).
        public init(
            host: String = "0.0.0.0",
            port: Int,
            aeTitle: String,
            temporaryDirectory: String,
            acceptsAnyCalledAETitle: Bool = false,
            allowedCallingAETitles: Set<String>? = nil,
            maximumAssociations: Int = 16,
            maximumPDULength: UInt32 = 256 * 1024,
            artimTimeout: TimeAmount = .seconds(30),
            idleTimeout: TimeAmount = .seconds(60),
            supportedAbstractSyntaxes: [String: [String]] = Configuration.defaultAbstractSyntaxes,
            implementationClassUID: String = Part10File.implementationClassUID,
            implementationVersionName: String? = Part10File.implementationVersionName
        ) {
            self.host = host
            self.port = port
            self.aeTitle = aeTitle
            self.temporaryDirectory = temporaryDirectory
            self.acceptsAnyCalledAETitle = acceptsAnyCalledAETitle
            self.allowedCallingAETitles = allowedCallingAETitles
            self.maximumAssociations = maximumAssociations
            self.maximumPDULength = maximumPDULength
            self.artimTimeout = artimTimeout
            self.idleTimeout = idleTimeout
            self.supportedAbstractSyntaxes = supportedAbstractSyntaxes
            self.implementationClassUID = implementationClassUID
            self.implementationVersionName = implementationVersionName
        }

        /// The acceptor policy these settings describe.
        var policy: AssociationAcceptorPolicy {
            var policy = AssociationAcceptorPolicy(
                aeTitle: self.aeTitle,
                acceptedCalledAETitles: self.acceptsAnyCalledAETitle ? nil : [self.aeTitle],
                acceptedCallingAETitles: self.allowedCallingAETitles,
                supportedAbstractSyntaxes: Dictionary(
                    uniqueKeysWithValues: self.supportedAbstractSyntaxes.map { uid, syntaxes in
                        // The Push Model's requester may take the SCP role, to get the report on its own
                        // association (PS3.4 §J.3.3, PS3.7 §D.3.3.4).
                        (
                            uid,
                            AssociationAcceptorPolicy.SupportedAbstractSyntax(
                                transferSyntaxes: syntaxes, allowsRequestorSCP: uid == StorageCommitment.sopClassUID)
                        )
                    }
                ).extended(by: self.queryRetrieve),
                maximumPDULength: self.maximumPDULength,
                implementationClassUID: self.implementationClassUID,
                implementationVersionName: self.implementationVersionName
            )
            policy.maximumOperationsPerformed = self.queryRetrieve == nil ? self.maximumOperationsPerformed : 1
            return policy
        }
    }

    /// The settings.
    public let configuration: Configuration
    /// The port actually bound.
    public let localPort: Int
    private let serverChannel: NIOAsyncChannel<NIOAsyncChannel<PDUFrame, PDU>, Never>
    private let handlers: Handlers
    private let logger: Logger
    private let activeAssociations: ActiveAssociationCounter
    private let openChannels = OpenChannels()

    /// Binds the listening socket (``bind(configuration:handlers:eventLoopGroup:logger:)``).
    init(
        configuration: Configuration,
        handlers: Handlers,
        eventLoopGroup: any EventLoopGroup,
        logger: Logger
    ) async throws {
        let maximumPDULength = configuration.maximumPDULength
        let idleTimeout = configuration.idleTimeout
        let connectionLimits = configuration.connectionLimits
        let pendingConnections = PendingConnections(limit: connectionLimits.maximumPendingConnections)
        let tls = try configuration.tls.map { tls throws(DICOMNetworkError) in try DICOMTLSContext(tls, server: true) }
        let artimTimeout = configuration.artimTimeout
        let channel = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            .childChannelOption(.maxMessagesPerRead, value: 16)
            .bind(
                host: configuration.host,
                port: configuration.port,
                serverBackPressureStrategy: .init(lowWatermark: 4, highWatermark: 64)
            ) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addConnectionGuard(
                        connectionLimits, pending: pendingConnections, on: channel, logger: logger)
                    if let tls {  // TLS below the PDU framing (PS3.15 Annex B.9)
                        try channel.pipeline.syncOperations.addTLSHandlers(
                            tls, serverHostname: nil, handshakeTimeout: artimTimeout
                        )
                        .handshake.whenFailure {
                            logger.notice(
                                "TLS handshake failed",
                                metadata: [
                                    "peer.address": "\(channel.remoteAddress.map { "\($0)" } ?? "?")", "error": "\($0)",
                                ])
                        }
                    }
                    try channel.pipeline.syncOperations.addPDUHandlers(
                        maximumDataPDULength: maximumPDULength,
                        idleTimeout: idleTimeout
                    )
                    return try NIOAsyncChannel<PDUFrame, PDU>(
                        wrappingChannelSynchronously: channel,
                        configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8))
                    )
                }
            }
        guard let port = channel.channel.localAddress?.port else {
            channel.channel.close(promise: nil)
            throw DICOMNetworkError.connectionFailed(
                host: configuration.host, port: configuration.port,
                DICOMNetworkError.invalidArgument("no local address"))
        }
        self.configuration = configuration
        self.localPort = port
        self.serverChannel = channel
        self.handlers = handlers
        self.logger = logger
        self.activeAssociations = ActiveAssociationCounter()
    }

    /// Accepts and serves associations until the task is cancelled; then stops accepting and waits for the
    /// associations in progress to end.
    public func run() async throws {
        let serverChannel = self.serverChannel
        let logger = self.logger
        logger.info(
            "listening", metadata: ["server.port": "\(self.localPort)", "server.aet": "\(self.configuration.aeTitle)"])
        try await withTaskCancellationHandler {
            try await serverChannel.executeThenClose { inbound in
                try await withThrowingDiscardingTaskGroup { group in
                    for try await connection in inbound {
                        group.addTask {
                            // An unstructured task, awaited here: cancelling the server does not cancel the
                            // association, which ends by itself (release, abort or idle timeout).
                            let association = Task { await self.serve(connection) }
                            await association.value
                        }
                    }
                }
            }
        } onCancel: {
            serverChannel.channel.close(promise: nil)
        }
        logger.info("stopped listening", metadata: ["server.port": "\(self.localPort)"])
    }

    /// Runs one association to its end; errors are logged, never thrown (one peer cannot stop the server).
    private func serve(_ connection: NIOAsyncChannel<PDUFrame, PDU>) async {
        let key = self.openChannels.insert(connection.channel)
        defer { self.openChannels.remove(key) }
        var logger = self.logger
        logger[metadataKey: "peer.address"] = "\(connection.channel.remoteAddress.map { "\($0)" } ?? "?")"
        let lifetime = self.configuration.maximumAssociationLifetime.map { limit in
            let channel = connection.channel
            return channel.eventLoop.scheduleTask(in: limit) { [logger] in
                logger.notice(
                    "aborting the association: it reached the maximum association lifetime",
                    metadata: ["limit.seconds": "\(limit.nanoseconds / 1_000_000_000)"])
                let abort = PDU.abort(Abort(source: .serviceProvider, reason: .reasonNotSpecified))
                channel.writeAndFlush(abort).whenComplete { _ in channel.close(promise: nil) }
            }
        }
        defer { lifetime?.cancel() }
        do {
            try await connection.executeThenClose { inbound, outbound in
                let association = AssociationConnection(
                    channel: connection.channel,
                    inbound: inbound,
                    outbound: outbound,
                    assembler: DIMSEMessageAssembler(streamedCommands: [.cStoreRQ]),
                    artimTimeout: self.configuration.artimTimeout,
                    logger: logger
                )
                try await ServerAssociationHandler(
                    connection: association,
                    configuration: self.configuration,
                    handlers: self.handlers,
                    counter: self.activeAssociations
                ).run()
            }
        } catch {
            logger.debug("association ended with an error", metadata: ["error": "\(error)"])
        }
    }
}

// MARK: - Shutdown (px-listen --shutdown-grace)

extension DICOMServer {
    /// Aborts every association in progress: sends an A-ABORT (PS3.8 §7.3, service user) and closes the
    /// connection. Their temporary files are removed by the association tasks as the streams end.
    /// Used after a graceful stop (cancelled ``run()``) has waited long enough.
    public func abortAssociations() {
        for channel in self.openChannels.all() {
            let abort = PDU.abort(Abort(source: .serviceUser, reason: .reasonNotSpecified))
            channel.writeAndFlush(abort).whenComplete { _ in channel.close(promise: nil) }
        }
    }

    /// How many connections are being served.
    public var openConnections: Int { self.openChannels.all().count }
}

/// The connections being served, for ``DICOMServer/abortAssociations()``.
final class OpenChannels: Sendable {
    private let channels = Mutex<[ObjectIdentifier: any Channel]>([:])

    func insert(_ channel: any Channel) -> ObjectIdentifier {
        let key = ObjectIdentifier(channel)
        self.channels.withLock { $0[key] = channel }
        return key
    }

    func remove(_ key: ObjectIdentifier) {
        _ = self.channels.withLock { $0.removeValue(forKey: key) }
    }

    func all() -> [any Channel] {
        self.channels.withLock { Array($0.values) }
    }
}

/// Counts the associations being served, for ``DICOMServer/Configuration/maximumAssociations``.
final class ActiveAssociationCounter: Sendable {
    private let count = Atomic<Int>(0)

    /// Takes a slot if fewer than `limit` are taken.
    func acquire(limit: Int) -> Bool {
        let new = self.count.add(1, ordering: .relaxed).newValue
        if new > limit {
            self.count.subtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func release() {
        self.count.subtract(1, ordering: .relaxed)
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Adds the PDU framing handlers: frame decoder with its caps (PS3.8 §9.3.1), PDU encoder, and optionally
    /// an idle timer that ends the inbound stream with a ``TimeoutSignal``.
    func addPDUHandlers(maximumDataPDULength: UInt32, idleTimeout: TimeAmount?) throws {
        // At the socket end, below TLS when there is TLS: the ACK concerns the TCP segments.
        try self.addHandler(QuickAckHandler(), position: .first)
        // Streaming decoder: C-STORE data sets go to disk as their bytes arrive, not once per whole PDU.
        try self.addHandler(
            ByteToMessageHandler(PDUFrameDecoder(maximumDataPDULength: maximumDataPDULength, streamsDataSets: true)))
        try self.addHandler(ReadDeadlineHandler())
        try self.addHandler(MessageToByteHandler(PDUEncoder()))
        if let idleTimeout {
            try self.addHandler(IdleStateHandler(readTimeout: idleTimeout))
            try self.addHandler(IdleTimeoutHandler())
        }
    }
}
