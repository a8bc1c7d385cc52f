import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing

@testable import DICOMProtocol

@Suite("PDU framing (PS3.8 §9.3.1)", .timeLimit(.minutes(2)))
struct PDUFrameDecoderTests {
    private static func frame(_ hexString: String) -> PDUFrame {
        var bytes = buffer(hex: hexString)
        let type: UInt8 = bytes.readInteger() ?? 0
        bytes.moveReaderIndex(forwardBy: 5)
        return PDUFrame(type: type, body: bytes)
    }

    @Test("ByteToMessageDecoderVerifier: byte-by-byte and random splits")
    func verifier() throws {
        let release = "05 00 00000004 00000000"
        let pData = "04 00 0000000A 00000006 01 03 01020304"
        let abort = "07 00 00000004 0000 02 01"
        var all = buffer(hex: dcmtkEchoAssociateRQ)
        all.writeImmutableBuffer(buffer(hex: pData))
        try ByteToMessageDecoderVerifier.verifyDecoder(
            inputOutputPairs: [
                (buffer(hex: dcmtkEchoAssociateRQ), [Self.frame(dcmtkEchoAssociateRQ)]),
                (buffer(hex: release), [Self.frame(release)]),
                (buffer(hex: pData + abort), [Self.frame(pData), Self.frame(abort)]),
                (all, [Self.frame(dcmtkEchoAssociateRQ), Self.frame(pData)]),
            ],
            decoderFactory: { PDUFrameDecoder(maximumDataPDULength: 16384) }
        )
    }

    @Test("EmbeddedChannel: fragmented reads produce whole frames with zero-copy bodies")
    func fragmentedReads() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PDUFrameDecoder(maximumDataPDULength: 16384)))
        let bytes = buffer(hex: dcmtkEchoAssociateRQ)
        var offset = 0
        for size in [1, 2, 3, 50, 7, 1000] where offset < bytes.readableBytes {
            let length = min(size, bytes.readableBytes - offset)
            try channel.writeInbound(bytes.getSlice(at: offset, length: length) ?? ByteBuffer())
            offset += length
            if offset < bytes.readableBytes {
                #expect(try channel.readInbound(as: PDUFrame.self) == nil)
            }
        }
        let frame = try #require(try channel.readInbound(as: PDUFrame.self))
        #expect(frame.pduType == .associateRQ)
        #expect(frame.body.readableBytes == 0xCD)
        let pdu = try PDU(frame: frame)
        #expect(pdu.type == .associateRQ)
        #expect(try channel.finish().isClean)
    }

    @Test("An oversized P-DATA-TF length throws pduTooLarge before any body arrives")
    func oversizedData() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PDUFrameDecoder(maximumDataPDULength: 16384)))
        let error = #expect(throws: PDUError.self) {
            try channel.writeInbound(buffer(hex: "04 00 00004001"))
        }
        #expect(error?.code == .pduTooLarge)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("The P-DATA cap is separate from the association cap")
    func separateCaps() throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 1 << 20, maximumAssociationPDULength: 4096)
        var bigData = buffer(hex: "04 00 00010000")
        #expect(try decoder.decode(buffer: &bigData) == nil)  // allowed, waits for the body
        var bigAssociate = buffer(hex: "01 00 00001001")
        let error = #expect(throws: PDUError.self) { try decoder.decode(buffer: &bigAssociate) }
        #expect(error?.code == .pduTooLarge)
        var hugeRelease = buffer(hex: "05 00 FFFFFFFF")
        #expect(throws: PDUError.self) { try decoder.decode(buffer: &hugeRelease) }
    }

    @Test("A maximum of 0 (unlimited) falls back to the default cap")
    func unlimitedFallsBackToDefault() throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 0)
        #expect(decoder.maximumLength(for: .dataTF) == PDUFrameDecoder.defaultUnlimitedDataPDULength)
        var huge = buffer(hex: "04 00 FFFFFFFF")
        let error = #expect(throws: PDUError.self) { try decoder.decode(buffer: &huge) }
        #expect(error?.code == .pduTooLarge)
    }

    @Test("Garbage type bytes throw unrecognizedPDUType at once", arguments: [UInt8(0x00), 0x08, 0x47, 0xFF])
    func garbageType(type: UInt8) throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PDUFrameDecoder(maximumDataPDULength: 16384)))
        let error = #expect(throws: PDUError.self) {
            try channel.writeInbound(ByteBuffer(bytes: [type]))
        }
        #expect(error?.code == .unrecognizedPDUType)
        #expect(error?.abortReason == .unrecognizedPDU)
        _ = try channel.finish(acceptAlreadyClosed: true)
    }

    @Test("A stream that ends inside a PDU throws truncated")
    func truncatedAtEOF() throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 16384)
        var partial = buffer(hex: "05 00 00000004 0000")
        #expect(try decoder.decode(buffer: &partial) == nil)
        let error = #expect(throws: PDUError.self) { try decoder.decodeLast(buffer: &partial, seenEOF: true) }
        #expect(error?.code == .truncated)
        var empty = ByteBuffer()
        #expect(try decoder.decodeLast(buffer: &empty, seenEOF: true) == nil)
    }

    @Test("PDUFrameEncoder and PDUEncoder write the same bytes")
    func encoders() throws {
        let frameChannel = EmbeddedChannel(handler: MessageToByteHandler(PDUFrameEncoder()))
        try frameChannel.writeOutbound(Self.frame(dcmtkEchoAssociateRQ))
        let framed = try #require(try frameChannel.readOutbound(as: ByteBuffer.self))
        #expect(hex(framed) == hex(buffer(hex: dcmtkEchoAssociateRQ)))
        #expect(try frameChannel.finish().isClean)

        var input = buffer(hex: dcmtkEchoAssociateRQ)
        let pdu = try PDU(from: &input)
        let pduChannel = EmbeddedChannel(handler: MessageToByteHandler(PDUEncoder()))
        try pduChannel.writeOutbound(pdu)
        let typed = try #require(try pduChannel.readOutbound(as: ByteBuffer.self))
        #expect(typed == framed)
        #expect(try pduChannel.finish().isClean)
    }
}
