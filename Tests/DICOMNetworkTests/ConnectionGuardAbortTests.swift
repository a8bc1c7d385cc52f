import DICOMProtocol
import Logging
import NIOCore
import NIOEmbedded
import Testing

@testable import DICOMNetwork

/// The connection guard answers a refused first PDU by itself, on the event loop: no association task reads
/// this channel, as none was scheduled in time once on 2 busy cores (the peer then saw a bare close).
@Suite("Connection guard's own A-ABORT", .timeLimit(.minutes(1)))
struct ConnectionGuardAbortTests {
    private static func channel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(
            ConnectionGuardHandler(
                limits: ConnectionLimits(), pending: PendingConnections(limit: 4), logger: Logger(label: "test")))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 104)).wait()
        return channel
    }

    @Test("an A-ASSOCIATE-RQ announcing more than the cap gets an A-ABORT and a close, with nobody reading")
    func oversizedAssociateRequest() throws {
        let channel = try Self.channel()
        var header = channel.allocator.buffer(capacity: 6)
        header.writeBytes([0x01, 0x00, 0xFF, 0xFF, 0xFF, 0xF0])
        #expect(throws: PDUError.self) { try channel.writeInbound(header) }
        // The header went no further than the guard: the decoder never sees the refused PDU.
        #expect(try channel.readInbound(as: ByteBuffer.self) == nil)
        let sent = try #require(try channel.readOutbound(as: ByteBuffer.self), "no A-ABORT was written")
        #expect(Array(sent.readableBytesView) == [0x07, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00])
        channel.embeddedEventLoop.run()
        #expect(!channel.isActive, "the connection stayed open after its A-ABORT")
        // What the association task would send afterwards goes nowhere: one A-ABORT only.
        var late = channel.allocator.buffer(capacity: 1)
        late.writeInteger(UInt8(0x07))
        channel.write(late, promise: nil)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
    }

    @Test("a first PDU within the cap passes through untouched")
    func requestWithinTheCap() throws {
        let channel = try Self.channel()
        var header = channel.allocator.buffer(capacity: 6)
        header.writeBytes([0x01, 0x00, 0x00, 0x00, 0x01, 0x00])
        try channel.writeInbound(header)
        #expect(try channel.readInbound(as: ByteBuffer.self)?.readableBytes == 6)
        #expect(try channel.readOutbound(as: ByteBuffer.self) == nil)
        #expect(channel.isActive)
        _ = try channel.finish()
    }
}
