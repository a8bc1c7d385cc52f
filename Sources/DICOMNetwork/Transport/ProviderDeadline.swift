import DICOMData
import DICOMProtocol
import NIOCore

/// Bounds the time a ``QueryRetrieveProvider`` may take, so that a stuck provider gives the requestor a failure
/// status instead of a silent association: the provider's work runs in its own task, which is cancelled (and
/// abandoned, if it ignores cancellation) when the deadline passes.
enum ProviderDeadline {
    /// The provider did not finish in time.
    struct Expired: Error, CustomStringConvertible {
        var what: String
        var timeout: TimeAmount
        var description: String { "\(self.what) took longer than \(self.timeout.nanoseconds / 1_000_000) ms" }
    }

    /// The result of `operation`, or ``Expired`` after `timeout`.
    static func run<T: Sendable>(
        _ what: String, timeout: TimeAmount, _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let stream: AsyncThrowingStream<T, any Error> = bounded(what, timeout: timeout) { continuation in
            continuation.yield(try await operation())
        }
        for try await value in stream {
            return value
        }
        throw CancellationError()
    }

    /// The matches of a C-FIND, relayed from the provider's sequence; the relay fails with ``Expired`` when the
    /// whole sequence has not ended after `timeout`. Ending the iteration early cancels the provider's task.
    static func relay(
        _ what: String, timeout: TimeAmount,
        _ source: @escaping @Sendable () async throws -> AsyncThrowingStream<DataSet, any Error>
    ) -> AsyncThrowingStream<DataSet, any Error> {
        bounded(what, timeout: timeout) { continuation in
            for try await match in try await source() {
                continuation.yield(match)
            }
        }
    }

    /// A stream `produce` feeds from its own task, finished when `produce` returns or throws, failed with
    /// ``Expired`` after `timeout`. Its end (finished, failed, or the consumer gone or cancelled) cancels both
    /// the producing task and the timer.
    private static func bounded<T: Sendable>(
        _ what: String, timeout: TimeAmount,
        _ produce: @escaping @Sendable (AsyncThrowingStream<T, any Error>.Continuation) async throws -> Void
    ) -> AsyncThrowingStream<T, any Error> {
        let (stream, continuation) = AsyncThrowingStream<T, any Error>.makeStream()
        let producer = Task {
            do {
                try await produce(continuation)
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let timer = Task {
            try await Task.sleep(for: .nanoseconds(timeout.nanoseconds))
            continuation.finish(throwing: Expired(what: what, timeout: timeout))
        }
        continuation.onTermination = { _ in
            producer.cancel()
            timer.cancel()
        }
        return stream
    }
}
