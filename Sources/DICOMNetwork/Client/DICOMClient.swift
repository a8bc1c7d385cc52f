import DICOMData
import DICOMProtocol
import Logging
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A DICOM SCU: opens associations to a peer and runs DIMSE operations on them (PS3.7, PS3.8).
///
/// ```swift
/// let client = DICOMClient(configuration: .init(callingAETitle: "PX"), logger: logger)
/// let status = try await client.withAssociation(to: peer, proposing: [.verification]) { try await $0.echo() }
/// ```
public struct DICOMClient: Sendable {
    /// Client settings.
    public struct Configuration: Sendable {
        /// This side's AE title (the calling AE title).
        public var callingAETitle: String
        /// How long the TCP connection may take.
        public var connectTimeout: TimeAmount
        /// How long to wait for A-ASSOCIATE-AC/RJ and A-RELEASE-RP.
        public var acseTimeout: TimeAmount
        /// How long to wait for each DIMSE message from the peer.
        public var dimseTimeout: TimeAmount
        /// The largest P-DATA-TF this side accepts (sub-item 0x51; enforced by the frame decoder).
        public var maximumPDULength: UInt32
        /// Implementation Class UID (sub-item 0x52).
        public var implementationClassUID: String
        /// Implementation Version Name (sub-item 0x55).
        public var implementationVersionName: String?
        /// How many requests to keep outstanding when the acceptor agrees (PS3.7 §D.3.3.3): above 1, an
        /// asynchronous operations window with this *invoked* (and *performed* 1) is proposed, and
        /// ``DICOMAssociation/store(_:onResult:)`` sends the next file before the previous one is answered,
        /// up to what the acceptor granted. `1` (the default) proposes nothing: synchronous operation.
        public var maximumOutstandingRequests: UInt16 = 1
        /// DICOM TLS (PS3.15 Annex B.9); `nil` (the default): plain TCP. The handshake gets its own
        /// ``connectTimeout`` once the TCP connection is up.
        public var tls: DICOMTLSConfiguration? = nil
        /// The user identity to present in the A-ASSOCIATE-RQ (sub-item 0x58, PS3.7 §D.3.3.7); `nil` (the
        /// default): none. A rejection comes back as ``DICOMNetworkError/associationRejected(_:)``; the
        /// acceptor's positive response, when asked for, is ``DICOMAssociation/userIdentityResponse``.
        public var userIdentity: UserIdentityRQ? = nil

        public init(
            callingAETitle: String,
            connectTimeout: TimeAmount = .seconds(10),
            acseTimeout: TimeAmount = .seconds(30),
            dimseTimeout: TimeAmount = .seconds(60),
            maximumPDULength: UInt32 = 256 * 1024,
            implementationClassUID: String = Part10File.implementationClassUID,
            implementationVersionName: String? = Part10File.implementationVersionName
        ) {
            self.callingAETitle = callingAETitle
            self.connectTimeout = connectTimeout
            self.acseTimeout = acseTimeout
            self.dimseTimeout = dimseTimeout
            self.maximumPDULength = maximumPDULength
            self.implementationClassUID = implementationClassUID
            self.implementationVersionName = implementationVersionName
        }
    }

    /// The settings.
    public let configuration: Configuration
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    public init(
        configuration: Configuration, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// Opens an association, runs `body` on it, and releases it (or aborts it when `body` throws).
    ///
    /// - Parameters:
    ///   - peer: The acceptor.
    ///   - contexts: The presentation contexts to propose (IDs are allocated here, PS3.8 §9.3.2.2).
    ///   - body: The operations to run; the association must not escape it.
    /// - Throws: ``DICOMNetworkError`` for connection, negotiation and protocol failures, or `body`'s error.
    public func withAssociation<Result>(
        to peer: DICOMPeer,
        proposing contexts: [ProposedPresentationContext],
        _ body: (DICOMAssociation) async throws -> Result
    ) async throws -> Result {
        let parameters = AssociationRequestParameters(
            callingAETitle: self.configuration.callingAETitle,
            calledAETitle: peer.aeTitle,
            presentationContexts: contexts,
            maximumPDULength: self.configuration.maximumPDULength,
            implementationClassUID: self.configuration.implementationClassUID,
            implementationVersionName: self.configuration.implementationVersionName,
            asynchronousOperationsWindow: self.configuration.maximumOutstandingRequests > 1
                ? AsynchronousOperationsWindow(
                    maximumOperationsInvoked: self.configuration.maximumOutstandingRequests,
                    maximumOperationsPerformed: 1)
                : nil,
            userIdentity: self.configuration.userIdentity
        )
        let request = try parameters.makeAssociateRQ()
        let (channel, tls) = try await self.connect(to: peer)
        var logger = self.logger
        logger[metadataKey: "peer"] = "\(peer)"
        let configuration = self.configuration
        return try await channel.executeThenClose { inbound, outbound in
            let connection = AssociationConnection(
                channel: channel.channel,
                inbound: inbound,
                outbound: outbound,
                assembler: DIMSEMessageAssembler(streamedCommands: [.cStoreRQ]),
                artimTimeout: configuration.acseTimeout,
                logger: logger
            )
            let association = DICOMAssociation(connection: connection, configuration: configuration, peer: peer)
            try await DICOMNetworkError.namingTLSFailures(tls) { try await association.open(request) }
            let result: Result
            do {
                result = try await body(association)
            } catch {
                await association.abort()
                throw error
            }
            if association.isEstablished {
                try await association.release()
            }
            return result
        }
    }

    /// Opens the TCP connection with TCP_NODELAY and the PDU framing handlers.
    private func connect(to peer: DICOMPeer) async throws -> (NIOAsyncChannel<PDUFrame, PDU>, TLSConnectionState?) {
        let maximumPDULength = self.configuration.maximumPDULength
        let tls = try self.configuration.tls.map { configuration throws(DICOMNetworkError) in
            try DICOMTLSContext(configuration, server: false)
        }
        let handshakeTimeout = self.configuration.connectTimeout
        let bootstrap = ClientBootstrap(group: self.eventLoopGroup)
            .connectTimeout(self.configuration.connectTimeout)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
        let initialize:
            @Sendable (any Channel) -> EventLoopFuture<(NIOAsyncChannel<PDUFrame, PDU>, TLSConnectionState?)> = {
                channel in
                channel.eventLoop.makeCompletedFuture {
                    // TLS below the PDU framing (PS3.15 Annex B.9).
                    let tlsState = try tls.map {
                        try channel.pipeline.syncOperations.addTLSHandlers(
                            $0, serverHostname: peer.host, handshakeTimeout: handshakeTimeout)
                    }
                    try channel.pipeline.syncOperations.addPDUHandlers(
                        maximumDataPDULength: maximumPDULength, idleTimeout: nil)
                    return (
                        try NIOAsyncChannel<PDUFrame, PDU>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(backPressureStrategy: .init(lowWatermark: 2, highWatermark: 8))
                        ), tlsState
                    )
                }
            }
        do {
            let (connection, tlsState): (NIOAsyncChannel<PDUFrame, PDU>, TLSConnectionState?)
            if let address = SocketAddress.literal(peer.host, port: peer.port) {
                // An IP address needs no resolver: no getaddrinfo handed to another thread, no Happy Eyeballs.
                (connection, tlsState) = try await bootstrap.connect(to: address, channelInitializer: initialize)
            } else {
                (connection, tlsState) = try await bootstrap.connect(
                    host: peer.host, port: peer.port, channelInitializer: initialize)
            }
            try await Self.awaitHandshake(tlsState?.handshake, of: connection)
            return (connection, tlsState)
        } catch let error as ChannelError where error == .connectTimeout(self.configuration.connectTimeout) {
            throw DICOMNetworkError.connectTimeout(host: peer.host, port: peer.port)
        } catch let error as NIOConnectionError {
            let refused = error.connectionErrors.contains { ($0.error as? IOError)?.errnoCode == ECONNREFUSED }
            if refused {
                throw DICOMNetworkError.connectionRefused(host: peer.host, port: peer.port)
            }
            if error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil) {
                throw DICOMNetworkError.unknownHost(peer.host)
            }
            if error.connectionErrors.contains(where: {
                ($0.error as? ChannelError).map { "\($0)".hasPrefix("connectTimeout") } ?? false
            }) {
                throw DICOMNetworkError.connectTimeout(host: peer.host, port: peer.port)
            }
            throw DICOMNetworkError.connectionFailed(host: peer.host, port: peer.port, error)
        } catch let error as IOError where error.errnoCode == ECONNREFUSED {
            throw DICOMNetworkError.connectionRefused(host: peer.host, port: peer.port)
        } catch let error as IOError {
            throw DICOMNetworkError.connectionFailed(host: peer.host, port: peer.port, error)
        } catch let error as SocketAddressError {
            throw DICOMNetworkError.connectionFailed(host: peer.host, port: peer.port, error)
        } catch let error as ChannelError {
            if case .connectTimeout = error {
                throw DICOMNetworkError.connectTimeout(host: peer.host, port: peer.port)
            }
            throw DICOMNetworkError.connectionFailed(host: peer.host, port: peer.port, error)
        }
    }

    /// Waits for the TLS handshake, if any; closes the connection when it fails.
    private static func awaitHandshake(
        _ handshake: EventLoopFuture<Void>?, of connection: NIOAsyncChannel<PDUFrame, PDU>
    ) async throws {
        guard let handshake else { return }
        do {
            try await handshake.get()
        } catch {
            // Close through the async channel, which finishes its writer; the handshake's error is the one to report.
            do {
                try await connection.executeThenClose { _, _ in }
            } catch let closeError {
                _ = closeError
            }
            throw error
        }
    }

    /// One C-ECHO on its own association.
    public func echo(_ peer: DICOMPeer) async throws -> DIMSEStatus {
        try await self.withAssociation(to: peer, proposing: [.verification]) { try await $0.echo() }
    }

    /// Stores files on one association that proposes only the contexts they need; one result per file, in order.
    ///
    /// Files that cannot be read, or that no accepted context can carry, get a failed result without
    /// stopping the others.
    public func store(files: [String], to peer: DICOMPeer) async throws -> [StoreResult] {
        var headers: [StorableFile] = []
        var unreadable: [String: String] = [:]
        for path in files {
            do {
                headers.append(try StorableFile(readingHeaderOf: path))
            } catch {
                unreadable[path] = "\(error)"
            }
        }
        let contexts = StorableFile.presentationContexts(for: headers)
        var results: [String: StoreResult] = [:]
        for (path, reason) in unreadable {
            results[path] = StoreResult(path: path, sopClassUID: nil, sopInstanceUID: nil, status: nil, error: reason)
        }
        if !contexts.isEmpty {
            try await self.withAssociation(to: peer, proposing: contexts) { association in
                try await association.store(headers) { index, result in results[headers[index].path] = result }
            }
        }
        return files.map {
            results[$0]
                ?? StoreResult(
                    path: $0, sopClassUID: nil, sopInstanceUID: nil, status: nil,
                    error: "not stored: the association ended before the peer answered")
        }
    }
}
