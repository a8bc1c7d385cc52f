import DICOMProtocol
import Logging
import NIOCore
import Synchronization

/// What one connection to a ``DICOMServer`` may cost before it is closed: limits a hostile or broken peer
/// cannot reset by sending a byte now and then (issue 14).
///
/// The idle timeout (``DICOMServer/Configuration/idleTimeout``) restarts with every byte; these do not.
public struct ConnectionLimits: Sendable, Hashable {
    /// While a PDU or a DIMSE message is being received (started, not complete), the peer must send at least
    /// this many bytes per second, averaged over ``transferRateWindow``; 0 disables the check. Time during
    /// which this side is not reading (back-pressure while an instance is stored) does not count.
    public var minimumTransferRate: Int
    /// The window over which ``minimumTransferRate`` is measured: a trickling peer is aborted after at most
    /// about this long (plus a quarter of it).
    public var transferRateWindow: TimeAmount
    /// A write that makes no progress for this long (a peer that does not read what it is sent) closes the
    /// connection.
    public var writeTimeout: TimeAmount
    /// Connections that have not yet sent a complete A-ASSOCIATE-RQ; when one more arrives, the oldest of
    /// them is closed (so idle sockets cannot exhaust the file descriptors or lock peers out).
    public var maximumPendingConnections: Int
    /// The largest A-ASSOCIATE-RQ accepted (PS3.8 §9.3.2): what a connection may make this side buffer before
    /// negotiation. A real request, 128 presentation contexts with user identity, is well under 64 KiB.
    public var maximumAssociationRequestLength: Int

    public init(
        minimumTransferRate: Int = 1024, transferRateWindow: TimeAmount = .seconds(20),
        writeTimeout: TimeAmount = .seconds(60),
        maximumPendingConnections: Int = 64, maximumAssociationRequestLength: Int = 64 * 1024
    ) {
        self.minimumTransferRate = minimumTransferRate
        self.transferRateWindow = transferRateWindow
        self.writeTimeout = writeTimeout
        self.maximumPendingConnections = maximumPendingConnections
        self.maximumAssociationRequestLength = maximumAssociationRequestLength
    }
}

/// The connections of a server that have not yet sent a complete A-ASSOCIATE-RQ, oldest first
/// (``ConnectionLimits/maximumPendingConnections``).
final class PendingConnections: Sendable {
    private struct State {
        var next: UInt64 = 0
        var pending: [ObjectIdentifier: (order: UInt64, channel: any Channel)] = [:]
    }
    private let state = Mutex(State())
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Registers a new connection; returns the oldest pending ones to close to make room for it.
    func admit(_ channel: any Channel) -> [any Channel] {
        self.state.withLock { state in
            var evicted: [any Channel] = []
            while state.pending.count >= max(self.limit, 1),
                let oldest = state.pending.min(by: { $0.value.order < $1.value.order })
            {
                state.pending.removeValue(forKey: oldest.key)
                evicted.append(oldest.value.channel)
            }
            state.pending[ObjectIdentifier(channel)] = (state.next, channel)
            state.next += 1
            return evicted
        }
    }

    /// The connection sent its A-ASSOCIATE-RQ, or closed.
    func remove(_ channel: any Channel) {
        _ = self.state.withLock { $0.pending.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    var count: Int { self.state.withLock { $0.pending.count } }
}

/// Watches a server connection's raw bytes, before the PDU decoder, and enforces ``ConnectionLimits``.
///
/// It follows the PDU framing (PS3.8 §9.3.1: type, reserved, 32-bit length) and, inside P-DATA-TF, the PDV
/// items and their message control headers (PS3.8 §9.3.5.1, Annex E.2), so it knows without decoding whether
/// a PDU or a DIMSE message is in progress:
/// - the first PDU must be an A-ASSOCIATE-RQ no longer than ``ConnectionLimits/maximumAssociationRequestLength``,
///   checked on its header, before its body is buffered; once it is complete the connection leaves
///   ``PendingConnections``;
/// - while a PDU or a message is in progress the peer must keep ``ConnectionLimits/minimumTransferRate``;
///   a slower one is aborted (PS3.8 §9.2 AA-1, by the service user) and the association task gets a
///   ``TimeoutSignal`` (`.dimse`);
/// - a refused or aborted connection gets its A-ABORT from this handler, on the event loop, and is closed once
///   it is written: it does not wait for the association task to be scheduled;
/// - writes that make no progress for ``ConnectionLimits/writeTimeout`` close the connection.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let limits: ConnectionLimits
    private let pending: PendingConnections?
    private let logger: Logger

    // Framing, as the bytes pass.
    private var pduHeader: [UInt8] = []
    private var pduType: UInt8 = 0
    private var pduRemaining = 0
    private var pdvHeader: [UInt8] = []
    private var pdvRemaining = 0
    private var messageOpen = false
    private var sawFirstPDU = false

    // Transfer rate.
    private var readPending = false
    private var activeNanoseconds: Int64 = 0
    private var windowBytes = 0
    private var lastTick = NIODeadline.now()

    // Writes.
    private var outstandingWrites = 0
    private var lastWriteProgress = NIODeadline.now()

    private var ticker: RepeatedTask?
    private var tripped = false
    /// This handler sent an A-ABORT: the association is over.
    private var abortSent = false

    init(limits: ConnectionLimits, pending: PendingConnections?, logger: Logger) {
        self.limits = limits
        self.pending = pending
        self.logger = logger
        self.pduHeader.reserveCapacity(6)
        self.pdvHeader.reserveCapacity(6)
    }

    private var inProgress: Bool { self.pduRemaining > 0 || !self.pduHeader.isEmpty || self.messageOpen }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        self.pendingChannel = context.channel
        if context.channel.isActive { self.start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        self.start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        self.stop()
        self.pending?.remove(context.channel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.stop()
    }

    private func start(context: ChannelHandlerContext) {
        guard self.ticker == nil else { return }
        let now = NIODeadline.now()
        self.lastTick = now
        self.lastWriteProgress = now
        let shortest = min(self.limits.transferRateWindow.nanoseconds, self.limits.writeTimeout.nanoseconds)
        let interval = TimeAmount.nanoseconds(max(shortest / 4, 50_000_000))
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        self.ticker = context.eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            let (handler, context) = bound.value
            handler.tick(context: context)
        }
    }

    private func stop() {
        self.ticker?.cancel()
        self.ticker = nil
    }

    // MARK: Inbound

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = self.unwrapInboundIn(data)
        self.windowBytes += buffer.readableBytes
        // After a refusal nothing more reaches the decoder.
        guard !self.tripped else { return }
        if let refusal = self.follow(buffer) {
            // The first PDU is invalid in Sta2: AA-1, an A-ABORT from the service user (PS3.8 §9.2 Table 9-10),
            // sent from here on the event loop before the body is buffered; the association task learns why
            // from the error, and its own A-ABORT is not sent twice.
            self.logger.info("refusing the connection", metadata: ["reason": "\(refusal)"])
            self.abortConnection(context: context, Abort(source: .serviceUser, reason: .reasonNotSpecified))
            context.fireErrorCaught(refusal)
            return
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        self.readPending = false
        context.fireChannelReadComplete()
    }

    /// Follows the framing through `buffer`; returns why the connection must be refused, if it must.
    private func follow(_ buffer: ByteBuffer) -> PDUError? {
        buffer.withUnsafeReadableBytes { bytes -> PDUError? in
            var i = 0
            let n = bytes.count
            while i < n {
                if self.pduRemaining == 0 {
                    self.pduHeader.append(bytes[i])
                    i += 1
                    guard self.pduHeader.count == 6 else { continue }
                    self.pduType = self.pduHeader[0]
                    self.pduRemaining =
                        Int(self.pduHeader[2]) << 24 | Int(self.pduHeader[3]) << 16 | Int(self.pduHeader[4]) << 8
                        | Int(self.pduHeader[5])
                    self.pduHeader.removeAll(keepingCapacity: true)
                    self.pdvHeader.removeAll(keepingCapacity: true)
                    self.pdvRemaining = 0
                    if !self.sawFirstPDU && self.pduType == 0x01
                        && self.pduRemaining > self.limits.maximumAssociationRequestLength
                    {
                        return PDUError.pduTooLarge(
                            type: 0x01, announced: UInt32(self.pduRemaining),
                            maximum: UInt32(clamping: self.limits.maximumAssociationRequestLength))
                    }
                    if self.pduRemaining == 0 { self.pduEnded() }
                    continue
                }
                if self.pduType == 0x04 && self.pdvRemaining == 0 {
                    // A PDV item header: 4-byte length, presentation context ID, message control header.
                    self.pdvHeader.append(bytes[i])
                    i += 1
                    self.pduRemaining -= 1
                    if self.pdvHeader.count == 6 {
                        let length =
                            Int(self.pdvHeader[0]) << 24 | Int(self.pdvHeader[1]) << 16 | Int(self.pdvHeader[2]) << 8
                            | Int(self.pdvHeader[3])
                        self.pdvRemaining = max(length - 2, 0)
                        // Bit 1: last fragment of the command or data set. After the last command fragment a
                        // data set may follow; it opens the message again with its first byte.
                        self.messageOpen = self.pdvHeader[5] & 0x02 == 0
                        self.pdvHeader.removeAll(keepingCapacity: true)
                    }
                } else {
                    var take = min(self.pduRemaining, n - i)
                    if self.pduType == 0x04 { take = min(take, self.pdvRemaining) }
                    i += take
                    self.pduRemaining -= take
                    if self.pduType == 0x04 { self.pdvRemaining -= take }
                }
                if self.pduRemaining == 0 { self.pduEnded() }
            }
            return nil
        }
    }

    private func pduEnded() {
        self.pdvHeader.removeAll(keepingCapacity: true)
        self.pdvRemaining = 0
        if !self.sawFirstPDU {
            self.sawFirstPDU = true
            self.pendingChannel.map { self.pending?.remove($0) }
        }
    }

    private var pendingChannel: (any Channel)?

    // MARK: Outbound

    func read(context: ChannelHandlerContext) {
        self.readPending = true
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        // After this handler's A-ABORT the association is over: nothing more goes to the peer.
        guard !self.abortSent else {
            promise?.fail(ChannelError.outputClosed)
            return
        }
        if self.outstandingWrites == 0 { self.lastWriteProgress = .now() }
        self.outstandingWrites += 1
        let promise = promise ?? context.eventLoop.makePromise()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        promise.futureResult.whenComplete { _ in
            let handler = bound.value
            handler.outstandingWrites -= 1
            handler.lastWriteProgress = .now()
        }
        context.write(data, promise: promise)
    }

    // MARK: Checks

    private func tick(context: ChannelHandlerContext) {
        guard !self.tripped else { return }
        let now = NIODeadline.now()
        let elapsed = (now - self.lastTick).nanoseconds
        self.lastTick = now

        if self.outstandingWrites > 0 && now - self.lastWriteProgress > self.limits.writeTimeout {
            self.tripped = true
            self.logger.info(
                "closing the connection: the peer has not read for the write timeout",
                metadata: ["timeout.ms": "\(self.limits.writeTimeout.nanoseconds / 1_000_000)"])
            // The peer does not read: an A-ABORT could not reach it either.
            context.close(promise: nil)
            return
        }

        guard self.limits.minimumTransferRate > 0, self.inProgress else {
            self.activeNanoseconds = 0
            self.windowBytes = 0
            return
        }
        // Only time spent waiting for the peer counts: not while this side holds back reading.
        if self.readPending { self.activeNanoseconds += elapsed }
        let window = self.limits.transferRateWindow.nanoseconds
        guard self.activeNanoseconds >= window else { return }
        let needed = Int(Int64(self.limits.minimumTransferRate) * window / 1_000_000_000)
        if self.windowBytes < needed {
            self.trip(
                context: context,
                "the peer sent \(self.windowBytes) bytes in \(window / 1_000_000) ms of a PDU or message in progress, "
                    + "below the minimum transfer rate of \(self.limits.minimumTransferRate) bytes/s")
            return
        }
        self.activeNanoseconds = 0
        self.windowBytes = 0
    }

    /// Ends the association: this side's user gives up (PS3.8 §9.2 AA-1 on Evt15), with the A-ABORT sent from
    /// here, and a ``TimeoutSignal`` tells the association task why.
    private func trip(context: ChannelHandlerContext, _ reason: String) {
        self.logger.info("aborting the connection", metadata: ["reason": "\(reason)"])
        self.abortConnection(context: context, Abort(source: .serviceUser, reason: .reasonNotSpecified))
        context.fireErrorCaught(TimeoutSignal(kind: .dimse))
    }

    /// Sends `abort` and closes the connection once it is written, on the event loop: the peer gets its A-ABORT
    /// however long the association task waits for a thread (over 10 s once, on 2 busy cores). Later writes
    /// are dropped. A peer that does not read is closed after 2 s without it.
    private func abortConnection(context: ChannelHandlerContext, _ abort: Abort) {
        self.tripped = true
        self.stop()
        var buffer = context.channel.allocator.buffer(capacity: 10)
        let channel = context.channel
        do {
            try PDU.abort(abort).encode(into: &buffer)
            let written = context.eventLoop.makePromise(of: Void.self)
            written.futureResult.whenComplete { _ in channel.close(promise: nil) }
            context.writeAndFlush(NIOAny(buffer), promise: written)
        } catch {
            self.logger.debug("could not encode the A-ABORT", metadata: ["error": "\(error)"])
            channel.close(promise: nil)
        }
        self.abortSent = true
        context.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// Puts a ``ConnectionGuardHandler`` first in a server connection's pipeline and counts the connection
    /// as pending (no A-ASSOCIATE-RQ yet), closing the oldest pending connections beyond the limit.
    func addConnectionGuard(
        _ limits: ConnectionLimits, pending: PendingConnections, on channel: any Channel, logger: Logger
    ) throws {
        var logger = logger
        logger[metadataKey: "peer.address"] = "\(channel.remoteAddress.map { "\($0)" } ?? "?")"
        try self.addHandler(ConnectionGuardHandler(limits: limits, pending: pending, logger: logger), position: .first)
        let evicted = pending.admit(channel)
        if !evicted.isEmpty {
            logger.info(
                "closing the oldest connections that have not sent an A-ASSOCIATE-RQ",
                metadata: ["count": "\(evicted.count)", "limit": "\(pending.limit)"])
        }
        for old in evicted { old.close(promise: nil) }
    }
}
