import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore
import PXCore

extension NativeBackend {
    /// Storage Commitment Push Model SCU (PS3.4 §J.3): one N-ACTION-RQ Request Storage Commitment with a new
    /// Transaction UID and `instances` as Referenced SOP Sequence, on its own association after the C-STOREs,
    /// then the N-EVENT-REPORT within ``CommitmentSettings/timeout``: on that association when the archive
    /// granted px the SCP role (PS3.7 §D.3.3.4), and on any association the archive opens to px's listener on
    /// ``CommitmentSettings/listenPort`` (called AE title: px's calling AE title), whichever comes first. Only
    /// the report of this transaction is accepted.
    ///
    /// - Throws: ``PXError`` with code `timeout` (`details.timeout` "storage commitment") when no report came
    ///   in time; the association's errors otherwise.
    public func commit(
        _ instances: [CommitmentInstance], settings: CommitmentSettings, connection: Connection, logger: Logger
    ) async throws(PXError) -> CommitmentResult {
        let transactionUID = Self.newUID()
        let mailbox = StorageCommitmentMailbox(transactionUID: transactionUID)
        var listener: (server: DICOMServer, task: Task<Void, any Error>)?
        if let port = settings.listenPort {
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
                let server = try await DICOMServer.bind(
                    configuration: configuration, handlers: handlers, logger: logger)
                listener = (server, Task { try await server.run() })
            } catch {
                throw PXError.io("cannot listen for the storage commitment report on port \(port): \(error)")
            }
        }
        defer {
            if let listener {
                listener.task.cancel()
                listener.server.abortAssociations()
            }
        }
        let requested = instances.map {
            StorageCommitment.Reference(sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID)
        }
        let request = StorageCommitment.Request(transactionUID: transactionUID, references: requested)
        let timeout = settings.timeout
        let start = ContinuousClock.now
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        logger.info(
            "requesting storage commitment",
            metadata: ["transaction": "\(transactionUID)", "instances": "\(instances.count)"])
        let onAssociation: StorageCommitment.Report? = try await run("N-ACTION", connection) {
            try await client.withAssociation(to: peer, proposing: [.storageCommitmentRequester]) { association in
                let status = try await association.requestStorageCommitment(request)
                guard status.category == .success else {
                    throw PXError.dimseFailure(status, operation: "N-ACTION (storage commitment)")
                }
                guard association.acceptsStorageCommitmentReports else { return nil }
                do {
                    let report = try await association.storageCommitmentReport(
                        transactionUID: transactionUID, timeout: .seconds(timeout), mailbox: mailbox)
                    return mailbox.delivered == report ? nil : report
                } catch let error as DICOMNetworkError where error.code == .dimseTimeout {
                    return nil  // no report in time on this association: the timeout below names it
                }
            }
        }
        let report: StorageCommitment.Report
        let sameAssociation: Bool
        let left = max(0, timeout - Double((ContinuousClock.now - start).components.seconds))
        if let onAssociation {
            (report, sameAssociation) = (onAssociation, true)
        } else if let elsewhere = await mailbox.wait(timeout: .seconds(left)) {
            (report, sameAssociation) = (elsewhere, false)
        } else {
            throw PXError.timeout(
                "storage commitment", seconds: timeout,
                detail: settings.listenPort == nil
                    ? "no N-EVENT-REPORT on the association; give --commit-port for one on a new association"
                    : "no N-EVENT-REPORT for transaction \(transactionUID)")
        }
        return Self.commitmentResult(report, requested: instances, sameAssociation: sameAssociation)
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
