import DICOMData
import NIOCore
import Testing

@testable import DICOMProtocol

/// N-ACTION and N-EVENT-REPORT (PS3.7 §10.3.1, §10.3.4) and the Storage Commitment Push Model data sets
/// (PS3.4 §J.3.2, §J.3.3).
@Suite("DIMSE-N storage commitment messages", .timeLimit(.minutes(2)))
struct StorageCommitmentMessageTests {
    /// One Implicit VR Little Endian element of group 0000.
    static func element(_ number: UInt16, _ value: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [0, 0, UInt8(number & 0xFF), UInt8(number >> 8)]
        let length = UInt32(value.count)
        bytes += [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)]
        return bytes + value
    }
    static func us(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
    static func ui(_ text: String) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.count % 2 == 1 { bytes.append(0) }
        return bytes
    }
    /// The command set as PS3.7 §E.1 lays it out: Command Group Length, then the elements in ascending order.
    static func commandSet(_ elements: [[UInt8]]) -> [UInt8] {
        let body = elements.flatMap { $0 }
        let length = UInt32(body.count)
        return element(
            0x0000, [UInt8(length & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 24)])
            + body
    }

    @Test("N-ACTION-RQ encodes the elements of PS3.7 Table 10.3-7 in order, and decodes back")
    func nActionRequest() throws {
        let message = DIMSEMessage.nActionRQ(
            NActionRQ(
                messageID: 7, requestedSOPClassUID: StorageCommitment.sopClassUID,
                requestedSOPInstanceUID: StorageCommitment.sopInstanceUID, actionTypeID: 1))
        let encoded = Array(message.commandSet.encoded().readableBytesView)
        let expected = Self.commandSet([
            Self.element(0x0003, Self.ui("1.2.840.10008.1.20.1")),  // Requested SOP Class UID
            Self.element(0x0100, Self.us(0x0130)),  // Command Field
            Self.element(0x0110, Self.us(7)),  // Message ID
            Self.element(0x0800, Self.us(0x0001)),  // Command Data Set Type: a data set follows
            Self.element(0x1001, Self.ui("1.2.840.10008.1.20.1.1")),  // Requested SOP Instance UID
            Self.element(0x1008, Self.us(1)),  // Action Type ID
        ])
        #expect(encoded == expected)
        let decoded = try DIMSEMessage(commandSetBytes: ByteBuffer(bytes: expected))
        #expect(decoded == message)
        #expect(decoded.messageID == 7)
        #expect(decoded.hasDataSet)
        #expect(decoded.commandField.description == "N-ACTION-RQ")
    }

    @Test("N-ACTION-RSP carries Status, Action Type ID and the Affected SOP Class/Instance UIDs")
    func nActionResponse() throws {
        let message = DIMSEMessage.nActionRSP(
            NActionRSP(
                messageIDBeingRespondedTo: 7, affectedSOPClassUID: StorageCommitment.sopClassUID,
                affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, actionTypeID: 1, status: .success))
        let expected = Self.commandSet([
            Self.element(0x0002, Self.ui("1.2.840.10008.1.20.1")),
            Self.element(0x0100, Self.us(0x8130)),
            Self.element(0x0120, Self.us(7)),
            Self.element(0x0800, Self.us(0x0101)),
            Self.element(0x0900, Self.us(0x0000)),
            Self.element(0x1000, Self.ui("1.2.840.10008.1.20.1.1")),
            Self.element(0x1008, Self.us(1)),
        ])
        #expect(Array(message.commandSet.encoded().readableBytesView) == expected)
        let decoded = try DIMSEMessage(commandSetBytes: ByteBuffer(bytes: expected))
        #expect(decoded == message)
        #expect(decoded.messageIDBeingRespondedTo == 7)
        #expect(decoded.status == .success)
        #expect(!decoded.hasDataSet)
    }

    @Test("N-EVENT-REPORT-RQ and -RSP encode the elements of PS3.7 Tables 10.3-1 and 10.3-2")
    func nEventReport() throws {
        let request = DIMSEMessage.nEventReportRQ(
            NEventReportRQ(
                messageID: 3, affectedSOPClassUID: StorageCommitment.sopClassUID,
                affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, eventTypeID: 2))
        let expectedRequest = Self.commandSet([
            Self.element(0x0002, Self.ui("1.2.840.10008.1.20.1")),
            Self.element(0x0100, Self.us(0x0100)),
            Self.element(0x0110, Self.us(3)),
            Self.element(0x0800, Self.us(0x0001)),
            Self.element(0x1000, Self.ui("1.2.840.10008.1.20.1.1")),
            Self.element(0x1002, Self.us(2)),  // Event Type ID
        ])
        #expect(Array(request.commandSet.encoded().readableBytesView) == expectedRequest)
        #expect(try DIMSEMessage(commandSetBytes: ByteBuffer(bytes: expectedRequest)) == request)

        let response = DIMSEMessage.nEventReportRSP(
            NEventReportRSP(
                messageIDBeingRespondedTo: 3, affectedSOPClassUID: StorageCommitment.sopClassUID,
                affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, eventTypeID: 2,
                status: .processingFailure))
        let expectedResponse = Self.commandSet([
            Self.element(0x0002, Self.ui("1.2.840.10008.1.20.1")),
            Self.element(0x0100, Self.us(0x8100)),
            Self.element(0x0120, Self.us(3)),
            Self.element(0x0800, Self.us(0x0101)),
            Self.element(0x0900, Self.us(0x0110)),
            Self.element(0x1000, Self.ui("1.2.840.10008.1.20.1.1")),
            Self.element(0x1002, Self.us(2)),
        ])
        #expect(Array(response.commandSet.encoded().readableBytesView) == expectedResponse)
        let decoded = try DIMSEMessage(commandSetBytes: ByteBuffer(bytes: expectedResponse))
        #expect(decoded == response)
        #expect(decoded.status == .processingFailure)
    }

    @Test("a request missing a required element is an error, not a message")
    func missingElements() throws {
        var set = NActionRQ(
            messageID: 1, requestedSOPClassUID: StorageCommitment.sopClassUID,
            requestedSOPInstanceUID: StorageCommitment.sopInstanceUID, actionTypeID: 1
        ).commandSet
        set[CommandSet.Element.actionTypeID] = nil
        #expect(throws: DIMSEError.self) { try DIMSEMessage(commandSetBytes: set.encoded()) }
        var event = NEventReportRQ(
            messageID: 1, affectedSOPClassUID: StorageCommitment.sopClassUID,
            affectedSOPInstanceUID: StorageCommitment.sopInstanceUID, eventTypeID: 1
        ).commandSet
        event[CommandSet.Element.eventTypeID] = nil
        #expect(throws: DIMSEError.self) { try DIMSEMessage(commandSetBytes: event.encoded()) }
    }

    @Test("the Action and Event Information data sets round-trip through Explicit VR Little Endian")
    func dataSets() throws {
        let references = (1...3).map {
            StorageCommitment.Reference(sopClassUID: "1.2.840.10008.5.1.4.1.1.2", sopInstanceUID: "1.2.3.\($0)")
        }
        let request = StorageCommitment.Request(transactionUID: "2.25.42", references: references)
        let syntax = TransferSyntax(uid: "1.2.840.10008.1.2.1")
        let requestBytes = try DataSetWriter.encode(request.dataSet, transferSyntax: syntax)
        let readRequest = try DataSetReader.read(requestBytes, transferSyntax: syntax).dataSet
        #expect(readRequest.string(Tag(0x0008, 0x1195)) == "2.25.42")
        #expect(readRequest.items(Tag(0x0008, 0x1199))?.count == 3)
        #expect(try StorageCommitment.Request(dataSet: readRequest) == request)

        let report = StorageCommitment.Report(
            transactionUID: "2.25.42", committed: Array(references.prefix(2)),
            failed: [
                StorageCommitment.Failure(
                    sopClassUID: references[2].sopClassUID, sopInstanceUID: references[2].sopInstanceUID,
                    failureReason: 0x0112)
            ])
        #expect(report.eventTypeID == 2)
        let reportBytes = try DataSetWriter.encode(report.dataSet, transferSyntax: syntax)
        let readReport = try DataSetReader.read(reportBytes, transferSyntax: syntax).dataSet
        let failedItem = try #require(readReport.items(Tag(0x0008, 0x1198))?.first)
        #expect(failedItem.dataSet.integer(Tag(0x0008, 0x1197)) == 0x0112)
        #expect(failedItem.dataSet[Tag(0x0008, 0x1197)]?.vr == .US)
        #expect(try StorageCommitment.Report(dataSet: readReport) == report)

        let allGood = StorageCommitment.Report(transactionUID: "2.25.42", committed: references, failed: [])
        #expect(allGood.eventTypeID == 1)
        #expect(allGood.dataSet[Tag(0x0008, 0x1198)] == nil)  // no empty Failed SOP Sequence
    }

    @Test("a data set without Transaction UID or with an item lacking its UIDs is refused")
    func malformedDataSets() throws {
        var noTransaction = StorageCommitment.Request(
            transactionUID: "2.25.1",
            references: [StorageCommitment.Reference(sopClassUID: "1.2", sopInstanceUID: "1.2.3")]
        ).dataSet
        _ = noTransaction.remove(Tag(0x0008, 0x1195))
        #expect(throws: DIMSEError.self) { try StorageCommitment.Request(dataSet: noTransaction) }

        var badItem = DataSet()
        badItem.set(Tag(0x0008, 0x1195), vr: .UI, string: "2.25.1")
        var item = DataSet()
        item.set(Tag(0x0008, 0x1150), vr: .UI, string: "1.2")
        badItem.set(DataElement(tag: Tag(0x0008, 0x1199), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        #expect(throws: DIMSEError.self) { try StorageCommitment.Request(dataSet: badItem) }
    }

    @Test("more Referenced SOP Sequence items than the cap are refused")
    func referenceCap() throws {
        let item = Item(
            dataSet: StorageCommitment.Request(
                transactionUID: "2.25.1",
                references: [StorageCommitment.Reference(sopClassUID: "1.2", sopInstanceUID: "1.2.3")]
            ).dataSet.items(Tag(0x0008, 0x1199))![0].dataSet)
        var dataSet = DataSet()
        dataSet.set(Tag(0x0008, 0x1195), vr: .UI, string: "2.25.1")
        dataSet.set(
            DataElement(
                tag: Tag(0x0008, 0x1199), vr: .SQ,
                value: .sequence(Array(repeating: item, count: StorageCommitment.maximumReferences + 1))))
        #expect(throws: DIMSEError.self) { try StorageCommitment.Request(dataSet: dataSet) }
        #expect(throws: DIMSEError.self) { try StorageCommitment.Report(dataSet: dataSet) }
    }
}
