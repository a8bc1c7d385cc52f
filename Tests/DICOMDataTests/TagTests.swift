import Testing

@testable import DICOMData

@Suite(.timeLimit(.minutes(2))) struct TagTests {
    @Test func parsesTheThreeSpellings() {
        #expect(Tag(parsing: "00100010") == .patientName)
        #expect(Tag(parsing: "0010,0010") == .patientName)
        #expect(Tag(parsing: "(0010,0010)") == .patientName)
        #expect(Tag(parsing: "0010-0010") == nil)
        #expect(Tag(parsing: "001000100") == nil)
    }

    @Test func rendersHexAndDescription() {
        #expect(Tag(0x7FE0, 0x0010).hexString == "7FE00010")
        #expect(Tag(0x0020, 0x000D).description == "(0020,000d)")
    }

    @Test func ordersByGroupThenElement() {
        #expect(Tag(0x0008, 0xFFFF) < Tag(0x0010, 0x0000))
    }
}
