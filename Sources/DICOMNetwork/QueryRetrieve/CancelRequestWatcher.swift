import DICOMProtocol
import NIOCore
import Synchronization

/// Notices a C-CANCEL-RQ (PS3.7 §9.3.2.3) as its PDU passes through the pipeline, so that an SCP busy sending
/// C-FIND responses or C-MOVE sub-operations (and not reading the association) can stop (PS3.4 §C.4.1.3.1,
/// §C.4.2.3.1). The PDU itself goes on to the inbound stream unchanged.
///
/// While ``begin()`` ... ``end()`` brackets an operation, read-idle events are dropped: the requestor is
/// rightly silent while it waits for responses, so it must not be timed out as idle. Its silence counts from
/// the operation's end: an idle event within `idleTimeout` of ``end()`` is dropped too (the idle timer
/// measures from the last read, the request that started the operation, so an operation that ended just
/// before the timer's next check otherwise left the requestor no time at all to send its next request).
///
/// Only the command PDVs short enough to be a C-CANCEL-RQ (at most 64 bytes, a whole command in one
/// fragment) are looked at: other traffic costs one length check per PDV.
final class CancelRequestWatcher: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = PDUFrame
    typealias InboundOut = PDUFrame

    /// `0x1_0000 | message ID` of the last C-CANCEL-RQ seen, or 0.
    private let cancelled = Atomic<UInt32>(0)
    private let busy = Atomic<Bool>(false)
    /// When the last operation ended (``NIODeadline/uptimeNanoseconds``), 0 before any.
    private let endedAt = Atomic<UInt64>(0)
    /// The association's idle timeout (the idle timer's read timeout), `nil` without one.
    private let idleTimeout: TimeAmount?

    init(idleTimeout: TimeAmount?) {
        self.idleTimeout = idleTimeout
    }

    /// Marks the start of an operation.
    func begin() {
        self.busy.store(true, ordering: .sequentiallyConsistent)
    }

    /// Marks its end.
    func end() {
        self.endedAt.store(NIODeadline.now().uptimeNanoseconds, ordering: .sequentiallyConsistent)
        self.busy.store(false, ordering: .sequentiallyConsistent)
    }

    /// Whether a C-CANCEL-RQ for `messageID` has arrived.
    func isCancelled(_ messageID: UInt16) -> Bool {
        self.cancelled.load(ordering: .sequentiallyConsistent) == 0x1_0000 | UInt32(messageID)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = Self.unwrapInboundIn(data)
        if frame.type == 0x04 {
            let messageID: UInt16?
            if let streamed = frame.streamedPDV {
                // One PDV from a streaming decoder: command PDVs come whole, data set bytes are skipped.
                let header = streamed.messageControlHeader
                messageID =
                    header.isCommand && header.isLastFragment && frame.body.readableBytes <= 64
                    ? Self.cancelCommand(frame.body) : nil
            } else {
                messageID = Self.cancelledMessageID(in: frame.body)
            }
            if let messageID {
                self.cancelled.store(0x1_0000 | UInt32(messageID), ordering: .sequentiallyConsistent)
            }
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read,
            self.busy.load(ordering: .sequentiallyConsistent) || self.endedRecently
        {
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Whether the last operation ended less than the idle timeout ago.
    private var endedRecently: Bool {
        guard let idleTimeout else { return false }
        let ended = self.endedAt.load(ordering: .sequentiallyConsistent)
        guard ended > 0 else { return false }
        let now = NIODeadline.now().uptimeNanoseconds
        return now < ended || Int64(now - ended) < idleTimeout.nanoseconds
    }

    /// The Message ID Being Responded To of a C-CANCEL-RQ command in a P-DATA-TF body, if there is one.
    static func cancelledMessageID(in body: ByteBuffer) -> UInt16? {
        var buffer = body
        while let length = buffer.readInteger(as: UInt32.self) {
            guard length >= 2, Int(length) <= buffer.readableBytes,
                buffer.readInteger(as: UInt8.self) != nil,
                let header = buffer.readInteger(as: UInt8.self),
                let fragment = buffer.readSlice(length: Int(length) - 2)
            else { return nil }
            if header & 0x03 == 0x03 && fragment.readableBytes <= 64, let id = Self.cancelCommand(fragment) {
                return id
            }
        }
        return nil
    }

    /// Scans an implicit VR little endian command set (PS3.7 §6.3.1) for Command Field 0x0FFF.
    private static func cancelCommand(_ command: ByteBuffer) -> UInt16? {
        var buffer = command
        var isCancel = false
        var messageID: UInt16?
        while let group = buffer.readInteger(endianness: .little, as: UInt16.self),
            let element = buffer.readInteger(endianness: .little, as: UInt16.self),
            let length = buffer.readInteger(endianness: .little, as: UInt32.self),
            group == 0x0000, Int(length) <= buffer.readableBytes
        {
            if length == 2 && (element == 0x0100 || element == 0x0120) {
                let value = buffer.getInteger(at: buffer.readerIndex, endianness: .little, as: UInt16.self)
                if element == 0x0100 { isCancel = value == 0x0FFF }
                if element == 0x0120 { messageID = value }
            }
            buffer.moveReaderIndex(forwardBy: Int(length))
        }
        return isCancel ? messageID : nil
    }
}
