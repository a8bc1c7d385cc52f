import NIOCore
import Testing

@testable import DICOMProtocol

/// Inputs the libFuzzer targets of Fuzz/ found (scripts/fuzz.sh), kept as regression tests.
@Suite("Fuzzer findings: PDU codecs")
struct PDUFuzzRegressionTests {
    /// fuzz-pdu: an A-ASSOCIATE-RQ whose called AE title ends in FF FF FF BD and whose transfer syntax
    /// holds D4 CF CF CF decoded with those bytes replaced by U+FFFD, so the decoded PDU re-encoded as other
    /// bytes and decoded to another PDU. AE titles and UIDs are ISO 646 text (PS3.8 §9.3.2): refused now.
    static let nonASCIIAssociateRQ =
        "0100000001ab00010000414e592d534350202020202020ffffffbd43484f5343552020202020202020200000000000000000"
        + "00000000000000000000000000000000000000000000000010000015322e322e3834302e31303030382e332e312e312e3120"
        + "00002e0100000030000011312e322e3834302e31303030382e312e3140000011312e322e3834302ed4cfcfcf382e312e3220"
        + "0000360300000030000019312e322e3834302e31303030382e352e312e342e312e312e3240000011312e322e3834302e3130"
        + "3030382e312e32200000360500000030000019312e322e3834302e31303030382e352e312e342e312e312e3440000011312e"
        + "322e3834302e31303030382e312e32500000a45100000400003ffe52000020312e322e3832362e302e312e33363830303433"
        + "2e392e333831312e302e392e305500000e50594e45544449434f4d5f303930580000100101000a70796e65746469636f6d00"
        + "005300000400050005560000210019312e322e3834302e31303030382e352e312e342e312e312e3202000301005600000021"
        + "0019312e322e3834302e31303030005f5100000400003ffe520000020003000100"

    @Test("the fuzzer's A-ASSOCIATE-RQ with non-ISO 646 bytes in an AE title and a UID is refused")
    func fuzzedNonASCIIAssociateRQ() {
        var input = buffer(hex: Self.nonASCIIAssociateRQ)
        #expect(throws: PDUError.self) { try PDU(from: &input) }
        do {
            var again = buffer(hex: Self.nonASCIIAssociateRQ)
            _ = try PDU(from: &again)
        } catch let error as PDUError {
            #expect(error.code == .invalidParameterValue)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test(
        "a byte above 0x7F in the calling AE title, the abstract syntax or the implementation version name is refused")
    func nonASCIIFieldsRefused() throws {
        let original = Array(buffer(hex: dcmtkEchoAssociateRQ).readableBytesView)
        // The well-formed request decodes, and re-encodes byte for byte.
        var good = ByteBuffer(bytes: original)
        let pdu = try PDU(from: &good)
        var encoded = ByteBuffer()
        try pdu.encode(into: &encoded)
        #expect(Array(encoded.readableBytesView) == original)

        let callingAETitle = 6 + 4 + 16  // PDU header, protocol version and reserved, called AE title
        // The abstract syntax sub-item: type 0x30, reserved, length 0x0011, then the UID.
        let abstractSyntax =
            (0..<original.count - 4).first { original[$0..<($0 + 4)] == [0x30, 0x00, 0x00, 0x11] }! + 4
        let versionName = original.count - 1  // last byte of "OFFIS_DCMTK_367"
        for offset in [callingAETitle, callingAETitle + 15, abstractSyntax, versionName] {
            var bytes = original
            bytes[offset] = 0xE9
            var input = ByteBuffer(bytes: bytes)
            do {
                let decoded = try PDU(from: &input)
                Issue.record("byte 0xE9 at \(offset) decoded as \(decoded)")
            } catch let error as PDUError {
                #expect(error.code == .invalidParameterValue, "offset \(offset)")
            }
        }
    }
}
