import DICOMData
import DICOMNetwork
import PXTestSupport
import Testing

/// The root cause of a flake seen on a fresh clone's first `make test`: "pynetdicom's C-ECHO to our server ...
/// a wrong called AE title is rejected" recorded "aborted".
///
/// Our acceptor sends the A-ASSOCIATE-RJ and waits in Sta13 for the requestor to close (PS3.8 AE-8, AR-5).
/// pynetdicom 3.0.4's requestor received that RJ (its log shows the decoded PDU) and closed the connection
/// (AE-4) on its DUL thread; its ACSE thread, descheduled on a loaded machine, then found the socket closed
/// and aborted instead of reading the RJ. scripts/pynetdicom-scu.py now reports what the peer answered.
@Suite("A-ASSOCIATE-RJ as the requestor sees it", .serialized, .timeLimit(.minutes(10)))
struct AssociationRejectTests {
    @Test(
        "a rejection reads as rejected even when pynetdicom's ACSE thread runs after its DUL closed the connection",
        .tags(.integration), .integrationTier)
    func rejectionSurvivesALateACSEThread() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(aeTitle: "PXSCP", directory: dir) { server in
                // --delay-acse holds pynetdicom's ACSE thread after it queued the A-ASSOCIATE-RQ: the
                // interleaving a loaded machine produced by chance, every time.
                let wrong = try await PynetdicomInteropTests.scu([
                    "echo", "127.0.0.1", "\(server.localPort)", "--aec", "WRONG", "--delay-acse", "0.5",
                ])
                #expect(wrong.status == 1)
                #expect(wrong.json["association"]?.stringValue == "rejected", "\(wrong.json.serialized())")
            }
        }
    }
}
