import DICOMData
import PXCore
import Testing

@testable import PXCommands

/// px-get over WADO-RS records each study as its retrieval ends (issue 34: no run keeps every instance): the
/// report still lists the targets, and spools the gets, in the order they were asked, and a retrieval that
/// fails part way loses none of the studies stored before it.
struct RetrieveReportOrderTests {
    static let targets = (0..<3).map { RetrieveSelection(studyInstanceUID: "1.2.3.\($0)") }

    static func result(_ index: Int, instances: Int) throws -> GetResult {
        let request = try GetRequest(studyInstanceUID: "1.2.3.\(index)", root: "/tmp/unused")
        let stored = (0..<instances).map { n in
            ReceivedInstance(
                path: "/tmp/unused/\(index)/\(n).dcm", sopClassUID: "1.2.840.10008.5.1.4.1.1.7",
                sopInstanceUID: "1.2.3.\(index).\(n)", studyInstanceUID: "1.2.3.\(index)",
                seriesInstanceUID: "1.2.3.\(index).9", callingAETitle: nil, bytes: 10,
                transferSyntaxUID: "1.2.840.10008.1.2.1")
        }
        var result = GetResult(
            request: request, status: .success, remaining: 0, completed: instances, failed: 0, warning: 0,
            responses: 1, instances: stored, storeFailures: [])
        result.operation = "WADO-RS"
        return result
    }

    /// The spooled `gets` as the envelope streams them.
    static func spooled(_ spool: JSONArraySpool) -> [JSONValue] {
        let collected = CommandRunnerTests.Collected()
        var output = CommandOutput(pretty: false, command: ["px-get"], sink: collected.sink)
        output.spool = spool
        output.finish(backend: "native", data: .object([JSONMember("gets", .array([]))]), error: nil)
        return collected.json?["data"]?["gets"]?.arrayValue ?? []
    }

    @Test func resultsOutOfOrderAreReportedInTargetOrder() async throws {
        let spool = try JSONArraySpool(pretty: false, member: "gets")
        spool.complete()
        var run = RetrieveRun<GetResult>(spool: spool)
        let results = try (0..<3).map { try Self.result($0, instances: $0 + 1) }
        let failure = await RetrieveLoop.concurrently(Self.targets, into: &run, operation: "WADO-RS") { _, record in
            for index in [2, 0, 1] { await record(index, results[index]) }
        }
        #expect(failure == nil)
        #expect(run.targets.map(\.studyInstanceUID) == ["1.2.3.0", "1.2.3.1", "1.2.3.2"])
        #expect(run.targets.map(\.status) == ["success", "success", "success"])
        #expect(run.results.isEmpty)
        #expect(run.completed == 6 && run.instances == 6)
        let gets = Self.spooled(spool)
        #expect(gets.map { $0["StudyInstanceUID"]?.stringValue } == ["1.2.3.0", "1.2.3.1", "1.2.3.2"])
        #expect(gets.map { $0["instances"]?.arrayValue?.count } == [1, 2, 3])
    }

    @Test func aFailureKeepsTheStudiesDoneBeforeIt() async throws {
        var run = RetrieveRun<GetResult>()
        let done = try Self.result(1, instances: 2)
        let failure = await RetrieveLoop.concurrently(Self.targets, into: &run, operation: "WADO-RS") { _, record in
            await record(1, done)
            throw PXError.timeout("WADO-RS")
        }
        #expect(failure?.code == PXError.timeout("WADO-RS").code)
        #expect(run.targets.map(\.status) == ["failed", "success", "failed"])
        #expect(run.targets.map(\.completed) == [0, 2, 0])
        #expect(run.results.count == 1 && run.instances == 2)
    }

    @Test func aTargetWithoutAResultIsFailedNotLost() async throws {
        var run = RetrieveRun<GetResult>()
        let only = try Self.result(0, instances: 1)
        let failure = await RetrieveLoop.concurrently(Self.targets, into: &run, operation: "WADO-RS") { _, record in
            await record(0, only)
        }
        #expect(failure?.code == .invalidResponse)
        #expect(run.targets.map(\.status) == ["success", "failed", "failed"])
    }
}
