import DICOMProtocol
import FuzzSupport
import NIOCore

// Input: one option byte, then a byte stream as a peer would send it.
//   bit 0      the frame decoder streams data set PDVs (px-listen's receiving mode)
//   bits 1-2   the P-DATA-TF cap: 0 ("unlimited", 64 MiB), 16 KiB, 64 KiB or 1 MiB
//   bits 3-6   the size of the reads the stream arrives in: 1 + 37 * n bytes (n = 0 feeds byte by byte)
//   bit 7      also decode the stream as a bare command set and as user information sub-items
//
// Invariants:
// - every PDU that decodes re-encodes, and the re-encoding decodes to the same value and re-encodes to
//   the same bytes (a canonical form is reached in one step);
// - the frame decoder, fed in arbitrary reads, returns exactly the frames a reference reading of the
//   PDU headers gives (type, body), and fails exactly where that reading fails (unknown type, length
//   above the cap, a PDU cut short by the end of the stream);
// - streamed, the data set PDVs it hands on carry the same bytes, contexts and last-fragment flags as
//   decoding the same complete P-DATA-TF PDUs;
// - a command set that decodes re-encodes to bytes that decode to the same command set.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPDU(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = fuzzInput(data, size)
    guard let options = input.first else { return 0 }
    let stream = ByteBuffer(bytes: input.dropFirst())
    let streaming = options & 0x01 != 0
    let dataCaps: [UInt32] = [0, 16 * 1024, 64 * 1024, 1 << 20]
    let maximumData = dataCaps[Int(options >> 1) & 0x03]
    let readSize = 1 + 37 * Int((options >> 3) & 0x0F)

    let whole = decodeWholePDUs(stream)
    let decoder = PDUFrameDecoder(maximumDataPDULength: maximumData, streamsDataSets: streaming)
    let reference = referenceFrames(stream, decoder: decoder)
    let framed = decodeFrames(stream, decoder: decoder, readSize: readSize)

    if !streaming {
        // Whole frames: exactly the reference reading.
        fuzzCheck(
            framed.frames.count == reference.frames.count,
            "frame decoder gave \(framed.frames.count) frames, reference \(reference.frames.count)")
        for (got, want) in zip(framed.frames, reference.frames) {
            fuzzCheck(
                got.type == want.type && got.body == want.body && got.streamedPDV == nil, "frame differs from reference"
            )
        }
        // A stream that ends inside a PDU is an error at end of stream (decodeLast).
        let referenceFails = reference.failed || reference.incomplete
        fuzzCheck(
            framed.failed == referenceFails, "frame decoder failed: \(framed.failed), reference: \(referenceFails)")
    } else if !reference.failed, !reference.incomplete, let expected = pdvStream(ofFrames: reference.frames) {
        // Streamed: the same PDV contents as the complete PDUs give.
        fuzzCheck(!framed.failed, "streaming decoder failed on a stream of well-formed PDUs")
        let got = pdvStream(ofFrames: framed.frames)
        fuzzCheck(got == expected, "streamed PDVs differ from whole PDUs")
    }

    // The PDVs of the well-formed P-DATA-TF PDUs through the DIMSE message assembler (no crash,
    // bounded: data sets above the cap are refused).
    var assembler = DIMSEMessageAssembler(maximumDataSetLength: 64 * 1024)
    assembling: for pdu in whole {
        guard case .dataTF(let tf) = pdu else { continue }
        for pdv in tf.pdvs {
            if pdv.messageControlHeader.isCommand {
                checkCommandSet(pdv.data)
            }
            do {
                if case .message(_, _, let dataSet?) = try assembler.receive(pdv) {
                    fuzzCheck(dataSet.readableBytes <= 64 * 1024, "accumulated data set above its cap")
                }
            } catch {
                break assembling
            }
        }
    }

    if options & 0x80 != 0 {
        checkCommandSet(stream)
        var items = stream
        if let information = try? UserInformation(from: &items) {
            var encoded = ByteBuffer()
            do {
                try information.encode(into: &encoded)
            } catch {
                fuzzCheck(false, "decoded user information does not encode: \(error)")
            }
            var again = encoded
            let decoded = try? UserInformation(from: &again)
            fuzzCheck(decoded == information, "user information changes across a round trip")
        }
    }
    return 0
}

/// Decodes complete PDUs from the front of `stream` until one fails; checks each round trip.
private func decodeWholePDUs(_ stream: ByteBuffer) -> [PDU] {
    var buffer = stream
    var pdus: [PDU] = []
    while buffer.readableBytes > 0 {
        guard let pdu = try? PDU(from: &buffer) else { break }
        checkRoundTrip(pdu)
        pdus.append(pdu)
    }
    return pdus
}

/// A decoded PDU re-encodes; the encoding decodes to the same PDU and encodes to the same bytes.
private func checkRoundTrip(_ pdu: PDU) {
    var first = ByteBuffer()
    do {
        try pdu.encode(into: &first)
    } catch {
        fuzzCheck(false, "decoded \(pdu.type) does not encode: \(error)")
        return
    }
    var reader = first
    let again: PDU
    do {
        again = try PDU(from: &reader)
    } catch {
        fuzzCheck(false, "re-encoded \(pdu.type) does not decode: \(error)")
        return
    }
    fuzzCheck(reader.readableBytes == 0, "re-encoded \(pdu.type) leaves \(reader.readableBytes) bytes")
    fuzzCheck(again == pdu, "\(pdu.type) changes across a round trip")
    var second = ByteBuffer()
    do {
        try again.encode(into: &second)
    } catch {
        fuzzCheck(false, "\(pdu.type) does not encode a second time: \(error)")
    }
    fuzzCheck(first == second, "\(pdu.type) encodes to different bytes the second time")
}

/// A command set that decodes re-encodes to bytes that decode to the same command set.
private func checkCommandSet(_ bytes: ByteBuffer) {
    guard let commandSet = try? CommandSet(decoding: bytes) else { return }
    let encoded = commandSet.encoded()
    let again: CommandSet
    do {
        again = try CommandSet(decoding: encoded)
    } catch {
        fuzzCheck(false, "re-encoded command set does not decode: \(error)")
        return
    }
    fuzzCheck(again == commandSet, "command set changes across a round trip")
    _ = try? DIMSEMessage(commandSet: commandSet)
}

/// What a frame decoder produced from a whole stream.
private struct Framing {
    var frames: [PDUFrame] = []
    var failed = false
    /// The stream ended inside a PDU (reference reading only).
    var incomplete = false
}

/// The PDU headers read straight off the stream (PS3.8 §9.3.1): type byte, reserved byte, 32-bit length.
private func referenceFrames(_ stream: ByteBuffer, decoder: PDUFrameDecoder) -> Framing {
    var result = Framing()
    var buffer = stream
    while buffer.readableBytes > 0 {
        let typeByte = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self)!
        guard let type = PDUType(rawValue: typeByte) else {
            result.failed = true
            return result
        }
        guard buffer.readableBytes >= 6 else {
            result.incomplete = true
            return result
        }
        let length = buffer.getInteger(at: buffer.readerIndex + 2, endianness: .big, as: UInt32.self)!
        guard length <= decoder.maximumLength(for: type) else {
            result.failed = true
            return result
        }
        guard buffer.readableBytes >= 6 + Int(length) else {
            result.incomplete = true
            return result
        }
        buffer.moveReaderIndex(forwardBy: 6)
        result.frames.append(PDUFrame(type: typeByte, body: buffer.readSlice(length: Int(length))!))
    }
    return result
}

/// Feeds `stream` to the decoder `readSize` bytes at a time, as ByteToMessageHandler would.
private func decodeFrames(_ stream: ByteBuffer, decoder: PDUFrameDecoder, readSize: Int) -> Framing {
    var result = Framing()
    let processor = NIOSingleStepByteToMessageProcessor(decoder, maximumBufferSize: 4 << 20)
    var rest = stream
    do {
        while rest.readableBytes > 0 {
            let read = rest.readSlice(length: min(readSize, rest.readableBytes))!
            try processor.process(buffer: read) { frame in
                fuzzCheck(frame.body.readableBytes <= 64 << 20, "a frame above every cap")
                result.frames.append(frame)
            }
        }
        try processor.finishProcessing(seenEOF: true) { frame in result.frames.append(frame) }
    } catch {
        result.failed = true
    }
    return result
}

/// One run of PDV data: context, command or data set, the bytes, and how many last-fragment flags
/// it carried.
private struct PDVRun: Equatable {
    var contextID: UInt8
    var isCommand: Bool
    var bytes: [UInt8]
    var lastFlags: Int
}

/// The PDV contents of `frames` with PDV boundaries removed: adjacent PDVs of the same context and kind
/// are joined, so a PDV handed on in pieces and the same PDV decoded whole compare equal. Nil when a
/// frame is not a well-formed P-DATA-TF (or is another PDU).
private func pdvStream(ofFrames frames: [PDUFrame]) -> [PDVRun]? {
    var runs: [PDVRun] = []
    func add(_ contextID: UInt8, _ header: PDV.MessageControlHeader, _ data: ByteBuffer) {
        let last = header.isLastFragment ? 1 : 0
        if var run = runs.last, run.contextID == contextID, run.isCommand == header.isCommand {
            run.bytes += data.readableBytesView
            run.lastFlags += last
            runs[runs.count - 1] = run
        } else {
            runs.append(
                PDVRun(
                    contextID: contextID, isCommand: header.isCommand, bytes: Array(data.readableBytesView),
                    lastFlags: last))
        }
    }
    for frame in frames {
        if let streamed = frame.streamedPDV {
            add(streamed.presentationContextID, streamed.messageControlHeader, frame.body)
            continue
        }
        guard frame.type == PDUType.dataTF.rawValue, case .dataTF(let tf)? = try? PDU(frame: frame) else {
            return nil
        }
        for pdv in tf.pdvs {
            add(pdv.presentationContextID, pdv.messageControlHeader, pdv.data)
        }
    }
    return runs
}
