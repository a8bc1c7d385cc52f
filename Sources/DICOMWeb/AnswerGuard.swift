import AsyncHTTPClient
import NIOCore
import PXCore
import Synchronization

/// The limits one DICOMweb answer is read under (``Timeouts``), enforced while its body streams in.
///
/// async-http-client bounds the connection (connect timeout), each silence (read timeout, which restarts
/// with every byte) and the wait for the response head (the deadline passed to `execute`); once the head
/// is there, nothing bounds the body. A server that sends one byte a second, or an endless multipart
/// answer, would hold px for ever. Here a watchdog task stops the answer when:
/// - the request's deadline passes (``Timeouts/deadline``, counted from the first attempt);
/// - px has waited ``Timeouts/dimse`` for a byte (the read timeout, named here too);
/// - fewer than ``Timeouts/minimumTransferRate`` bytes a second arrived over ``Timeouts/transferRateWindow``
///   seconds of waiting. Time during which px itself is busy with what arrived (writing a part, placing an
///   instance) does not count: only the server's time does, as px-listen's guard counts a DIMSE peer's.
///
/// Stopping drops the body's iterator, which makes async-http-client close the connection. The body is
/// handed over one chunk at a time (``BodyHandoff``), so at most two chunks are in memory whatever the
/// server sends.
struct AnswerGuard: Sendable {
    let timeouts: Timeouts
    /// When the request must be complete; `nil` for no deadline.
    let deadline: ContinuousClock.Instant?
    /// The request, for the errors' messages (no credentials: they go in headers).
    let url: String

    init(timeouts: Timeouts, url: String, started: ContinuousClock.Instant = .now) {
        self.timeouts = timeouts
        self.deadline = timeouts.deadline.map { started + Self.duration($0) }
        self.url = url
    }

    static func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// Hands each chunk of `response`'s body to `consume`, in the calling task, under the limits.
    ///
    /// `consume` returns `false` to stop reading (the rest of the answer is not wanted: the connection is
    /// closed). - Throws: ``PXError/timeout(_:seconds:detail:)`` when a limit is exceeded, what
    /// `consume` throws, or the transport's error.
    func stream(
        _ response: HTTPClientResponse, _ consume: (ByteBuffer) async throws -> Bool
    ) async throws {
        let handoff = BodyHandoff()
        let meter = SharedMeter()
        let limits = self
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    var iterator = response.body.makeAsyncIterator()
                    while true {
                        meter.withLock { $0.waiting(true, now: .now) }
                        guard let chunk = try await iterator.next() else { break }
                        meter.withLock {
                            $0.waiting(false, now: .now)
                            $0.received(chunk.readableBytes, now: .now)
                        }
                        try await handoff.put(chunk)
                    }
                    handoff.finish()
                } catch {
                    handoff.fail(error)
                }
            }
            group.addTask {
                let tick = Self.duration(min(0.25, max(0.01, limits.timeouts.transferRateWindow / 8)))
                while !Task.isCancelled {
                    do { try await Task.sleep(for: tick) } catch { return }
                    if let violation = meter.withLock({ limits.violation(of: &$0, now: .now) }) {
                        handoff.fail(violation)
                        return
                    }
                }
            }
            defer {
                handoff.fail(CancellationError())
                group.cancelAll()
            }
            while let chunk = try await handoff.take() {
                guard try await consume(chunk) else { break }
            }
        }
    }

    /// The limit `meter` shows exceeded at `now`, as the error to report.
    func violation(of meter: inout RateMeter, now: ContinuousClock.Instant) -> PXError? {
        meter.waiting(meter.isWaiting, now: now)
        if let deadline, now >= deadline {
            return .timeout("deadline", seconds: timeouts.deadline, detail: url)
        }
        if meter.isWaiting, now - meter.lastProgress >= Self.duration(timeouts.dimse) {
            return .timeout("read", seconds: timeouts.dimse, detail: url)
        }
        guard timeouts.minimumTransferRate > 0 else { return nil }
        let window = Self.duration(timeouts.transferRateWindow)
        guard meter.activeTime >= window else { return nil }
        let needed = Double(timeouts.minimumTransferRate) * timeouts.transferRateWindow
        if Double(meter.windowBytes) < needed {
            return .timeout(
                "transfer rate", seconds: timeouts.transferRateWindow,
                detail:
                    "\(url) sent \(meter.windowBytes) bytes in \(Timeouts.format(timeouts.transferRateWindow)) s, "
                    + "below the minimum transfer rate of \(timeouts.minimumTransferRate) bytes/s (--min-transfer-rate)"
            )
        }
        meter.activeTime = .zero
        meter.windowBytes = 0
        return nil
    }
}

/// A ``RateMeter`` the reading task and the watchdog share.
final class SharedMeter: Sendable {
    private let meter = Mutex(RateMeter(now: .now))

    func withLock<T: Sendable>(_ body: (inout RateMeter) -> T) -> T {
        meter.withLock { body(&$0) }
    }
}

/// The bytes of one answer and the time px spent waiting for them.
struct RateMeter: Sendable {
    /// Whether the reader is waiting for the server (not handing a chunk over).
    private(set) var isWaiting = false
    /// The last byte, or the start of the wait for the first one.
    private(set) var lastProgress: ContinuousClock.Instant
    /// Time spent waiting for the server since the window started.
    var activeTime: Duration = .zero
    /// Bytes received since the window started.
    var windowBytes = 0
    private var lastAccounted: ContinuousClock.Instant

    init(now: ContinuousClock.Instant) {
        lastProgress = now
        lastAccounted = now
    }

    /// Accounts the time since the last call, then notes whether px now waits for the server.
    mutating func waiting(_ waiting: Bool, now: ContinuousClock.Instant) {
        if isWaiting { activeTime += now - lastAccounted }
        lastAccounted = now
        if waiting && !isWaiting { lastProgress = now }
        isWaiting = waiting
    }

    mutating func received(_ count: Int, now: ContinuousClock.Instant) {
        windowBytes += count
        if count > 0 { lastProgress = now }
    }
}

/// A one-chunk hand-off between the task that reads an HTTP body and the task that consumes it: the reader
/// waits until the previous chunk was taken (back-pressure reaches the server through async-http-client's
/// own), and a failure (a limit exceeded, the consumer gone) wakes both sides.
final class BodyHandoff: Sendable {
    private struct State {
        var chunk: ByteBuffer?
        var finished = false
        var failure: (any Error)?
        var consumer: CheckedContinuation<ByteBuffer?, any Error>?
        var producer: CheckedContinuation<Void, any Error>?
    }
    private let state = Mutex(State())

    /// Gives `chunk` to the consumer; returns once it has it or holds it.
    func put(_ chunk: ByteBuffer) async throws {
        try await withCheckedThrowingContinuation { (producer: CheckedContinuation<Void, any Error>) in
            enum Action {
                case fail(any Error)
                case hand(CheckedContinuation<ByteBuffer?, any Error>)
                case wait
            }
            let action = state.withLock { state -> Action in
                if let failure = state.failure { return .fail(failure) }
                if let consumer = state.consumer {
                    state.consumer = nil
                    return .hand(consumer)
                }
                state.chunk = chunk
                state.producer = producer
                return .wait
            }
            switch action {
            case .fail(let error): producer.resume(throwing: error)
            case .hand(let consumer):
                consumer.resume(returning: chunk)
                producer.resume()
            case .wait: break
            }
        }
    }

    /// The next chunk, `nil` at the end of the body.
    /// - Throws: the failure that ended the body.
    func take() async throws -> ByteBuffer? {
        try await withCheckedThrowingContinuation { (consumer: CheckedContinuation<ByteBuffer?, any Error>) in
            enum Action {
                case chunk(ByteBuffer, CheckedContinuation<Void, any Error>?)
                case fail(any Error)
                case end
                case wait
            }
            let action = state.withLock { state -> Action in
                if let failure = state.failure { return .fail(failure) }
                if let chunk = state.chunk {
                    state.chunk = nil
                    defer { state.producer = nil }
                    return .chunk(chunk, state.producer)
                }
                if state.finished { return .end }
                state.consumer = consumer
                return .wait
            }
            switch action {
            case .chunk(let chunk, let producer):
                consumer.resume(returning: chunk)
                producer?.resume()
            case .fail(let error): consumer.resume(throwing: error)
            case .end: consumer.resume(returning: nil)
            case .wait: break
            }
        }
    }

    /// The body ended.
    func finish() {
        let consumer = state.withLock { state in
            state.finished = true
            defer { state.consumer = nil }
            return state.consumer
        }
        consumer?.resume(returning: nil)
    }

    /// Ends the hand-off with `error` (the first failure wins); a waiting side is woken with it.
    func fail(_ error: any Error) {
        let (consumer, producer, failure) = state.withLock { state in
            if state.failure == nil { state.failure = error }
            defer {
                state.consumer = nil
                state.producer = nil
            }
            return (state.consumer, state.producer, state.failure ?? error)
        }
        consumer?.resume(throwing: failure)
        producer?.resume(throwing: failure)
    }
}
