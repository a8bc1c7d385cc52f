import Testing

@testable import DICOMData

@Suite("Typed values", .timeLimit(.minutes(2)))
struct ValueTests {
    @Test func personNameGroupsAndComponents() {
        let name = PersonName(parsing: "Yamada^Tarou=山田^太郎=やまだ^たろう")
        #expect(name.alphabetic.familyName == "Yamada")
        #expect(name.ideographic.givenName == "太郎")
        #expect(name.phonetic.text == "やまだ^たろう")
        let plain = PersonName(parsing: "O'Brien^Mary^Ann^Dr.^PhD")
        #expect(plain.alphabetic.namePrefix == "Dr.")
        #expect(plain.alphabetic.nameSuffix == "PhD")
        #expect(plain.ideographic.isEmpty)
        #expect(plain.description == "O'Brien^Mary^Ann^Dr.^PhD")
    }

    @Test func datesTimesAndDateTimes() {
        #expect(DICOMDate("20240115")?.description == "2024-01-15")
        #expect(DICOMDate("2024.01.15")?.day == 15)
        #expect(DICOMDate("20241315") == nil)
        #expect(DICOMTime("101530.25")?.second == 30)
        #expect(DICOMTime("10")?.hour == 10)
        #expect(DICOMTime("2560") == nil)
        let dt = DICOMDateTime("20240115101530.5+0130")
        #expect(dt?.time?.minute == 15)
        #expect(dt?.utcOffsetMinutes == 90)
        #expect(DICOMDateTime("2024")?.month == 1)
        #expect(DICOMDateTime("20x4") == nil)
    }

    @Test func multiValuesSplitOnBackslashExceptSingleValuedVRs() {
        var set = DataSet()
        set.set(Tag(0x0008, 0x0008), vr: .CS, strings: ["ORIGINAL", "PRIMARY", "AXIAL"])
        set.set(Tag(0x0010, 0x4000), vr: .LT, string: " keep\\this ")
        #expect(set.strings(Tag(0x0008, 0x0008)) == ["ORIGINAL", "PRIMARY", "AXIAL"])
        #expect(set.strings(Tag(0x0010, 0x4000)) == [" keep\\this"])
        #expect(set.string(Tag(0x0099, 0x0001)) == nil)
    }

    /// Values are split on the bytes before decoding where byte 5C is always the delimiter; that must
    /// give what decoding first and splitting the text gives, and the other sets keep decoding first.
    @Test func splittingBytesAgreesWithSplittingText() {
        let values: [[UInt8]] = [
            Array("Doe^John\\ Smith^Jane \\\\ x ".utf8),
            Array("M\u{FC}ller\\\u{E9}t\u{E9}".utf8),
            [0x4D, 0xFC, 0x6C, 0x5C, 0x20, 0xE9, 0x20, 0x00],
            [0xC3, 0x5C, 0x41, 0x5C],
            [0x1B, 0x24, 0x42, 0x3B, 0x33, 0x45, 0x44, 0x1B, 0x28, 0x42, 0x5C, 0x54, 0x61, 0x72, 0x6F],
            [0x81, 0x5C, 0x41, 0x5C, 0x42],
            [0x20, 0x5C, 0x20],
            [0x5C],
        ]
        let sets: [[String]] = [
            [], ["ISO_IR 100"], ["ISO_IR 192"], ["", "ISO 2022 IR 87"], ["GB18030"], ["GBK"], ["ISO_IR 13"],
        ]
        for terms in sets {
            let characterSet = SpecificCharacterSet(terms: terms)
            for bytes in values {
                for vr in [VR.PN, .LO, .SH, .CS, .UI] {
                    let element = DataElement(tag: Tag(0x0010, 0x0010), vr: vr, bytes: bytes)
                    let expected = characterSet.decode(bytes, vr: vr)
                        .split(separator: "\\", omittingEmptySubsequences: false).map { DataElement.trim($0, vr: vr) }
                    #expect(element.stringValues(characterSet: characterSet) == expected, "\(terms) \(vr) \(bytes)")
                }
            }
        }
    }

    @Test func binaryNumbersAndTags() {
        var set = DataSet()
        set.set(DataElement(tag: Tag(0x0028, 0x0011), vr: .US, bytes: [0x00, 0x02, 0x01, 0x00]))
        set.set(DataElement(tag: Tag(0x0018, 0x9219), vr: .SS, bytes: [0xFB, 0xFF]))
        set.set(
            DataElement(
                tag: Tag(0x0018, 0x9089), vr: .FD,
                bytes: withUnsafeBytes(of: (-2.5).bitPattern.littleEndian, Array.init)))
        set.set(DataElement(tag: Tag(0x0020, 0x9165), vr: .AT, bytes: [0x10, 0x00, 0x10, 0x00]))
        set.set(Tag(0x0018, 0x0050), vr: .DS, strings: ["1.5", "-2e1"])
        #expect(set[Tag(0x0028, 0x0011)]?.integerValues == [512, 1])
        #expect(set.integer(Tag(0x0018, 0x9219)) == -5)
        #expect(set.doubles(Tag(0x0018, 0x9089)) == [-2.5])
        #expect(set[Tag(0x0020, 0x9165)]?.tagValues == [.patientName])
        #expect(set.doubles(Tag(0x0018, 0x0050)) == [1.5, -20])
    }

    @Test func itemsInheritTheirParentsCharacterSet() throws {
        // Latin-1 bytes in an item of a data set that declares ISO_IR 100 decode as Latin-1.
        var item = DataSet()
        item.set(DataElement(tag: .patientName, vr: .PN, bytes: [0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72]))
        var set = DataSet()
        set.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 100")
        set.set(DataElement(tag: Tag(0x0008, 0x1140), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        let bytes = try Part10File(dataSet: set, transferSyntax: .explicitVRLittleEndian).encoded()
        let read = try Part10File(bytes: bytes).dataSet
        let nested = try #require(read.items(Tag(0x0008, 0x1140))?.first?.dataSet)
        #expect(nested.string(.patientName) == "Müller")
    }
}
