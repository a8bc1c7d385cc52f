import NIOCore
import Testing

@testable import DICOMProtocol

@Suite("P-DATA fragmentation and reassembly (PS3.8 §9.3.5, Annex E)", .timeLimit(.minutes(2)))
struct PDataTests {
    static func bytes(_ count: Int, seed: UInt8) -> ByteBuffer {
        ByteBuffer(bytes: (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed })
    }

    @Test("Fragments: command first, one PDV per PDU, fragment = maxPDU - 6, MCH bits right")
    func fragmentLayout() throws {
        let command = Self.bytes(10, seed: 1)
        let dataset = Self.bytes(25, seed: 7)
        let pdus = Array(
            try PDataFragmenter(presentationContextID: 3, command: command, dataset: dataset, peerMaximumPDULength: 16))
        #expect(pdus.allSatisfy { $0.pdvs.count == 1 })
        let pdvs = pdus.map { $0.pdvs[0] }
        #expect(pdvs.map(\.messageControlHeader.rawValue) == [0x03, 0x00, 0x00, 0x02])
        #expect(pdvs.map(\.data.readableBytes) == [10, 10, 10, 5])
        #expect(pdvs.allSatisfy { $0.presentationContextID == 3 })
        for pdu in pdus {
            var wire = ByteBuffer()
            try pdu.encode(into: &wire)
            let length = try #require(wire.getInteger(at: 2, endianness: .big, as: UInt32.self))
            #expect(length <= 16)
        }
        let commandOnly = Array(
            try PDataFragmenter(
                presentationContextID: 1, command: Self.bytes(25, seed: 0), dataset: nil, peerMaximumPDULength: 16))
        #expect(commandOnly.map { $0.pdvs[0].messageControlHeader.rawValue } == [0x01, 0x01, 0x03])
    }

    @Test("Fragments are zero-copy slices of the message")
    func zeroCopy() throws {
        let dataset = Self.bytes(100, seed: 3)
        let pdus = Array(
            try PDataFragmenter(
                presentationContextID: 1, command: Self.bytes(4, seed: 0), dataset: dataset, peerMaximumPDULength: 56))
        let base = dataset.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        let second = pdus[2].pdvs[0].data.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
        #expect(second == base + 50)
    }

    @Test("Empty data set yields one empty last data fragment; maxPDU 0 means one PDV each")
    func edgeCases() throws {
        let empty = Array(
            try PDataFragmenter(
                presentationContextID: 1, command: Self.bytes(4, seed: 0), dataset: ByteBuffer(),
                peerMaximumPDULength: 100))
        #expect(empty.map { $0.pdvs[0].messageControlHeader } == [.commandLast, .dataLast])
        #expect(empty[1].pdvs[0].data.readableBytes == 0)
        let unlimited = Array(
            try PDataFragmenter(
                presentationContextID: 1, command: Self.bytes(400, seed: 0), dataset: Self.bytes(100_000, seed: 1),
                peerMaximumPDULength: 0))
        #expect(unlimited.map { $0.pdvs[0].data.readableBytes } == [400, 100_000])
        for maximum in [UInt32(1), 6] {
            let error = #expect(throws: PDUError.self) {
                try PDataFragmenter(
                    presentationContextID: 1, command: ByteBuffer(), dataset: nil, peerMaximumPDULength: maximum)
            }
            #expect(error?.code == .invalidMaximumPDULength)
        }
        #expect(try PDataFragmenter.fragmentLength(forPeerMaximumPDULength: 16384) == 16378)
    }

    @Test(
        "Fragment then reassemble round-trips, accumulated and streamed",
        arguments: [UInt32(7), 8, 100, 4096, 16384, 0], [0, 1, 99, 5000]
    )
    func roundTrip(maximum: UInt32, datasetLength: Int) throws {
        let command = Self.bytes(150, seed: 9)
        let dataset = datasetLength == 0 ? nil : Self.bytes(datasetLength, seed: 5)
        let pdus = Array(
            try PDataFragmenter(
                presentationContextID: 5, command: command, dataset: dataset, peerMaximumPDULength: maximum))

        var accumulate = PDataReassembler(datasetDelivery: .accumulate(maximumLength: 1 << 20))
        var stream = PDataReassembler(datasetDelivery: .stream)
        var events: [PDataReassembler.Event] = []
        var streamed = ByteBuffer()
        var streamedLast = false
        for pdu in pdus {
            // Through the wire, so fragments are slices of a decoded PDU.
            var wire = ByteBuffer()
            try pdu.encode(into: &wire)
            guard case .dataTF(let decoded) = try PDU(from: &wire) else {
                Issue.record("expected P-DATA-TF")
                return
            }
            for pdv in decoded.pdvs {
                if let event = try accumulate.receive(pdv) { events.append(event) }
                switch try stream.receive(pdv) {
                case .datasetFragment(let id, let fragment, let isLast):
                    #expect(id == 5)
                    streamed.writeImmutableBuffer(fragment)
                    streamedLast = isLast
                default: break
                }
            }
        }
        var expected: [PDataReassembler.Event] = [.command(presentationContextID: 5, command)]
        if let dataset { expected.append(.dataset(presentationContextID: 5, dataset)) }
        #expect(events == expected)
        #expect(!accumulate.isMidMessage)
        if let dataset {
            #expect(streamed == dataset)
            #expect(streamedLast)
        }
    }

    static func pdv(_ context: UInt8, _ header: PDV.MessageControlHeader, _ count: Int = 4) -> PDV {
        PDV(presentationContextID: context, messageControlHeader: header, data: PDataTests.bytes(count, seed: 0))
    }

    static let sequences: [(String, [PDV], PDUError.Code)] = [
        ("data set without a command", [pdv(1, .dataLast)], .unexpectedFragment),
        ("data set while the command is incomplete", [pdv(1, .commandMore), pdv(1, .dataLast)], .unexpectedFragment),
        ("command switches context", [pdv(1, .commandMore), pdv(3, .commandLast)], .unexpectedFragment),
        (
            "data set on another context than its command", [pdv(1, .commandLast), pdv(3, .dataLast)],
            .unexpectedFragment
        ),
        (
            "data set switches context", [pdv(1, .commandLast), pdv(1, .dataMore), pdv(3, .dataLast)],
            .unexpectedFragment
        ),
        (
            "command while a data set is incomplete", [pdv(1, .commandLast), pdv(1, .dataMore), pdv(1, .commandLast)],
            .unexpectedFragment
        ),
        (
            "second data set without a command", [pdv(1, .commandLast), pdv(1, .dataLast), pdv(1, .dataLast)],
            .unexpectedFragment
        ),
        ("command larger than the limit", [pdv(1, .commandMore, 60), pdv(1, .commandLast, 60)], .messageTooLarge),
        (
            "data set larger than the limit", [pdv(1, .commandLast), pdv(1, .dataMore, 200), pdv(1, .dataLast, 200)],
            .messageTooLarge
        ),
    ]

    @Test("Out-of-order PDVs and oversized messages throw", arguments: sequences)
    func reassemblyErrors(name: String, pdvs: [PDV], code: PDUError.Code) {
        var reassembler = PDataReassembler(maximumCommandLength: 100, datasetDelivery: .accumulate(maximumLength: 300))
        let error = #expect(throws: PDUError.self, "\(name)") {
            for pdv in pdvs { _ = try reassembler.receive(pdv) }
        }
        #expect(error?.code == code, "\(name)")
    }

    @Test("A command with no data set lets the next command start")
    func consecutiveCommands() throws {
        var reassembler = PDataReassembler(datasetDelivery: .stream)
        #expect(try reassembler.receive(Self.pdv(1, .commandLast)) != nil)
        #expect(try reassembler.receive(Self.pdv(3, .commandMore)) == nil)
        #expect(reassembler.isMidMessage)
        #expect(
            try reassembler.receive(Self.pdv(3, .commandLast))
                == .command(presentationContextID: 3, Self.bytes(4, seed: 0).withTwice()))
    }
}

extension ByteBuffer {
    /// The buffer's bytes twice, for expected reassembled values.
    fileprivate func withTwice() -> ByteBuffer {
        var copy = self
        copy.writeImmutableBuffer(self)
        return copy
    }
}

@Suite("P-DATA reassembly scale", .timeLimit(.minutes(2)))
struct PDataScaleTests {
    @Test("Accumulating 32 MiB in 16 KiB fragments appends in place (no quadratic copying)")
    func largeDataset() throws {
        let total = 32 << 20
        let dataset = ByteBuffer(repeating: 0xAB, count: total)
        var reassembler = PDataReassembler(datasetDelivery: .accumulate(maximumLength: total))
        _ = try reassembler.receive(
            PDV(presentationContextID: 1, messageControlHeader: .commandLast, data: ByteBuffer(bytes: [1])))
        var result: PDataReassembler.Event?
        for pdu in try PDataFragmenter(
            presentationContextID: 1, command: ByteBuffer(), dataset: dataset, peerMaximumPDULength: 16384)
        where !pdu.pdvs[0].messageControlHeader.isCommand {
            result = try reassembler.receive(pdu.pdvs[0])
        }
        #expect(result == .dataset(presentationContextID: 1, dataset))
    }
}

@Suite(.timeLimit(.minutes(2))) struct UnrecognizedCommandTests {
    @Test("a request of a Command Field px does not type decodes, and its answer is 0x0211 with bit 15 set")
    func unrecognizedRequest() throws {
        var request = CommandSet()
        request[CommandSet.Element.commandField] = .uint16(0x0120)  // N-SET-RQ
        request[CommandSet.Element.messageID] = .uint16(9)
        request[CommandSet.Element.requestedSOPClassUID] = .string("1.2.3")
        request[CommandSet.Element.commandDataSetType] = .uint16(CommandSet.noDataSet)
        let message = try DIMSEMessage(commandSetBytes: request.encoded())
        #expect(message == .unrecognized(request))
        #expect(message.messageID == 9)
        let response = try #require(message.unrecognizedOperationResponse)
        #expect(response.commandSet.uint16(CommandSet.Element.commandField) == 0x8120)
        #expect(response.commandSet.uint16(CommandSet.Element.messageIDBeingRespondedTo) == 9)
        #expect(response.commandSet.uint16(CommandSet.Element.status) == 0x0211)
        #expect(response.commandSet.string(CommandSet.Element.affectedSOPClassUID) == "1.2.3")
        #expect(!response.hasDataSet)
        #expect(response.unrecognizedOperationResponse == nil)
        // A command set with no Command Field is still an error.
        var bad = request
        bad[CommandSet.Element.commandField] = nil
        #expect(throws: DIMSEError.self) { try DIMSEMessage(commandSetBytes: bad.encoded()) }
    }
}
