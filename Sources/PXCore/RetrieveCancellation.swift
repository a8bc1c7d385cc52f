import Synchronization

/// A request to cancel the C-MOVE or C-GET in progress (PS3.7 §9.3.2.3, §9.3.3.3: C-CANCEL-RQ), made by
/// px-move and px-get when they get SIGINT or SIGTERM, and seen by the backend that runs the retrieve: the
/// native backend sends C-CANCEL-RQ on the association and goes on reading until the final response; the
/// DCMTK backend forwards the signal to its tool.
///
/// The command sets it for its retrieve as a task-local value (``current``), so the backends' `move` and `get`
/// keep their signatures.
public final class RetrieveCancellation: Sendable {
    /// The cancellation of the retrieve the current task runs, if any.
    @TaskLocal public static var current: RetrieveCancellation?

    private struct State {
        var signal: Int32?
        var handlers: [@Sendable (Int32) -> Void] = []
    }

    private let state = Mutex(State())
    /// How long (seconds) the retrieve may take to end after the request: then the native backend aborts the
    /// association, the DCMTK backend kills its tool.
    public let grace: Double

    public init(grace: Double = 5) {
        self.grace = grace
    }

    /// The signal that requested the cancellation (SIGINT, SIGTERM), or `nil` while none did.
    public var requestedSignal: Int32? { state.withLock { $0.signal } }

    /// Requests the cancellation: every handler runs once, with `signal`. Later requests do nothing.
    public func request(signal: Int32) {
        let handlers: [@Sendable (Int32) -> Void] = state.withLock { state in
            guard state.signal == nil else { return [] }
            state.signal = signal
            return state.handlers
        }
        for handler in handlers { handler(signal) }
    }

    /// Runs `handler` when the cancellation is requested (at once when it already was).
    public func onRequest(_ handler: @escaping @Sendable (Int32) -> Void) {
        let signal: Int32? = state.withLock { state in
            if state.signal == nil { state.handlers.append(handler) }
            return state.signal
        }
        if let signal { handler(signal) }
    }
}
