import DICOMProtocol
import NIOCore

/// The error a timer fires into the pipeline so that a pending read of the inbound stream ends.
///
/// Timers are either scheduled per wait (``AssociationConnection/receivePDU(timeout:waitingFor:)``) or come
/// from `IdleStateHandler` through ``IdleTimeoutHandler``.
struct TimeoutSignal: Error, Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case acse, dimse, idle
    }
    var kind: Kind
}

/// Turns `IdleStateHandler` read-idle events into a ``TimeoutSignal`` for the inbound stream
/// (NIOAsyncChannel ignores user events).
final class IdleTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler, Sendable {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let idle = event as? IdleStateHandler.IdleStateEvent, idle == .read {
            context.fireErrorCaught(TimeoutSignal(kind: .idle))
            return
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// A per-wait read deadline kept on the event loop, so a timer can never fire after the PDU it was
/// waiting for has arrived.
///
/// ``AssociationConnection`` arms it (an outbound user event) before each timed read and disarms it after.
/// Arming schedules a timer; a decoded PDU passing through `channelRead` disarms it, on the same event loop
/// as the timer, so "PDU arrived" and "deadline passed" are ordered: only a deadline that passes with no PDU
/// fires a ``TimeoutSignal`` (PS3.8 ARTIM, PS3.7 DIMSE timeouts). A timer scheduled from outside the loop
/// and cancelled after the read returned could fire in between and end the *next* read with a stale error.
final class ReadDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = PDUFrame
    typealias InboundOut = PDUFrame
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    /// The outbound user events that drive the handler.
    enum Command: Sendable {
        case arm(TimeAmount, TimeoutSignal.Kind)
        case disarm
    }

    private var timer: Scheduled<Void>?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        self.disarm()
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let command = event as? Command else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        self.disarm()
        if case .arm(let timeout, let kind) = command {
            let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
            self.timer = context.eventLoop.scheduleTask(in: timeout) {
                let (handler, context) = bound.value
                // Runs on the loop; a PDU or a disarm since arming has cancelled this task already.
                guard handler.timer != nil else { return }
                handler.timer = nil
                context.fireErrorCaught(TimeoutSignal(kind: kind))
            }
        }
        promise?.succeed()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.disarm()
    }

    private func disarm() {
        self.timer?.cancel()
        self.timer = nil
    }
}
