import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore
import PXCore
import Synchronization

/// One storage commitment transaction of a px-push (PS3.4 §J.3, Push Model SCU): its Transaction UID, the
/// listener on ``CommitmentSettings/listenPort`` that takes a report sent on a new association (PS3.4 §J.3.3,
/// called AE title px's calling AE title), and the mailbox it fills. Started before the storage association,
/// so the listener is up whenever the archive reports.
final class CommitmentRequester: Sendable {
    let transactionUID: String
    let settings: CommitmentSettings
    let mailbox: StorageCommitmentMailbox
    private let listener: (server: DICOMServer, task: Task<Void, any Error>)?
    /// When the N-ACTION-RSP came: ``CommitmentSettings/timeout`` counts from there.
    private let answered = Mutex<ContinuousClock.Instant?>(nil)
    let logger: Logger

    private init(
        settings: CommitmentSettings, listener: (DICOMServer, Task<Void, any Error>)?,
        mailbox: StorageCommitmentMailbox, logger: Logger
    ) {
        self.transactionUID = mailbox.transactionUID
        self.settings = settings
        self.mailbox = mailbox
        self.listener = listener
        self.logger = logger
    }

    /// A new transaction, its listener bound when the settings give a port.
    ///
    /// - Throws: ``PXError`` with code `io` when the port cannot be bound.
    static func start(_ settings: CommitmentSettings, connection: Connection, logger: Logger) async throws(PXError)
        -> CommitmentRequester
    {
        let mailbox = StorageCommitmentMailbox(transactionUID: NativeBackend.newUID())
        guard let port = settings.listenPort else {
            return CommitmentRequester(settings: settings, listener: nil, mailbox: mailbox, logger: logger)
        }
        var configuration = DICOMServer.Configuration(
            host: settings.listenHost, port: port, aeTitle: connection.local.aeTitle,
            temporaryDirectory: FileManager.default.temporaryDirectory.path, maximumAssociations: 4,
            supportedAbstractSyntaxes: [
                WellKnownUID.verificationSOPClass: TransferSyntaxLists.uncompressed,
                StorageCommitment.sopClassUID: TransferSyntaxLists.uncompressed,
            ])
        configuration.tls = connection.tls?.network
        var handlers = DICOMServer.Handlers()
        handlers.onStorageCommitmentReport = { report, served in
            let accepted = mailbox.deliver(report)
            logger.info(
                "storage commitment report on a new association",
                metadata: [
                    "peer.aet": "\(served.callingAETitle)", "transaction": "\(report.transactionUID)",
                    "accepted": "\(accepted)",
                ])
            return accepted
        }
        do {
            let server = try await DICOMServer.bind(configuration: configuration, handlers: handlers, logger: logger)
            return CommitmentRequester(
                settings: settings, listener: (server, Task { try await server.run() }), mailbox: mailbox,
                logger: logger)
        } catch {
            throw PXError.io("cannot listen for the storage commitment report on port \(port): \(error)")
        }
    }

    /// Stops the listener.
    func stop() {
        guard let listener else { return }
        listener.task.cancel()
        listener.server.abortAssociations()
    }

    /// N-ACTION-RQ for `instances` on `association` (which must have accepted the Push Model context), then,
    /// when the archive granted px the SCP role, the wait for the report there (a report on the listener ends it
    /// too). Returns the report when it came on `association`, `nil` when it is to be awaited in the mailbox.
    ///
    /// - Throws: ``PXError/dimseFailure(_:operation:)`` when the N-ACTION is refused; the association's errors.
    func request(_ instances: [CommitmentInstance], on association: DICOMAssociation) async throws
        -> StorageCommitment.Report?
    {
        let request = StorageCommitment.Request(
            transactionUID: self.transactionUID,
            references: instances.map {
                StorageCommitment.Reference(sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID)
            })
        self.logger.info(
            "requesting storage commitment",
            metadata: ["transaction": "\(self.transactionUID)", "instances": "\(instances.count)"])
        let status = try await association.requestStorageCommitment(request)
        self.answered.withLock { $0 = .now }
        guard status.category == .success else {
            throw PXError.dimseFailure(status, operation: "N-ACTION (storage commitment)")
        }
        guard association.acceptsStorageCommitmentReports else { return nil }
        do {
            let report = try await association.storageCommitmentReport(
                transactionUID: self.transactionUID, timeout: .seconds(self.settings.timeout), mailbox: self.mailbox)
            return self.mailbox.delivered == report ? nil : report
        } catch let error as DICOMNetworkError where error.code == .dimseTimeout || self.settings.listenPort != nil {
            // No report in time on this association (``finish`` names the timeout), or the association ended
            // first: the archive may still report on a new one, to the listener.
            self.logger.info("no report on the requesting association", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// The transaction's result: the report `request` got on its association, else the one the listener
    /// receives within what is left of ``CommitmentSettings/timeout``.
    ///
    /// - Throws: ``PXError`` with code `timeout` (`details.timeout` "storage commitment") when none came.
    func finish(_ instances: [CommitmentInstance], onAssociation: StorageCommitment.Report?) async throws(PXError)
        -> CommitmentResult
    {
        if let onAssociation {
            return NativeBackend.commitmentResult(onAssociation, requested: instances, sameAssociation: true)
        }
        let timeout = self.settings.timeout
        let elapsed = self.answered.withLock { $0 }.map { ContinuousClock.now - $0 } ?? .zero
        let left = max(.zero, Duration.seconds(timeout) - elapsed)
        if let report = await self.mailbox.wait(timeout: left) {
            return NativeBackend.commitmentResult(report, requested: instances, sameAssociation: false)
        }
        throw PXError.timeout(
            "storage commitment", seconds: timeout,
            detail: self.settings.listenPort == nil
                ? "no N-EVENT-REPORT on the association; give --commit-port for one on a new association"
                : "no N-EVENT-REPORT for transaction \(self.transactionUID)")
    }
}

extension NativeBackend {
    /// Storage Commitment Push Model SCU (PS3.4 §J.3) on an association of its own: one N-ACTION-RQ Request
    /// Storage Commitment with a new Transaction UID and `instances` as Referenced SOP Sequence, then the
    /// N-EVENT-REPORT within ``CommitmentSettings/timeout``: on that association when the archive granted px the
    /// SCP role (PS3.7 §D.3.3.4), and on any association the archive opens to px's listener on
    /// ``CommitmentSettings/listenPort`` (called AE title: px's calling AE title), whichever comes first. Only
    /// the report of this transaction is accepted. px-push asks on its storage association instead
    /// (``push(_:connection:logger:onFile:)``) and comes here only when that could not be done.
    ///
    /// - Throws: ``PXError`` with code `timeout` (`details.timeout` "storage commitment") when no report came
    ///   in time; the association's errors otherwise.
    public func commit(
        _ instances: [CommitmentInstance], settings: CommitmentSettings, connection: Connection, logger: Logger
    ) async throws(PXError) -> CommitmentResult {
        let requester = try await CommitmentRequester.start(settings, connection: connection, logger: logger)
        defer { requester.stop() }
        return try await self.commit(instances, requester: requester, connection: connection, logger: logger)
    }

    /// ``commit(_:settings:connection:logger:)`` with a transaction already started.
    func commit(
        _ instances: [CommitmentInstance], requester: CommitmentRequester, connection: Connection, logger: Logger
    ) async throws(PXError) -> CommitmentResult {
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        let onAssociation: StorageCommitment.Report? = try await run("N-ACTION", connection) {
            try await client.withAssociation(to: peer, proposing: [.storageCommitmentRequester]) { association in
                try await requester.request(instances, on: association)
            }
        }
        return try await requester.finish(instances, onAssociation: onAssociation)
    }

    /// The result of a report: instances asked for that it names in neither list are failed, 0x0110.
    static func commitmentResult(
        _ report: StorageCommitment.Report, requested: [CommitmentInstance], sameAssociation: Bool
    ) -> CommitmentResult {
        let committed = report.committed.map {
            CommitmentInstance(sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID)
        }
        var failed = report.failed.map {
            CommitmentInstance(
                sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID, failureReason: $0.failureReason)
        }
        let named = Set(committed.map(\.sopInstanceUID) + failed.map(\.sopInstanceUID))
        for instance in requested where !named.contains(instance.sopInstanceUID) {
            failed.append(
                CommitmentInstance(
                    sopClassUID: instance.sopClassUID, sopInstanceUID: instance.sopInstanceUID,
                    failureReason: StorageCommitment.FailureReason.processingFailure))
        }
        return CommitmentResult(
            transactionUID: report.transactionUID, requested: requested, committed: committed, failed: failed,
            sameAssociation: sameAssociation)
    }

    /// A new UID under the 2.25 root: a random UUID as a decimal integer (PS3.5 §B.2).
    static func newUID() -> String {
        let bytes = withUnsafeBytes(of: UUID().uuid) { Array($0) }
        let value = bytes.reduce(UInt128(0)) { $0 << 8 | UInt128($1) }
        return "2.25.\(value)"
    }
}
