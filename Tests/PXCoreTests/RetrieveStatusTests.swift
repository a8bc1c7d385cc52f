import DICOMData
import Testing

@testable import PXCore

/// A C-GET or C-MOVE with failed or warning sub-operations is never a success (issue 20, PS3.4 §C.4.2.1.5,
/// §C.4.3.1.5).
@Suite(.timeLimit(.minutes(1))) struct RetrieveStatusTests {
    static func get(failed: Int, warning: Int, failedUIDs: [String] = []) throws -> GetResult {
        let request = try GetRequest(studyInstanceUID: "1.2.3", root: "/tmp/px-unused")
        var result = GetResult(
            request: request, status: DIMSEStatus(code: failed + warning > 0 ? 0xB000 : 0x0000, service: .get),
            remaining: 0, completed: 3, failed: failed, warning: warning, responses: 2, instances: [],
            storeFailures: [])
        result.failedSOPInstanceUIDs = failedUIDs
        return result
    }

    @Test func completeGetIsNoFailure() throws {
        #expect(try Self.get(failed: 0, warning: 0).subOperationFailure == nil)
    }

    @Test func failedSubOperationsArePartialFailure() throws {
        let failure = try #require(
            try Self.get(failed: 3, warning: 0, failedUIDs: ["1.2.3.4", "1.2.3.5"]).subOperationFailure)
        #expect(failure.code == .partialFailure)
        #expect(failure.details["failed"] == "3")
        #expect(failure.details["total"] == "6")
        #expect(failure.details["failedSOPInstanceUIDs"] == "1.2.3.4\\1.2.3.5")
        let json = PXOutput.json(try Self.get(failed: 3, warning: 0, failedUIDs: ["1.2.3.4"]))
        #expect(json["failedSOPInstanceUIDs"]?.arrayValue?.count == 1)
    }

    @Test func warningSubOperationsArePartialFailure() throws {
        #expect(try Self.get(failed: 0, warning: 1).subOperationFailure?.code == .partialFailure)
        let move = MoveResult(
            request: try MoveRequest(destination: "DEST", studyInstanceUID: "1.2.3"),
            status: DIMSEStatus(code: 0xB000, service: .move), completed: 1, failed: 0, warning: 1, responses: 2)
        #expect(move.subOperationFailure?.code == .partialFailure)
    }
}
