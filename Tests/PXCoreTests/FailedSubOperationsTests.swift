import DICOMData
import PXCore
import Testing

/// Issue 32: a sub-operation of a C-GET px refused is counted once, whether the peer counts it, names it, or
/// (as some peers do) leaves it out; an instance px lost after the peer was told it was stored is added.
/// Pure values, no peer.
struct FailedSubOperationsTests {
    static let mismatch = PXError.sopInstanceMismatch(request: "1.2.3.5", dataSet: "1.2.3.9")

    /// A C-GET of a study with the peer's final counts and px's store failures.
    static func get(
        completed: Int, failed: Int, named: [String] = [], storeFailures: [ListenEvent] = []
    ) throws -> GetResult {
        var result = GetResult(
            request: try GetRequest(studyInstanceUID: "1.2", root: "/r"),
            status: failed > 0 ? DIMSEStatus(code: 0xB000, service: .get) : .success, remaining: 0,
            completed: completed, failed: failed, warning: 0, responses: 2, instances: [],
            storeFailures: storeFailures)
        result.failedSOPInstanceUIDs = named
        return result
    }

    /// px answered 0xA900 for 1.2.3.5 (the data set holds another SOP Instance UID).
    static let refused = ListenEvent.storeFailed(
        path: nil, sopInstanceUID: "1.2.3.5", error: mismatch, status: .dataSetDoesNotMatchSOPClass)

    @Test func thePeerCountsWhatPXRefused() throws {
        // Two sub-operations: one stored, one px refused, which the peer counts as failed.
        let result = try Self.get(completed: 1, failed: 1, storeFailures: [Self.refused])
        #expect(result.failedCount == 1)
        let error = try #require(result.subOperationFailure)
        #expect(error.code == .partialFailure)
        #expect(error.message.hasPrefix("C-GET: 1 of 2 sub-operations failed"), "\(error.message)")
        #expect(error.details["failed"] == "1")
        #expect(error.details["total"] == "2")
        // The refusal names the instance, the status px answered and why, in the error itself.
        let notStored = try #require(error.details["notStored"])
        #expect(notStored.contains("1.2.3.5") && notStored.contains("0xa900"), "\(notStored)")
        #expect(notStored.contains(Self.mismatch.message), "\(notStored)")
        #expect(PXOutput.json(result)["failed"] == .integer(1))
    }

    @Test func thePeerNamesTheFailedInstances() throws {
        // No count, but the Failed SOP Instance UID List names two.
        #expect(try Self.get(completed: 1, failed: 0, named: ["1.2.3.5", "1.2.3.6"]).failedCount == 2)
        // The count and the list agree, and px refused one of them: still two.
        let both = try Self.get(completed: 0, failed: 2, named: ["1.2.3.5", "1.2.3.6"], storeFailures: [Self.refused])
        #expect(both.failedCount == 2)
        #expect(both.subOperationFailure?.details["failedSOPInstanceUIDs"] == "1.2.3.5\\1.2.3.6")
    }

    @Test func thePeerCountsNoneOfWhatPXRefused() throws {
        // Some peers report 0 failed (and the refused one as completed): px's refusal is still one failure.
        let result = try Self.get(completed: 2, failed: 0, storeFailures: [Self.refused])
        #expect(result.failedCount == 1)
        #expect(!result.isComplete)
        // Two refusals, the peer counts one of them.
        let second = ListenEvent.storeFailed(
            path: nil, sopInstanceUID: "1.2.3.6", error: .io("disk full"), status: .outOfResources)
        #expect(try Self.get(completed: 0, failed: 1, storeFailures: [Self.refused, second]).failedCount == 2)
    }

    @Test func anInstanceLostAfterTheAnswerIsAdded() throws {
        // getscu answered success, then px could not place the file: the peer counts it completed.
        let lost = ListenEvent.storeFailed(path: "/r/x.dcm", sopInstanceUID: nil, error: .io("disk full"))
        #expect(try Self.get(completed: 2, failed: 1, storeFailures: [lost]).failedCount == 2)
        #expect(try Self.get(completed: 2, failed: 1, storeFailures: [lost, Self.refused]).failedCount == 2)
        #expect(try Self.get(completed: 3, failed: 0, storeFailures: [lost]).failedCount == 1)
    }

    @Test func nothingFailed() throws {
        let result = try Self.get(completed: 3, failed: 0)
        #expect(result.failedCount == 0)
        #expect(result.isComplete && result.subOperationFailure == nil)
    }

    @Test func aMoveCountsThePeerOnly() throws {
        var move = MoveResult(
            request: try MoveRequest(destination: "DEST", studyInstanceUID: "1.2"), status: .success, completed: 1,
            failed: 1, warning: 0, responses: 2)
        #expect(move.failedCount == 1)
        move.failedSOPInstanceUIDs = ["1.2.3.5", "1.2.3.6"]
        #expect(move.failedCount == 2)
        #expect(move.subOperationFailure?.details["failed"] == "2")
    }

    @Test func theFormula() {
        #expect(FailedSubOperations.count(peerFailed: 1, peerNamed: 0, refused: 1) == 1)
        #expect(FailedSubOperations.count(peerFailed: 0, peerNamed: 0, refused: 1) == 1)
        #expect(FailedSubOperations.count(peerFailed: 0, peerNamed: 3, refused: 1) == 3)
        #expect(FailedSubOperations.count(peerFailed: 2, peerNamed: 1, refused: 0, lost: 1) == 3)
    }
}
