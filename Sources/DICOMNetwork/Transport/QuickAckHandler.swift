import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// Acknowledges every read at once (Linux `TCP_QUICKACK`, re-armed after each read: the kernel leaves
/// quick-ACK mode again on its own).
///
/// DCMTK's tools, and peers built on them, send a PDU's header and its body in two writes and leave Nagle's
/// algorithm on unless `TCP_NODELAY` is set in their environment. Nagle holds the body until the header is
/// acknowledged, and Linux delays that ACK by up to 40 ms, so every answer from such a peer (an A-ASSOCIATE-AC,
/// each C-ECHO-RSP, each C-FIND-RSP) waited out the delayed ACK: measured against a default storescp, a
/// C-ECHO took about 60 ms instead of 15. Acknowledging at once releases the held segment.
/// Best effort: where the option does not exist or cannot be set, only the latency is lost.
final class QuickAckHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func channelActive(context: ChannelHandlerContext) {
        Self.arm(context.channel)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        Self.arm(context.channel)
        context.fireChannelRead(data)
    }

    private static func arm(_ channel: any Channel) {
        #if os(Linux)
            guard let options = channel.syncOptions else { return }
            let quickAck = ChannelOptions.Types.SocketOption(
                level: .tcp, name: NIOBSDSocket.Option(rawValue: CInt(TCP_QUICKACK)))
            do {
                try options.setOption(quickAck, value: 1)
            } catch {
                // Not a socket that knows the option (an embedded or closed channel): nothing to speed up.
                return
            }
        #endif
    }
}
