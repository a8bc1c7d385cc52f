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
