import AsyncAlgorithms
import DICOMData
import DICOMProtocol
import NIOCore
import Synchronization

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

    /// Runs `body` with the matches of a C-FIND, relayed from the provider's sequence one at a time: the
    /// provider is asked for the next match only once `body` has taken the last one (an
    /// ``AsyncThrowingChannel`` hands each over), so a provider that streams (px-serve's index) holds one match
    /// whatever the requestor's reading speed (issue 34: an unbounded relay buffered every response of a
    /// 30,000-instance listing). The relay fails with ``Expired`` when the provider's own time (the time `body`
    /// waited for it) passes `timeout`: a slow requestor is not the provider's fault. When `body` ends, however
    /// it ends, the provider's task is cancelled.
    static func relay<T>(
        _ what: String, timeout: TimeAmount,
        _ source: @escaping @Sendable () async throws -> AsyncThrowingStream<DataSet, any Error>,
        _ body: (AsyncThrowingChannel<DataSet, any Error>) async throws -> T
    ) async throws -> T {
        let channel = AsyncThrowingChannel<DataSet, any Error>()
        let budget = ProviderBudget(timeout: timeout)
        let producer = Task {
            do {
                for try await match in try await source() {
                    let start = budget.handingOver()
                    await channel.send(match)
                    budget.handedOver(since: start)
                    if Task.isCancelled { return }
                }
                channel.finish()
            } catch {
                channel.fail(error)
            }
        }
        let timer = Task {
            // Wakes at the deadline: fails the relay unless the deadline moved on meanwhile or a match is
            // being handed over (then the requestor is the one being waited for, until the hand-over ends).
            var handOverEnds = budget.handOverEnds.makeAsyncIterator()
            while let wait = budget.nextWait() {
                switch wait {
                case .until(let deadline):
                    do {
                        try await ContinuousClock().sleep(until: deadline)
                    } catch {
                        return
                    }
                case .handOver:
                    // nil: the timer was cancelled (the C-FIND ended).
                    guard await handOverEnds.next() != nil else { return }
                }
            }
            producer.cancel()
            channel.fail(Expired(what: what, timeout: timeout))
        }
        defer {
            producer.cancel()
            timer.cancel()
            channel.finish()
        }
        return try await body(channel)
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

/// The provider's time left in ``ProviderDeadline/relay(_:timeout:_:_:)``: a deadline pushed back by every wait
/// for the requestor to take a match.
private final class ProviderBudget: Sendable {
    /// What the timer waits for next.
    enum Wait {
        /// The provider's deadline.
        case until(ContinuousClock.Instant)
        /// The end of the hand-over in progress (an element of ``handOverEnds``).
        case handOver
    }

    private let state: Mutex<(deadline: ContinuousClock.Instant, handingOver: Bool)>
    /// An element each time a hand-over ends; the newest one is kept for a timer that was not waiting yet.
    let handOverEnds: AsyncStream<Void>
    private let handOverEnded: AsyncStream<Void>.Continuation

    init(timeout: TimeAmount) {
        state = Mutex((ContinuousClock.now + .nanoseconds(timeout.nanoseconds), false))
        (handOverEnds, handOverEnded) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    deinit {
        handOverEnded.finish()
    }

    /// A match is being handed over from now (returned).
    func handingOver() -> ContinuousClock.Instant {
        state.withLock { $0.handingOver = true }
        return ContinuousClock.now
    }

    /// The match handed over since `start` was taken: the wait is not the provider's.
    func handedOver(since start: ContinuousClock.Instant) {
        let waited = ContinuousClock.now - start
        state.withLock {
            $0.deadline += waited
            $0.handingOver = false
        }
        handOverEnded.yield()
    }

    /// What to wait for before looking again, `nil` when the provider's time is up.
    func nextWait() -> Wait? {
        let now = ContinuousClock.now
        return state.withLock { state in
            if state.handingOver { return .handOver }
            return now >= state.deadline ? nil : .until(state.deadline)
        }
    }
}
