import Testing

@testable import DICOMProtocol

@Suite(.timeLimit(.minutes(2))) struct PDUTypeTests {
    @Test func rawValuesFollowPS38() {
        #expect(PDUType(rawValue: 0x04) == .dataTF)
        #expect(PDUType(rawValue: 0x08) == nil)
        #expect(PDUType.associateRQ.description == "A-ASSOCIATE-RQ")
    }
}
