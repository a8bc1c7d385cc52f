import Foundation
import Testing

@testable import DICOMData

@Suite("JSON renderings of a data set", .timeLimit(.minutes(2)))
struct DataSetJSONTests {
    static func sample() -> DataSet {
        var set = DataSet()
        set.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
        set.set(.patientName, vr: .PN, string: "山田^太郎=やまだ^たろう")
        set.set(.patientID, vr: .LO, string: "PAT003")
        set.set(Tag(0x0010, 0x1000), vr: .LO, strings: ["A", "", "C"])
        set.set(Tag(0x0018, 0x0050), vr: .DS, string: "+01.50")
        set.set(Tag(0x0020, 0x0013), vr: .IS, string: "+007")
        set.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x02]))
        var item = DataSet()
        item.set(Tag(0x0008, 0x1150), vr: .UI, string: "1.2.3")
        set.set(
            DataElement(
                tag: Tag(0x0008, 0x1140), vr: .SQ, value: .sequence([Item(dataSet: item)]), hasUndefinedLength: true))
        set.set(DataElement(tag: Tag(0x0009, 0x1001), vr: .UN, bytes: [1, 2, 3, 4]))
        return set
    }

    @Test func dicomJSONFollowsPS318() throws {
        let json = Self.sample().dicomJSON()
        #expect(
            json["00100010"]?["Value"]
                == .array([
                    .object([
                        JSONMember("Alphabetic", .string("山田^太郎")), JSONMember("Ideographic", .string("やまだ^たろう")),
                    ])
                ]))
        #expect(json["00101000"]?["Value"] == .array([.string("A"), .null, .string("C")]))
        #expect(json["00180050"]?["Value"] == .array([.number("1.50")]))
        #expect(json["00200013"]?["Value"] == .array([.number("7")]))
        #expect(json["00280010"]?["Value"] == .array([.number("512")]))
        #expect(json["00091001"]?["InlineBinary"] == .string("AQIDBA=="))
        #expect(json["00081140"]?["Value"]?.arrayValue?.first?["00081150"]?["Value"] == .array([.string("1.2.3")]))
    }

    @Test func dicomJSONDecodesBackToTheSameJSON() throws {
        let json = Self.sample().dicomJSON()
        let decoded = try DataSet(dicomJSONText: json.serialized(pretty: true))
        #expect(decoded.dicomJSON() == json)
        #expect(decoded.string(.patientName) == "山田^太郎=やまだ^たろう")
    }

    @Test func pypxShapeKeepsValuesApart() {
        let json = Self.sample().pypxJSON()
        #expect(
            json["PatientID"]
                == .object([
                    JSONMember("tag", .string("0010,0020")), JSONMember("value", .string("PAT003")),
                    JSONMember("label", .string("PatientID")),
                ]))
        #expect(json["OtherPatientIDs"]?["value"] == .array([.string("A"), .string(""), .string("C")]))
        #expect(json["00091001"]?["tag"] == .string("0009,1001"))
    }

    @Test(arguments: [
        ("+1.50", "1.50"), (".5", "0.5"), ("-.5", "-0.5"), ("007", "7"), ("1e3", "1e3"), ("1.5E-02", "1.5e-02"),
        ("5.", "5"),
    ])
    func decimalStringsBecomeJSONNumbers(_ input: String, _ expected: String) {
        #expect(DataElement.decimalJSON(input) == expected)
    }

    @Test(arguments: ["abc", "", "1.2.3", "1e", "--1"])
    func invalidDecimalStringsAreNotNumbers(_ input: String) {
        #expect(DataElement.decimalJSON(input) == nil)
    }

    @Test func parserRejectsMalformedJSONWithAnError() {
        for text in ["{", "[1,]", "{\"a\" 1}", "\"\\x\"", "tru", String(repeating: "[", count: 1000)] {
            #expect(throws: DICOMDataError.self) { try JSONParser.parse(text) }
        }
        #expect(throws: DICOMDataError.self) { try DataSet(dicomJSONText: #"{"0010": {"vr": "PN"}}"#) }
        #expect(throws: DICOMDataError.self) { try DataSet(dicomJSONText: #"{"00100010": {"vr": "XX"}}"#) }
    }
}

@Suite("Part 10 files", .timeLimit(.minutes(10)))
struct Part10FileTests {
    @Test func writtenFileReadsBackWithCorrectMetaGroupLength() throws {
        var set = DataSetJSONTests.sample()
        set.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.7")
        set.set(.sopInstanceUID, vr: .UI, string: "1.2.3.4.5")
        for ts in [TransferSyntax.explicitVRLittleEndian, .implicitVRLittleEndian] {
            let bytes = try Part10File(dataSet: set, transferSyntax: ts).encoded()
            let read = try Part10File(bytes: bytes)
            #expect(read.transferSyntax == ts)
            #expect(read.dataSet.dicomJSON() == set.dicomJSON())
            #expect(read.meta.string(.mediaStorageSOPInstanceUID) == "1.2.3.4.5")
            // The body starts right after the meta group: 128 + 4 + 12 bytes for (0002,0000), then its value.
            let groupLength = try #require(read.meta[.fileMetaInformationGroupLength]?.integerValues.first)
            let body = try DataSetReader.read(bytes, range: (144 + groupLength)..<bytes.count, transferSyntax: ts)
            #expect(body.dataSet.dicomJSON() == set.dicomJSON())
        }
    }

    @Test(.tags(.integration), .integrationTier) func headerOnlyReadStopsBeforePixelData() async throws {
        let url = try #require(
            try await Corpus.synthetic().first { $0.lastPathComponent == "image-mono16-explicit-le.dcm" })
        let header = try Part10File.readHeader(contentsOf: url.path)
        #expect(header.dataSet[.pixelData] == nil)
        #expect(header.dataSet.string(.sopInstanceUID)?.isEmpty == false)
        let full = try Part10File(contentsOf: url.path)
        #expect(full.dataSet[.pixelData] != nil)
        #expect(full.dataSet.count == header.dataSet.count + 1)
    }

    @Test(.tags(.integration), .integrationTier) func pixelDataIsASliceOfTheFileBuffer() async throws {
        let url = try #require(
            try await Corpus.synthetic().first { $0.lastPathComponent == "image-mono16-explicit-le.dcm" })
        let bytes = [UInt8](try Data(contentsOf: url))
        let file = try Part10File(bytes: bytes)
        let pixels = try #require(file.dataSet[.pixelData]?.bytes)
        // A slice of the input keeps the input's indices: no copy was made.
        #expect(pixels.endIndex == bytes.count)
        #expect(pixels.count == 64 * 64 * 2)
    }
}
