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

extension DICOMServer {
    /// What a server does when something happens on it: optional async closures, each called from the task that
    /// serves the association concerned (so calls for one association come one after another, in order; calls
    /// for different associations may run at once).
    ///
    /// A handler that is `nil` leaves the server's default: associations are accepted by the
    /// ``Configuration`` alone, and a C-STORE is refused (see ``onStore``). C-ECHO (Verification, PS3.7 §9.1.5)
    /// is always answered with success. C-FIND, C-MOVE and C-GET are served by
    /// ``Configuration/queryRetrieve`` (a ``QueryRetrieveProvider``, or ``QueryRetrieveHandlers`` for closures).
    ///
    /// ```swift
    /// var handlers = DICOMServer.Handlers()
    /// handlers.onAssociationAccepted = { association in logger.info("\(association.callingAETitle) connected") }
    /// handlers.onStore = { instance in
    ///     let header = try await instance.readHeader()            // file meta information and data set header
    ///     guard header.dataSet.string(.modality) == "CT" else { return .dataSetDoesNotMatchSOPClass }
    ///     try FileManager.default.moveItem(atPath: instance.path, toPath: "/data/\(instance.sopInstanceUID).dcm")
    ///     return .success
    /// }
    /// ```
    public struct Handlers: Sendable {
        /// An association was accepted: the A-ASSOCIATE-AC has been sent (PS3.8 §9.3.3). Called once per
        /// association, before any of its requests is served.
        public var onAssociationAccepted: (@Sendable (ServedAssociation) async -> Void)?

        /// An association is refused: called with what the server is about to send in its A-ASSOCIATE-RJ
        /// (PS3.8 §9.3.4; called or calling AE title not accepted, user identity refused, more than
        /// ``Configuration/maximumAssociations``...), before it is sent. Each refusal is also logged, as a
        /// warning.
        public var onAssociationRejected: (@Sendable (RejectedAssociation) async -> Void)?

        /// An accepted association ended: released by the peer (`aborted` false, PS3.8 §7.2), or aborted, timed
        /// out or lost (`aborted` true). Called once per ``onAssociationAccepted``, after the last ``onStore`` of
        /// that association has returned.
        public var onAssociationClosed: (@Sendable (_ association: ServedAssociation, _ aborted: Bool) async -> Void)?

        /// Decides whether a requestor's user identity (User Identity Negotiation, PS3.7 §D.3.3.7) is accepted:
        /// called with the A-ASSOCIATE-RQ's sub-item 0x58, or `nil` when it has none. When set, an association
        /// whose identity it refuses is rejected (A-ASSOCIATE-RJ rejected permanent, service user, no reason
        /// given: PS3.8 §9.3.4 has no reason of its own for it), one it accepts is reported with its
        /// ``ServedAssociation/userIdentity``, and one that asks for a positive response gets the AC's sub-item
        /// 0x59 (an empty server response, PS3.7 §D.3.3.7.2). When `nil`, identities are not checked and
        /// sub-item 0x58 is ignored.
        public var checkUserIdentity: (@Sendable (UserIdentityRQ?) async -> Bool)?

        /// A C-STORE-RQ's data set was received (PS3.4 Annex B): its Part 10 file is complete at
        /// ``IncomingInstance/path`` (in ``Configuration/temporaryDirectory``, with file meta information), and
        /// ``IncomingInstance/readHeader()`` reads its meta information and data set up to Pixel Data.
        ///
        /// The returned status is the C-STORE-RSP's (PS3.4 §B.2.3): ``DIMSEStatus/success``, a warning
        /// (0xB000...), or a failure (0xA700 Refused: Out of Resources, 0xA900 Data Set does not match SOP Class,
        /// 0xC000 Cannot understand), which the peer receives as it is; a thrown error is answered 0xA700. The
        /// response is sent only when the handler returns, so success may promise the instance is safely stored.
        /// Move or copy the file to keep it: whatever is still at its path when the handler returns is removed.
        /// When `nil`, every C-STORE is answered 0x0122 (Refused: SOP Class not supported, PS3.7 Annex C) and its
        /// file removed; leave the storage SOP classes out of ``Configuration/supportedAbstractSyntaxes`` to
        /// refuse them at negotiation instead.
        public var onStore: (@Sendable (IncomingInstance) async throws -> DIMSEStatus)?

        /// A C-STORE-RQ's data set could not even be written to its temporary file (disk full, folder
        /// unwritable): it was answered 0xA700 without ``onStore`` being called. Called with the request's
        /// Affected SOP Instance UID, the ``ServedAssociation/id`` and the reason.
        public var onStoreFailed:
            (@Sendable (_ sopInstanceUID: String, _ associationID: UInt64, _ reason: String) async -> Void)?

        /// An N-ACTION-RQ Request Storage Commitment arrived (PS3.4 §J.3.2, Storage Commitment Push Model SCP):
        /// returns the report, which instances are committed and which failed with what Failure Reason. The
        /// server answers the N-ACTION-RSP with success once this returns, then sends the report in an
        /// N-EVENT-REPORT-RQ (PS3.4 §J.3.3): on the same association when the requester took the SCP role for
        /// the Push Model (PS3.7 §D.3.3.4), else, once that association has ended, through
        /// ``deliverStorageCommitmentReport``. When `nil`, N-ACTION is answered 0x0211 (Unrecognized Operation).
        /// Add ``StorageCommitment/sopClassUID`` to ``Configuration/supportedAbstractSyntaxes`` to accept it.
        public var onStorageCommitment:
            (@Sendable (StorageCommitment.Request, ServedAssociation) async -> StorageCommitment.Report)?

        /// A storage commitment report that could not go on the requester's association (it did not take the SCP
        /// role, or it ended first): called after that association ended, to send it on a new association to the
        /// requester (PS3.4 §J.3.3). When `nil`, the report is logged and dropped.
        public var deliverStorageCommitmentReport:
            (@Sendable (StorageCommitment.Report, ServedAssociation) async -> Void)?

        /// An N-EVENT-REPORT-RQ with a storage commitment report arrived (PS3.4 §J.3.3; this side requested the
        /// commitment): `true` when the report is one this side waits for (answered with success), `false`
        /// otherwise (answered 0x0110, processing failure). When `nil`, it is answered 0x0211.
        public var onStorageCommitmentReport: (@Sendable (StorageCommitment.Report, ServedAssociation) async -> Bool)?

        /// Handlers that are all `nil`: a Verification SCP that refuses every C-STORE (see ``onStore``).
        public init(
            onAssociationAccepted: (@Sendable (ServedAssociation) async -> Void)? = nil,
            onAssociationRejected: (@Sendable (RejectedAssociation) async -> Void)? = nil,
            onAssociationClosed: (@Sendable (ServedAssociation, Bool) async -> Void)? = nil,
            checkUserIdentity: (@Sendable (UserIdentityRQ?) async -> Bool)? = nil,
            onStore: (@Sendable (IncomingInstance) async throws -> DIMSEStatus)? = nil,
            onStoreFailed: (@Sendable (String, UInt64, String) async -> Void)? = nil
        ) {
            self.onAssociationAccepted = onAssociationAccepted
            self.onAssociationRejected = onAssociationRejected
            self.onAssociationClosed = onAssociationClosed
            self.checkUserIdentity = checkUserIdentity
            self.onStore = onStore
            self.onStoreFailed = onStoreFailed
        }

        /// Handlers that hand received instances and association events to `storage`
        /// (``StorageDelegate/didReceive(_:)`` is ``onStore``, and so on), such as a ``DirectoryStorage``.
        public init(storage: any StorageDelegate) {
            self.init(
                onAssociationAccepted: { await storage.associationOpened($0) },
                onAssociationClosed: { await storage.associationClosed($0, aborted: $1) },
                onStore: { try await storage.didReceive($0) },
                onStoreFailed: { await storage.didFailToStore(sopInstanceUID: $0, associationID: $1, reason: $2) })
        }
    }

    /// Binds the listening socket of a server that calls `handlers`; ``run()`` then serves associations.
    ///
    /// ```swift
    /// let server = try await DICOMServer.bind(
    ///     configuration: .init(host: "127.0.0.1", port: 0, aeTitle: "MYSCP", temporaryDirectory: "/tmp"),
    ///     handlers: handlers, logger: logger)
    /// print(server.localPort)            // the port bound, also when port 0 let the system choose
    /// let task = Task { try await server.run() }
    /// // ...
    /// task.cancel()                      // stop accepting; the associations in progress finish
    /// try await task.value
    /// ```
    ///
    /// - Throws: NIO's error when the address cannot be bound, ``DICOMNetworkError`` when the TLS configuration
    ///   cannot be used.
    public static func bind(
        configuration: Configuration,
        handlers: Handlers,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) async throws -> DICOMServer {
        try await DICOMServer(
            configuration: configuration, handlers: handlers, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// Binds the listening socket of a server that hands received instances to `storage`
    /// (``Handlers/init(storage:)``).
    ///
    /// - Throws: As ``bind(configuration:handlers:eventLoopGroup:logger:)``.
    public static func bind(
        configuration: Configuration,
        storage: any StorageDelegate,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger
    ) async throws -> DICOMServer {
        try await Self.bind(
            configuration: configuration, handlers: Handlers(storage: storage), eventLoopGroup: eventLoopGroup,
            logger: logger)
    }
}

/// ``DICOMServer/Handlers`` as the ``StorageDelegate`` that an association's C-STORE receipt reports to.
struct HandlerStorage: StorageDelegate {
    let handlers: DICOMServer.Handlers

    func didReceive(_ instance: IncomingInstance) async throws -> DIMSEStatus {
        // The handler moved what it keeps; the temporary file is the server's (Handlers.onStore).
        defer { unlink(instance.path) }
        guard let onStore = self.handlers.onStore else { return .sopClassNotSupported }
        return try await onStore(instance)
    }

    func didFailToStore(sopInstanceUID: String, associationID: UInt64, reason: String) async {
        await self.handlers.onStoreFailed?(sopInstanceUID, associationID, reason)
    }
}
