import AsyncAlgorithms
import DICOMData
import NIOCore
import Synchronization
import Testing

@testable import DICOMNetwork

/// ``ProviderDeadline/relay(_:timeout:_:_:)``: the provider's timeout counts the provider's own time only.
@Suite("C-FIND relay's provider budget", .timeLimit(.minutes(1)))
struct ProviderRelayTests {
    static func match(_ n: Int) -> DataSet {
        var dataSet = DataSet()
        dataSet.set(.patientID, vr: .LO, string: "P\(n)")
        return dataSet
    }

    @Test("a requestor slower than the timeout takes every match: waiting for it is not the provider's time")
    func slowRequestor() async throws {
        let threeMatches: @Sendable () async throws -> AsyncThrowingStream<DataSet, any Error> = {
            AsyncThrowingStream { continuation in
                for n in 0..<3 { continuation.yield(Self.match(n)) }
                continuation.finish()
            }
        }
        let taken = try await ProviderDeadline.relay("C-FIND", timeout: .milliseconds(200), threeMatches) { channel in
            var ids: [String] = []
            for try await match in channel {
                // The requestor being slow is the point: 3 x 150 ms is well past the provider's 200 ms.
                try await Task.sleep(for: .milliseconds(150))
                ids.append(match.string(.patientID) ?? "")
            }
            return ids
        }
        #expect(taken == ["P0", "P1", "P2"])
    }

    @Test("a provider that stalls after a slow hand-over still expires")
    func stallAfterHandOver() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        // One match, then a provider stuck for an hour (until cancelled).
        let stuckAfterOne: @Sendable () async throws -> AsyncThrowingStream<DataSet, any Error> = {
            let sent = Mutex(false)
            return AsyncThrowingStream {
                if !sent.withLock({ $0 }) {
                    sent.withLock { $0 = true }
                    return Self.match(0)
                }
                try await Task.sleep(for: .seconds(3600))
                return nil
            }
        }
        await #expect(throws: ProviderDeadline.Expired.self) {
            try await ProviderDeadline.relay("C-FIND", timeout: .milliseconds(300), stuckAfterOne) { channel in
                var iterator = channel.makeAsyncIterator()
                _ = try await iterator.next()
                try await Task.sleep(for: .milliseconds(400))
                _ = try await iterator.next()
            }
        }
        // Expired by the budget, not by the suite's time limit.
        #expect(clock.now - start < .seconds(30))
    }
}
