import Synchronization

/// The queue between a receiver's producers (association tasks, the series timer) and the one consumer
/// that calls `onEvent`, in order.
///
/// Unlike `AsyncStream`, reading is not ended by cancelling the consumer: a receiver that is being
/// stopped (cancelled) still reports the instances its associations finish during the shutdown grace.
/// ``next()`` returns `nil` only after ``finish()`` and once every queued event was read.
public final class ListenEventChannel: Sendable {
    private struct State {
        var buffer: [ListenEvent] = []
        var head = 0
        var finished = false
        var waiter: CheckedContinuation<ListenEvent?, Never>?
    }
    private let state = Mutex(State())

    public init() {}

    /// Queues an event (dropped after ``finish()``).
    public func yield(_ event: ListenEvent) {
        let waiter: CheckedContinuation<ListenEvent?, Never>? = state.withLock { state in
            guard !state.finished else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.buffer.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// No more events: the consumer reads what is queued, then `nil`.
    public func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The next event, waiting for one; `nil` once finished and drained. One consumer only.
    public func next() async -> ListenEvent? {
        await withCheckedContinuation { (continuation: CheckedContinuation<ListenEvent?, Never>) in
            let immediate: ListenEvent?? = state.withLock { state in
                if state.head < state.buffer.count {
                    let event = state.buffer[state.head]
                    state.head += 1
                    if state.head > 1024 && state.head * 2 > state.buffer.count {
                        state.buffer.removeFirst(state.head)
                        state.head = 0
                    }
                    return .some(event)
                }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }
}
