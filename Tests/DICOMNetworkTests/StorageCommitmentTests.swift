import DICOMData
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Synchronization
import Testing

@testable import DICOMNetwork

/// The Storage Commitment Push Model (PS3.4 §J.3) between px's client and server: the report on the
/// requesting association when the requester takes the SCP role, else on a new association to its listener.
@Suite(.timeLimit(.minutes(2)))
struct StorageCommitmentTests {
    static let ct = "1.2.840.10008.5.1.4.1.1.2"

    /// An archive that holds `1.2.3.1` only.
    static func archiveHandlers(deliver: (@Sendable (StorageCommitment.Report, ServedAssociation) async -> Void)?)
        -> DICOMServer.Handlers
    {
        var handlers = DICOMServer.Handlers()
        handlers.onStorageCommitment = { request, _ in
            StorageCommitment.Report(
                transactionUID: request.transactionUID,
                committed: request.references.filter { $0.sopInstanceUID == "1.2.3.1" },
                failed: request.references.filter { $0.sopInstanceUID != "1.2.3.1" }.map {
                    StorageCommitment.Failure(
                        sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID,
                        failureReason: StorageCommitment.FailureReason.noSuchObjectInstance)
                })
        }
        handlers.deliverStorageCommitmentReport = deliver
        return handlers
    }

    static func configuration(_ aeTitle: String, _ directory: String) -> DICOMServer.Configuration {
        var configuration = DICOMServer.Configuration(
            host: "127.0.0.1", port: 0, aeTitle: aeTitle, temporaryDirectory: directory)
        configuration.supportedAbstractSyntaxes[StorageCommitment.sopClassUID] = [
            WellKnownUID.explicitVRLittleEndian, WellKnownUID.implicitVRLittleEndian,
        ]
        return configuration
    }

    static let request = StorageCommitment.Request(
        transactionUID: "2.25.1234",
        references: [
            StorageCommitment.Reference(sopClassUID: ct, sopInstanceUID: "1.2.3.1"),
            StorageCommitment.Reference(sopClassUID: ct, sopInstanceUID: "1.2.3.2"),
        ])

    @Test("a requester that takes the SCP role gets the report on its own association")
    func sameAssociation() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let server = try await DICOMServer.bind(
                configuration: Self.configuration("ARCHIVE", dir), handlers: Self.archiveHandlers(deliver: nil),
                logger: TestSupport.logger("px.test.archive"))
            let task = Task { try await server.run() }
            defer { task.cancel() }
            let client = DICOMClient(
                configuration: .init(callingAETitle: "MODALITY"), logger: TestSupport.logger("px.test.client"))
            let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "ARCHIVE")
            let (status, granted, report) = try await client.withAssociation(
                to: peer, proposing: [.storageCommitmentRequester]
            ) { association in
                let status = try await association.requestStorageCommitment(Self.request)
                let granted = association.acceptsStorageCommitmentReports
                let report = try await association.storageCommitmentReport(
                    transactionUID: Self.request.transactionUID, timeout: .seconds(10))
                return (status, granted, report)
            }
            #expect(status == .success)
            #expect(granted)
            #expect(report.transactionUID == "2.25.1234")
            #expect(report.committed.map(\.sopInstanceUID) == ["1.2.3.1"])
            #expect(report.failed.map(\.sopInstanceUID) == ["1.2.3.2"])
            #expect(report.failed.first?.failureReason == 0x0112)
            #expect(report.eventTypeID == 2)
        }
    }

    @Test("without the SCP role, the report comes on a new association to the requester's listener")
    func newAssociation() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let mailbox = StorageCommitmentMailbox(transactionUID: Self.request.transactionUID)
            let refused = Mutex(0)
            var listenerHandlers = DICOMServer.Handlers()
            listenerHandlers.onStorageCommitmentReport = { report, served in
                #expect(served.callingAETitle == "ARCHIVE")
                let accepted = mailbox.deliver(report)
                if !accepted { refused.withLock { $0 += 1 } }
                return accepted
            }
            let listener = try await DICOMServer.bind(
                configuration: Self.configuration("MODALITY", dir), handlers: listenerHandlers,
                logger: TestSupport.logger("px.test.listener"))
            let listenerTask = Task { try await listener.run() }
            defer { listenerTask.cancel() }
            let listenerPort = listener.localPort
            let reportStatus = Mutex<DIMSEStatus?>(nil)
            let archive = try await DICOMServer.bind(
                configuration: Self.configuration("ARCHIVE", dir),
                handlers: Self.archiveHandlers { report, served in
                    let client = DICOMClient(
                        configuration: .init(callingAETitle: "ARCHIVE"), logger: TestSupport.logger("px.test.report"))
                    let back = DICOMPeer(host: "127.0.0.1", port: listenerPort, aeTitle: served.callingAETitle)
                    do {
                        // First a report of another transaction, which the requester refuses, then the real one.
                        var other = report
                        other.transactionUID = "2.25.999"
                        let statuses = try await client.withAssociation(
                            to: back, proposing: [.storageCommitmentReporter]
                        ) { association in
                            (
                                try await association.reportStorageCommitment(other),
                                try await association.reportStorageCommitment(report)
                            )
                        }
                        #expect(statuses.0 == .processingFailure)
                        reportStatus.withLock { $0 = statuses.1 }
                    } catch {
                        Issue.record("the archive could not report: \(error)")
                    }
                },
                logger: TestSupport.logger("px.test.archive"))
            let archiveTask = Task { try await archive.run() }
            defer { archiveTask.cancel() }

            let client = DICOMClient(
                configuration: .init(callingAETitle: "MODALITY"), logger: TestSupport.logger("px.test.client"))
            let peer = DICOMPeer(host: "127.0.0.1", port: archive.localPort, aeTitle: "ARCHIVE")
            // The default roles only: the archive must not answer on this association.
            let (status, granted) = try await client.withAssociation(
                to: peer, proposing: [.storageCommitmentReporter]
            ) { association in
                (
                    try await association.requestStorageCommitment(Self.request),
                    association.acceptsStorageCommitmentReports
                )
            }
            #expect(status == .success)
            #expect(!granted)
            let report = try #require(await mailbox.wait(timeout: .seconds(20)), "no report within 20 s")
            #expect(report.committed.map(\.sopInstanceUID) == ["1.2.3.1"])
            #expect(report.failed.map(\.failureReason) == [0x0112])
            let delivered = await TestSupport.poll(seconds: 10) { reportStatus.withLock { $0 } != nil }
            #expect(delivered)
            #expect(reportStatus.withLock { $0 } == .success)
            #expect(refused.withLock { $0 } == 1)
        }
    }

    @Test("an N-ACTION of another action type or without data set is refused, the association goes on")
    func refusedActions() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let server = try await DICOMServer.bind(
                configuration: Self.configuration("ARCHIVE", dir), handlers: Self.archiveHandlers(deliver: nil),
                logger: TestSupport.logger("px.test.archive"))
            let task = Task { try await server.run() }
            defer { task.cancel() }
            let client = DICOMClient(
                configuration: .init(callingAETitle: "MODALITY"), logger: TestSupport.logger("px.test.client"))
            let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "ARCHIVE")
            let (wrongType, noData, echo) = try await client.withAssociation(
                to: peer, proposing: [.storageCommitmentReporter, .verification]
            ) { association in
                let context = try association.context(for: StorageCommitment.sopClassUID, "N-ACTION")
                let action = NActionRQ(
                    messageID: 11, requestedSOPClassUID: StorageCommitment.sopClassUID,
                    requestedSOPInstanceUID: StorageCommitment.sopInstanceUID, actionTypeID: 2, hasDataSet: false)
                try await association.connection.send(
                    .nActionRQ(action), presentationContextID: context.id, dataSet: nil)
                let (first, _) = try await association.response(to: 11, waitingFor: "the N-ACTION-RSP")
                var bare = action
                bare.messageID = 12
                bare.actionTypeID = 1
                try await association.connection.send(.nActionRQ(bare), presentationContextID: context.id, dataSet: nil)
                let (second, _) = try await association.response(to: 12, waitingFor: "the N-ACTION-RSP")
                return (first.status, second.status, try await association.echo())
            }
            #expect(wrongType?.code == 0x0123)
            #expect(noData == .processingFailure)
            #expect(echo == .success)
        }
    }
}
