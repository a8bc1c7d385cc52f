import NIOCore
import PXTestSupport
import Testing

@testable import DICOMNetwork

/// A peer given as an IP address is connected to directly; a name goes through the resolver. Both report a
/// refused connection the same way.
@Suite("Peer addresses: literals connect directly, names through the resolver")
struct AddressLiteralTests {
    @Test("IPv4 and IPv6 literals are addresses; names, even of hex digits, are not")
    func literals() {
        #expect(SocketAddress.literal("127.0.0.1", port: 104)?.port == 104)
        #expect(SocketAddress.literal("::1", port: 11112)?.protocol == .inet6)
        #expect(SocketAddress.literal("10.0.0.256", port: 104) == nil)
        for name in ["localhost", "pacs.example", "cafe", "beef.cafe", "", "127.0.0.1 "] {
            #expect(SocketAddress.literal(name, port: 104) == nil, "\(name)")
        }
        #expect(ChannelPipeline.SynchronousOperations.isIPAddress("192.168.1.20"))
        #expect(!ChannelPipeline.SynchronousOperations.isIPAddress("pacs.example"))
    }

    @Test(
        "a refused connection is connectionRefused whether the peer is 127.0.0.1 or localhost",
        arguments: ["127.0.0.1", "localhost"])
    func refused(host: String) async throws {
        let held = try TestSupport.holdPort()
        defer { held.release() }
        let client = DICOMClient(
            configuration: .init(
                callingAETitle: "PXSCU", connectTimeout: .seconds(5), acseTimeout: .seconds(5),
                dimseTimeout: .seconds(5)),
            logger: TestSupport.logger("px.test.client"))
        await #expect {
            try await client.echo(DICOMPeer(host: host, port: held.port, aeTitle: "NOBODY"))
        } throws: { error in
            (error as? DICOMNetworkError)?.code == .connectionRefused
        }
    }
}
