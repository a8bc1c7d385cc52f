import NIOCore
import NIOEmbedded
import Testing

@testable import DICOMProtocol

/// ``PDUFrameDecoder/streamsDataSets``: data set PDVs of P-DATA-TF PDUs that have not fully arrived are
/// handed on piece by piece (PS3.8 §9.3.5.1, Annex E), and the result, read as PDVs, is the same message.
@Suite("PDU framing, streaming data sets", .timeLimit(.minutes(2)))
struct PDUFrameDecoderStreamingTests {
    /// A P-DATA-TF PDU, header included, from (context, control, data) PDVs.
    private static func pData(_ pdvs: [(UInt8, UInt8, [UInt8])]) -> ByteBuffer {
        var body = ByteBuffer()
        for (context, control, data) in pdvs {
            body.writeInteger(UInt32(data.count + 2), endianness: .big)
            body.writeInteger(context)
            body.writeInteger(control)
            body.writeBytes(data)
        }
        var pdu = ByteBuffer()
        pdu.writeInteger(UInt8(0x04))
        pdu.writeInteger(UInt8(0))
        pdu.writeInteger(UInt32(body.readableBytes), endianness: .big)
        pdu.writeImmutableBuffer(body)
        return pdu
    }

    /// Feeds `stream` in pieces of the given sizes (cycled) and returns every PDV decoded from the frames.
    private static func decode(_ stream: ByteBuffer, splits: [Int], maximum: UInt32 = 1 << 20) throws -> (
        pdvs: [PDV], frames: [PDUFrame]
    ) {
        let channel = EmbeddedChannel(
            handler: ByteToMessageHandler(PDUFrameDecoder(maximumDataPDULength: maximum, streamsDataSets: true)))
        var offset = 0
        var index = 0
        var frames: [PDUFrame] = []
        while offset < stream.readableBytes {
            let length = min(max(1, splits[index % splits.count]), stream.readableBytes - offset)
            try channel.writeInbound(stream.getSlice(at: stream.readerIndex + offset, length: length)!)
            offset += length
            index += 1
            while let frame = try channel.readInbound(as: PDUFrame.self) { frames.append(frame) }
        }
        #expect(try channel.finish().isClean)
        var pdvs: [PDV] = []
        for frame in frames {
            guard case .dataTF(let data) = try PDU(frame: frame) else {
                Issue.record("not a P-DATA-TF: \(frame)")
                continue
            }
            pdvs += data.pdvs
        }
        return (pdvs, frames)
    }

    /// A C-STORE-like message: a command PDU, then a data set in two PDUs of 3000 and 1000 bytes.
    private static let command = (0..<90).map { UInt8($0) }
    private static let dataSet = (0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    private static var message: ByteBuffer {
        var stream = pData([(1, 0x03, command)])
        stream.writeImmutableBuffer(pData([(1, 0x00, Array(dataSet[0..<3000]))]))
        stream.writeImmutableBuffer(pData([(1, 0x02, Array(dataSet[3000...]))]))
        return stream
    }

    @Test(
        "Any split gives the same command, the same data set bytes, and one last fragment",
        arguments: [
            [1], [2, 3, 5], [7], [100], [1000, 1], [4096], [65536], [6, 6, 6, 1, 4000],
        ])
    func splits(_ splits: [Int]) throws {
        let (pdvs, _) = try Self.decode(Self.message, splits: splits)
        let commands = pdvs.filter { $0.messageControlHeader.isCommand }
        let data = pdvs.filter { !$0.messageControlHeader.isCommand }
        #expect(commands.count == 1)
        #expect(commands.first.map { Array($0.data.readableBytesView) } == Self.command)
        #expect(commands.first?.messageControlHeader.isLastFragment == true)
        #expect(data.flatMap { Array($0.data.readableBytesView) } == Self.dataSet)
        #expect(data.filter { $0.messageControlHeader.isLastFragment }.count == 1)
        #expect(data.last?.messageControlHeader.isLastFragment == true)
        #expect(pdvs.allSatisfy { $0.presentationContextID == 1 })
    }

    @Test("Byte by byte, data set pieces arrive before their PDU is complete; a split command PDV comes whole")
    func streamsEarly() throws {
        let (_, frames) = try Self.decode(Self.message, splits: [1])
        let commands = frames.filter { $0.streamedPDV?.messageControlHeader.isCommand == true }
        #expect(commands.count == 1 && commands[0].body.readableBytes == 90)
        // One frame per data set byte: nothing waited for the end of a PDU.
        #expect(frames.filter { $0.streamedPDV?.messageControlHeader.isCommand == false }.count == 4000)
    }

    @Test("A whole P-DATA-TF in one read stays one frame with its PDV items")
    func wholeStaysWhole() throws {
        let stream = Self.pData([(3, 0x03, Self.command), (3, 0x02, [1, 2, 3, 4])])
        let (pdvs, frames) = try Self.decode(stream, splits: [stream.readableBytes])
        #expect(frames.count == 1 && frames[0].streamedPDV == nil)
        #expect(pdvs.count == 2)
    }

    @Test("Several PDVs in one partly received PDU, an empty data PDV included")
    func severalPDVs() throws {
        let stream = Self.pData([(5, 0x00, [9, 9, 9]), (5, 0x00, []), (5, 0x02, Array(repeating: 1, count: 50))])
        let (pdvs, _) = try Self.decode(stream, splits: [4, 3])
        #expect(pdvs.flatMap { Array($0.data.readableBytesView) } == [9, 9, 9] + Array(repeating: 1, count: 50))
        #expect(pdvs.filter { $0.messageControlHeader.isLastFragment }.count == 1)
        #expect(pdvs.allSatisfy { $0.presentationContextID == 5 })
    }

    @Test(
        "A PDV item longer than what is left of its PDU, or shorter than 2, is an error",
        arguments: [
            // PDU of 20 bytes whose PDV announces 40; PDU whose PDV announces 1.
            "04 00 00000014 00000028 01 00 0102", "04 00 00000014 00000001 01",
        ])
    func badItems(_ hex: String) throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 16384, streamsDataSets: true)
        var partial = buffer(hex: hex)
        #expect(throws: PDUError.self) { _ = try decoder.decode(buffer: &partial) }
    }

    @Test("A stream that ends inside a streamed P-DATA-TF throws truncated")
    func truncatedMidPDU() throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 16384, streamsDataSets: true)
        var partial = buffer(hex: "04 00 00000010 0000000C 01 00 01020304")
        let first = try decoder.decode(buffer: &partial)
        #expect(first?.body.readableBytes == 4)
        #expect(try decoder.decode(buffer: &partial) == nil)
        let error = #expect(throws: PDUError.self) { try decoder.decodeLast(buffer: &partial, seenEOF: true) }
        #expect(error?.code == .truncated)
    }

    @Test("The P-DATA cap still applies before anything is streamed")
    func capStillApplies() throws {
        var decoder = PDUFrameDecoder(maximumDataPDULength: 100, streamsDataSets: true)
        var partial = buffer(hex: "04 00 00000400 000003FC 01 00")
        let error = #expect(throws: PDUError.self) { _ = try decoder.decode(buffer: &partial) }
        #expect(error?.code == .pduTooLarge)
    }
}
