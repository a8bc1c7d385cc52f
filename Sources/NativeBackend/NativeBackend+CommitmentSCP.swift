import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import NIOCore
import PXCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The instances a receiver placed since it started, by SOP Instance UID: what its storage commitment SCP
/// (PS3.4 §J.3) may commit. Bounded: past ``maximumCount`` instances, new ones are not recorded (and so not
/// committed, the safe side).
final class PlacedInstances: Sendable {
    struct Entry: Sendable {
        var sopClassUID: String
        var path: String
    }
    /// The most instances remembered.
    static let maximumCount = 1_000_000
    private let entries = Mutex<[String: Entry]>([:])

    func record(sopInstanceUID: String, sopClassUID: String, path: String) {
        self.entries.withLock { entries in
            guard entries.count < Self.maximumCount || entries[sopInstanceUID] != nil else { return }
            entries[sopInstanceUID] = Entry(sopClassUID: sopClassUID, path: path)
        }
    }

    /// The report for `request`: an instance is committed only when px placed it and its file is still at its
    /// final name (a regular file); else it failed with 0x0112, no such object instance, or 0x0119, class-instance
    /// conflict, when the request names another SOP class (PS3.4 §J.3.3, Table J.3-2). The request's paths or
    /// anything else it says about the files is not trusted.
    func report(for request: StorageCommitment.Request) -> StorageCommitment.Report {
        var committed: [StorageCommitment.Reference] = []
        var failed: [StorageCommitment.Failure] = []
        for reference in request.references {
            let entry = self.entries.withLock { $0[reference.sopInstanceUID] }
            var reason: UInt16?
            if let entry {
                var info = stat()
                if stat(entry.path, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
                    reason = StorageCommitment.FailureReason.noSuchObjectInstance
                } else if entry.sopClassUID != reference.sopClassUID {
                    reason = StorageCommitment.FailureReason.classInstanceConflict
                }
            } else {
                reason = StorageCommitment.FailureReason.noSuchObjectInstance
            }
            if let reason {
                failed.append(
                    StorageCommitment.Failure(
                        sopClassUID: reference.sopClassUID, sopInstanceUID: reference.sopInstanceUID,
                        failureReason: reason))
            } else {
                committed.append(reference)
            }
        }
        return StorageCommitment.Report(transactionUID: request.transactionUID, committed: committed, failed: failed)
    }
}

extension NativeBackend {
    /// px-listen's and px-serve's Storage Commitment Push Model SCP (PS3.4 §J.3): N-ACTION answered from
    /// `placed`; the report on the requester's association when it took the SCP role, else on a new association
    /// to the requester's AE from ``ListenConfiguration/commitmentDestinations``. Both reported as events.
    func installStorageCommitment(
        _ handlers: inout DICOMServer.Handlers, placed: PlacedInstances, configuration: ListenConfiguration,
        events: ListenEventChannel, logger: Logger
    ) {
        handlers.onStorageCommitment = { request, served in
            let report = placed.report(for: request)
            logger.info(
                "storage commitment requested",
                metadata: [
                    "peer.aet": "\(served.callingAETitle)", "transaction": "\(request.transactionUID)",
                    "committed": "\(report.committed.count)", "failed": "\(report.failed.count)",
                ])
            events.yield(
                .storageCommitment(
                    callingAETitle: served.callingAETitle, transactionUID: report.transactionUID,
                    committed: report.committed.map {
                        CommitmentInstance(sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID)
                    },
                    failed: report.failed.map {
                        CommitmentInstance(
                            sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID,
                            failureReason: $0.failureReason)
                    }, association: served.id))
            return report
        }
        let destinations = configuration.commitmentDestinations
        let local = configuration.aeTitle
        let timeouts = configuration.timeouts
        let tls = configuration.tls
        handlers.deliverStorageCommitmentReport = { report, served in
            let calling = served.callingAETitle
            guard let node = destinations[calling] else {
                events.yield(
                    .storageCommitmentReported(
                        callingAETitle: calling, transactionUID: report.transactionUID, destination: nil, status: nil,
                        error: .usage("no --commit-destination (or config node) for AE title \(calling)")))
                return
            }
            let status: DIMSEStatus
            do throws(PXError) {
                var connection = Connection(node: node, local: try LocalAE(aeTitle: local), timeouts: timeouts)
                connection.tls = tls
                connection.timeouts.deadline = timeouts.connect + timeouts.acse + 2 * timeouts.dimse
                let client = self.client(connection, logger: logger)
                let peer = self.peer(connection)
                status = try await self.run("N-EVENT-REPORT", connection) {
                    try await client.withAssociation(to: peer, proposing: [.storageCommitmentReporter]) {
                        try await $0.reportStorageCommitment(report)
                    }
                }
            } catch {
                logger.warning(
                    "storage commitment report not delivered",
                    metadata: ["peer.aet": "\(calling)", "destination": "\(node)", "error": "\(error)"])
                events.yield(
                    .storageCommitmentReported(
                        callingAETitle: calling, transactionUID: report.transactionUID, destination: "\(node)",
                        status: nil, error: error))
                return
            }
            events.yield(
                .storageCommitmentReported(
                    callingAETitle: calling, transactionUID: report.transactionUID, destination: "\(node)",
                    status: status, error: nil))
        }
    }
}
