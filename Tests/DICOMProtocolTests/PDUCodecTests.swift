import NIOCore
import Testing

@testable import DICOMProtocol

@Suite("PDU codecs (PS3.8 §9.3)", .timeLimit(.minutes(2)))
struct PDUCodecTests {
    @Test("DCMTK echoscu A-ASSOCIATE-RQ decodes and re-encodes byte for byte")
    func dcmtkAssociateRQRoundTrip() throws {
        var input = buffer(hex: dcmtkEchoAssociateRQ)
        let original = input
        let pdu = try PDU(from: &input)
        #expect(input.readableBytes == 0)
        guard case .associateRQ(let rq) = pdu else {
            Issue.record("expected A-ASSOCIATE-RQ, got \(pdu)")
            return
        }
        #expect(rq.protocolVersion == 1)
        #expect(rq.calledAETitle == "ANY-SCP")
        #expect(rq.callingAETitle == "ECHOSCU")
        #expect(rq.applicationContextName == "1.2.840.10008.3.1.1.1")
        #expect(rq.presentationContexts.count == 1)
        #expect(rq.presentationContexts.first?.id == 1)
        #expect(rq.presentationContexts.first?.abstractSyntax == "1.2.840.10008.1.1")
        #expect(rq.presentationContexts.first?.transferSyntaxes == ["1.2.840.10008.1.2"])
        // DCMTK puts 0xFF in the second reserved byte; it is kept only to re-encode byte for byte.
        #expect(rq.presentationContexts.first?.reservedBytes == [0x00, 0xFF, 0x00])
        #expect(rq.userInformation.maximumLength == 16384)
        #expect(rq.userInformation.implementationClassUID == "1.2.276.0.7230010.3.0.3.6.7")
        #expect(rq.userInformation.implementationVersionName == "OFFIS_DCMTK_367")
        #expect(rq.userInformation.roleSelections.isEmpty)
        #expect(rq.userInformation.unknownSubItems.isEmpty)

        var out = ByteBuffer()
        try pdu.encode(into: &out)
        #expect(hex(out) == hex(original))

        // The typed entry point agrees with the enum one.
        var again = original
        #expect(try AssociateRQ(from: &again) == rq)
    }

    @Test("A-ASSOCIATE-RJ 03 00 00000004 00 01 01 01")
    func associateRJ() throws {
        var input = buffer(hex: "03 00 00000004 00 01 01 01")
        let pdu = try PDU(from: &input)
        let expected = AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .noReasonGiven)
        #expect(pdu == .associateRJ(expected))
        #expect(expected.description == "Result: Rejected Permanent, Source: Service User, Reason: No Reason")
        var out = ByteBuffer()
        try pdu.encode(into: &out)
        #expect(hex(out) == "03000000000400010101")
    }

    @Test(
        "A-ASSOCIATE-RJ descriptions match DCMTK's wording",
        arguments: [
            (
                UInt8(1), UInt8(1), UInt8(7),
                "Result: Rejected Permanent, Source: Service User, Reason: Called AE Title Not Recognized"
            ),
            (1, 1, 3, "Result: Rejected Permanent, Source: Service User, Reason: Calling AE Title Not Recognized"),
            (1, 1, 2, "Result: Rejected Permanent, Source: Service User, Reason: App Context Name Not Supported"),
            (
                1, 2, 2,
                "Result: Rejected Permanent, Source: Service Provider (ACSE Related), Reason: Protocol Version Not Supported"
            ),
            (
                2, 3, 1,
                "Result: Rejected Transient, Source: Service Provider (Presentation Related), Reason: Temporary Congestion"
            ),
            (
                2, 3, 2,
                "Result: Rejected Transient, Source: Service Provider (Presentation Related), Reason: Local Limit Exceeded"
            ),
        ]
    )
    func associateRJDescriptions(result: UInt8, source: UInt8, reason: UInt8, text: String) throws {
        var body = ByteBuffer(bytes: [0, result, source, reason])
        let rj = try AssociateRJ(body: &body)
        #expect(rj.description == text)
    }

    @Test("A-RELEASE-RQ, A-RELEASE-RP and A-ABORT encode and decode")
    func fixedPDUs() throws {
        for (hexString, pdu) in [
            ("05 00 00000004 00000000", PDU.releaseRQ),
            ("06 00 00000004 00000000", PDU.releaseRP),
            ("07 00 00000004 0000 00 00", PDU.abort(Abort())),
            ("07 00 00000004 0000 02 02", PDU.abort(.provider(.unexpectedPDU))),
            ("07 00 00000004 0000 02 06", PDU.abort(.provider(.invalidPDUParameterValue))),
        ] {
            var input = buffer(hex: hexString)
            #expect(try PDU(from: &input) == pdu)
            var out = ByteBuffer()
            try pdu.encode(into: &out)
            #expect(hex(out) == hex(buffer(hex: hexString)))
        }
        // Reserved bytes are not tested.
        var withJunk = buffer(hex: "05 00 00000004 FFFFFFFF")
        #expect(try PDU(from: &withJunk) == .releaseRQ)
        var abortJunk = buffer(hex: "07 FF 00000004 FFFF 02 01")
        #expect(try PDU(from: &abortJunk) == .abort(.provider(.unrecognizedPDU)))
    }

    @Test("P-DATA-TF with two PDVs; fragments are zero-copy slices")
    func pDataTF() throws {
        let hexString = "04 00 00000012 00000005 01 03 AABBCC 00000005 01 02 DDEEFF"
        var input = buffer(hex: hexString)
        let pdu = try PDU(from: &input)
        guard case .dataTF(let data) = pdu else {
            Issue.record("expected P-DATA-TF")
            return
        }
        #expect(data.pdvs.count == 2)
        #expect(data.pdvs[0].presentationContextID == 1)
        #expect(data.pdvs[0].messageControlHeader == .commandLast)
        #expect(data.pdvs[0].messageControlHeader.isCommand)
        #expect(data.pdvs[0].messageControlHeader.isLastFragment)
        #expect(data.pdvs[1].messageControlHeader == .dataLast)
        #expect(!data.pdvs[1].messageControlHeader.isCommand)
        #expect(hex(data.pdvs[1].data) == "ddeeff")
        var out = ByteBuffer()
        try pdu.encode(into: &out)
        #expect(hex(out) == hex(buffer(hex: hexString)))
    }

    @Test("A-ASSOCIATE-AC with a zero-length or absent transfer syntax for rejected contexts")
    func associateACRejectedContexts() throws {
        let ac = AssociateAC(
            calledAETitle: "ANY-SCP",
            callingAETitle: "ECHOSCU",
            presentationContexts: [
                PresentationContextAC(id: 1, result: .acceptance, transferSyntax: "1.2.840.10008.1.2"),
                PresentationContextAC(id: 3, result: .abstractSyntaxNotSupported, transferSyntax: nil),
            ],
            userInformation: UserInformation(
                maximumLength: 16384, implementationClassUID: "1.2.3", implementationVersionName: "PX")
        )
        var out = ByteBuffer()
        try ac.encode(into: &out)
        // The rejected context carries a zero-length 0x40 sub-item.
        #expect(hex(out).contains("2100000803000300" + "40000000"))
        var input = out
        #expect(try AssociateAC(from: &input) == ac)

        // Absent transfer syntax sub-item in a rejected context also decodes.
        var item = buffer(hex: "21 00 0004 05 00 04 00")
        let context = try PresentationContextAC(from: &item)
        #expect(context == PresentationContextAC(id: 5, result: .transferSyntaxesNotSupported, transferSyntax: nil))
    }

    @Test("Role selection, async window, user identity, extended negotiation round-trip")
    func userInformationSubItems() throws {
        let info = UserInformation(
            maximumLength: 0,
            implementationClassUID: "1.2.826.0.1.3680043.9.7433",
            implementationVersionName: "PX_1",
            asynchronousOperationsWindow: AsynchronousOperationsWindow(
                maximumOperationsInvoked: 1, maximumOperationsPerformed: 1),
            roleSelections: [RoleSelection(sopClassUID: "1.2.840.10008.5.1.4.1.1.2", scuRole: false, scpRole: true)],
            extendedNegotiations: [
                SOPClassExtendedNegotiation(
                    sopClassUID: "1.2.840.10008.5.1.4.1.2.2.1",
                    serviceClassApplicationInformation: ByteBuffer(bytes: [1, 1, 0]))
            ],
            commonExtendedNegotiations: [
                SOPClassCommonExtendedNegotiation(
                    sopClassUID: "1.2.840.10008.5.1.4.1.1.88.22",
                    serviceClassUID: "1.2.840.10008.4.2",
                    relatedGeneralSOPClassUIDs: ["1.2.840.10008.5.1.4.1.1.88.11"]
                )
            ],
            userIdentityRequest: UserIdentityRQ(
                identityType: .usernameAndPasscode,
                positiveResponseRequested: true,
                primaryField: ascii("alice"),
                secondaryField: ascii("secret")
            ),
            unknownSubItems: [UnknownSubItem(type: 0x7F, body: ByteBuffer(bytes: [9, 8, 7]))]
        )
        var out = ByteBuffer()
        try info.encode(into: &out)
        var input = out
        let decoded = try UserInformation(from: &input)
        #expect(decoded == info)
        #expect(input.readableBytes == 0)
    }

    @Test("Role selection wire order is SCU then SCP (PS3.7 §D.3.3.4)")
    func roleSelectionWireOrder() throws {
        var out = ByteBuffer()
        try RoleSelection(sopClassUID: "1.2", scuRole: false, scpRole: true).encode(into: &out)
        #expect(hex(out) == "54000007" + "0003" + "312e32" + "00" + "01")
    }

    @Test("User identity sub-items, RQ type 1 without secondary length and AC response")
    func userIdentity() throws {
        // 0x58, type 1 (username), no positive response, primary "bob", secondary length 0.
        var rq = buffer(hex: "50 00 001A  51 00 0004 00004000  52 00 0001 31  58 00 0009 01 00 0003 626f62 0000")
        let info = try UserInformation(from: &rq)
        #expect(info.userIdentityRequest?.identityType == .username)
        #expect(info.userIdentityRequest?.positiveResponseRequested == false)
        #expect(info.userIdentityRequest?.primaryField == ascii("bob"))
        #expect(info.userIdentityRequest?.secondaryField.readableBytes == 0)

        // Some peers omit the secondary-field length for type 1.
        var short = buffer(hex: "50 00 0018  51 00 0004 00004000  52 00 0001 31  58 00 0007 01 01 0003 626f62")
        let shortInfo = try UserInformation(from: &short)
        #expect(shortInfo.userIdentityRequest?.positiveResponseRequested == true)
        #expect(shortInfo.userIdentityRequest?.primaryField == ascii("bob"))

        var ac = buffer(hex: "50 00 0013  51 00 0004 00004000  52 00 0001 31  59 00 0002 0000")
        let acInfo = try UserInformation(from: &ac)
        #expect(acInfo.userIdentityResponse == UserIdentityAC())
    }

    @Test("Unknown user information sub-items are preserved verbatim")
    func unknownSubItemsPreserved() throws {
        let hexString = "50 00 0018  51 00 0004 00004000  52 00 0001 31  EE 07 0003 010203  51 00 0000"
        // The last item is a second maximum length (0x51) which is an error: test the first part alone.
        let good = "50 00 0013  51 00 0004 00004000  52 00 0001 31  EE 07 0002 0102"
        var input = buffer(hex: good)
        let info = try UserInformation(from: &input)
        #expect(info.unknownSubItems == [UnknownSubItem(type: 0xEE, reserved: 7, body: ByteBuffer(bytes: [1, 2]))])
        var out = ByteBuffer()
        try info.encode(into: &out)
        #expect(hex(out) == hex(buffer(hex: good)))
        var bad = buffer(hex: hexString)
        #expect(throws: PDUError.self) { try UserInformation(from: &bad) }
    }

    @Test("AE titles are space-padded to 16 on write and trimmed on read")
    func aeTitlePadding() throws {
        var out = ByteBuffer()
        out.writeAETitle("PX")
        #expect(hex(out) == "5058" + String(repeating: "20", count: 14))
        var input = buffer(hex: "20205058202020202020202020202020")
        #expect(try input.readAETitle("AE") == "PX")
    }

    @Test("A-ASSOCIATE-RQ with an unsupported protocol version still decodes (the acceptor answers with RJ)")
    func rqProtocolVersionIsLenient() throws {
        var bytes = buffer(hex: dcmtkEchoAssociateRQ)
        bytes.setInteger(UInt16(2), at: 6, endianness: .big)
        let rq = try AssociateRQ(from: &bytes)
        #expect(rq.protocolVersion == 2)
        #expect(!rq.supportsProtocolVersion1)
    }

    @Test("A-ASSOCIATE-AC with an unsupported protocol version throws")
    func acProtocolVersion() throws {
        var ac = ByteBuffer()
        try AssociateAC(
            protocolVersion: 2,
            calledAETitle: "A",
            callingAETitle: "B",
            presentationContexts: [],
            userInformation: UserInformation(maximumLength: 0, implementationClassUID: "1")
        ).encode(into: &ac)
        let error = #expect(throws: PDUError.self) { try AssociateAC(from: &ac) }
        #expect(error?.code == .unsupportedProtocolVersion)
    }

    /// Malformed inputs, each with the error code it must raise.
    static let malformed: [(String, String, PDUError.Code)] = [
        ("empty input", "", .truncated),
        ("header only partly present", "01 00 0000", .truncated),
        ("body shorter than announced", "05 00 00000004 0000", .truncated),
        ("unknown PDU type", "08 00 00000004 00000000", .unrecognizedPDUType),
        ("A-RELEASE-RQ of length 3", "05 00 00000003 000000", .invalidLength),
        ("A-RELEASE-RP of length 5", "06 00 00000005 0000000000", .invalidLength),
        ("A-ABORT of length 2", "07 00 00000002 0000", .invalidLength),
        ("A-ASSOCIATE-RJ of length 5", "03 00 00000005 0001010100", .invalidLength),
        ("A-ASSOCIATE-RJ with result 3", "03 00 00000004 00 03 01 01", .invalidParameterValue),
        ("A-ASSOCIATE-RJ with source 4", "03 00 00000004 00 01 04 01", .invalidParameterValue),
        ("P-DATA-TF without PDVs", "04 00 00000000", .missingItem),
        ("PDV item length 1", "04 00 00000005 00000001 01", .invalidLength),
        ("PDV item length past the PDU", "04 00 00000008 00000010 01 03 AABB", .lengthExceedsParent),
        ("PDV header truncated", "04 00 00000003 000000", .truncated),
        ("PDV message control header with reserved bits", "04 00 00000007 00000003 01 07 AA", .invalidParameterValue),
        ("A-ASSOCIATE-RQ shorter than its fixed fields", "01 00 00000004 00010000", .truncated),
    ]

    @Test("Malformed PDUs throw typed errors", arguments: malformed)
    func malformedPDUs(name: String, hexString: String, code: PDUError.Code) {
        var input = buffer(hex: hexString)
        let error = #expect(throws: PDUError.self, "\(name)") { try PDU(from: &input) }
        #expect(error?.code == code, "\(name): \(String(describing: error))")
    }

    /// Mutations of the DCMTK RQ that must be rejected: (name, byte offset, new byte, expected code).
    static let rqMutations: [(String, Int, UInt8, PDUError.Code)] = [
        ("application context item length past the end", 0x4C, 0xFF, .lengthExceedsParent),
        ("presentation context item length past the end", 0x65, 0xFF, .lengthExceedsParent),
        ("abstract syntax sub-item length past its item", 0x6E, 0x40, .lengthExceedsParent),
        ("user information length past the end", 0x98, 0xFF, .lengthExceedsParent),
        ("maximum length sub-item of length 5", 0x9C, 0x05, .invalidLength),
        ("unknown top-level item type", 0x4A, 0x11, .unrecognizedItemType),
        ("unknown sub-item in a presentation context", 0x6B, 0x31, .unrecognizedItemType),
        ("maximum length sub-item replaced by unknown sub-item", 0x99, 0x5F, .missingItem),
        ("second application context instead of presentation context", 0x63, 0x10, .unexpectedItem),
    ]

    @Test("Corrupted DCMTK A-ASSOCIATE-RQ throws typed errors", arguments: rqMutations)
    func corruptedAssociateRQ(name: String, offset: Int, byte: UInt8, code: PDUError.Code) {
        var input = buffer(hex: dcmtkEchoAssociateRQ)
        input.setInteger(byte, at: offset)
        let error = #expect(throws: PDUError.self, "\(name)") { try PDU(from: &input) }
        #expect(error?.code == code, "\(name): \(String(describing: error))")
    }

    @Test("Every truncation of the DCMTK A-ASSOCIATE-RQ throws, never traps")
    func truncatedAssociateRQ() {
        let full = buffer(hex: dcmtkEchoAssociateRQ)
        for length in 0..<full.readableBytes {
            var prefix = full.getSlice(at: 0, length: length) ?? ByteBuffer()
            #expect(throws: PDUError.self) { try PDU(from: &prefix) }
            // Also with a consistent (shrunk) length field, so the items themselves are truncated.
            if length > 6 {
                var shrunk = prefix
                shrunk.setInteger(UInt32(length - 6), at: 2, endianness: .big)
                #expect(throws: PDUError.self) { try PDU(from: &shrunk) }
            }
        }
    }

    @Test("Encoding refuses values that do not fit their length fields")
    func encodeTooLong() {
        let huge = String(repeating: "1", count: 70_000)
        let context = PresentationContextRQ(id: 1, abstractSyntax: huge, transferSyntaxes: ["1.2"])
        var out = ByteBuffer()
        let error = #expect(throws: PDUError.self) { try context.encode(into: &out) }
        #expect(error?.code == .valueTooLong)
    }

    @Test("PDUError maps to A-ABORT reasons")
    func abortReasons() {
        #expect(PDUError.unrecognizedPDUType(9).abortReason == .unrecognizedPDU)
        #expect(PDUError.unrecognizedItemType(9, in: "x").abortReason == .unrecognizedPDUParameter)
        #expect(PDUError.unexpectedItem("x", in: "y").abortReason == .unexpectedPDUParameter)
        #expect(PDUError.truncated("x", needed: 1, available: 0).abortReason == .invalidPDUParameterValue)
        #expect(PDUError.pduTooLarge(type: 4, announced: 10, maximum: 5).abortReason == .invalidPDUParameterValue)
    }
}
