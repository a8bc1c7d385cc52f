import DICOMData
import DICOMNetwork
import Testing

/// ``AttributeMatching`` against the kinds of matching of PS3.4 §C.2.2.2.
@Suite("Attribute matching (PS3.4 §C.2.2.2)", .timeLimit(.minutes(10)))
struct AttributeMatchingTests {
    static var record: DataSet {
        var ds = DataSet()
        ds.set(.patientName, vr: .PN, string: "Doe^John")
        ds.set(.patientID, vr: .LO, string: "PAT001")
        ds.set(Tag(0x0010, 0x1000), vr: .LO, strings: ["ALT1", "ALT2"])  // OtherPatientIDs
        ds.set(.studyDate, vr: .DA, string: "20240115")
        ds.set(Tag(0x0008, 0x0030), vr: .TM, string: "101500")  // StudyTime
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.3.4")
        ds.set(.modality, vr: .CS, string: "CT")
        return ds
    }

    static func key(_ tag: DICOMData.Tag, _ vr: VR, _ value: String) -> DataSet {
        var ds = DataSet()
        ds.set(.queryRetrieveLevel, vr: .CS, string: "STUDY")
        ds.set(tag, vr: vr, string: value)
        return ds
    }

    @Test(
        "single value, universal and wildcard matching",
        arguments: [
            (DICOMData.Tag.patientID, VR.LO, "PAT001", true), (.patientID, .LO, "PAT002", false),
            (.patientID, .LO, "", true),
            (.patientID, .LO, "PAT*", true), (.patientID, .LO, "PAT00?", true), (.patientID, .LO, "PAT0?", false),
            (.patientID, .LO, "*", true), (.patientName, .PN, "doe^john", true), (.patientName, .PN, "D*^J*n", true),
            (.patientName, .PN, "Doe", false), (.modality, .CS, "MR", false), (Tag(0x0010, 0x1000), .LO, "ALT2", true),
            (Tag(0x0008, 0x1030), .LO, "Chest", false),  // absent in the record
            (Tag(0x0008, 0x1030), .LO, "", true),
        ])
    func singleAndWildcard(tag: DICOMData.Tag, vr: VR, value: String, expected: Bool) {
        #expect(AttributeMatching.matches(Self.key(tag, vr, value), Self.record) == expected)
    }

    @Test("list of UID matching: any of the values; wild cards do not apply to UIDs")
    func uidList() {
        var keys = DataSet()
        keys.set(.studyInstanceUID, vr: .UI, strings: ["9.9", "1.2.3.4"])
        #expect(AttributeMatching.matches(keys, Self.record))
        keys.set(.studyInstanceUID, vr: .UI, strings: ["9.9", "1.2.3"])
        #expect(!AttributeMatching.matches(keys, Self.record))
        #expect(!AttributeMatching.matches(Self.key(.studyInstanceUID, .UI, "1.2.*"), Self.record))
    }

    @Test(
        "date and time range matching",
        arguments: [
            ("20240115", true), ("20240116", false), ("20240101-20240131", true), ("20240116-", false),
            ("-20240115", true),
            ("20240115-20240115", true), ("-20240114", false),
        ])
    func dateRange(value: String, expected: Bool) {
        #expect(AttributeMatching.matches(Self.key(.studyDate, .DA, value), Self.record) == expected)
    }

    @Test(
        "time ranges compare at the bound's precision",
        arguments: [
            ("1000-1100", true), ("10:00-10:15", true), ("1016-", false), ("-1015", true), ("-1014", false),
            ("10", true),
        ])
    func timeRange(value: String, expected: Bool) {
        #expect(AttributeMatching.matches(Self.key(Tag(0x0008, 0x0030), .TM, value), Self.record) == expected)
    }

    @Test("every key must match")
    func allKeys() {
        var keys = Self.key(.patientID, .LO, "PAT001")
        keys.set(.modality, vr: .CS, string: "CT")
        #expect(AttributeMatching.matches(keys, Self.record))
        keys.set(.modality, vr: .CS, string: "MR")
        #expect(!AttributeMatching.matches(keys, Self.record))
    }
}

extension AttributeMatchingTests {
    @Test("sequence matching, minimal: an empty sequence or item is universal; item keys match some item of the record")
    func sequences() {
        func code(_ value: String) -> Item {
            var item = DataSet()
            item.set(Tag(0x0008, 0x0100), vr: .SH, string: value)  // CodeValue
            return Item(dataSet: item)
        }
        let sequenceTag = Tag(0x0008, 0x1032)  // ProcedureCodeSequence
        var record = Self.record
        record.set(DataElement(tag: sequenceTag, vr: .SQ, value: .sequence([code("A1"), code("B2")])))
        var keys = DataSet()
        keys.set(DataElement(tag: sequenceTag, vr: .SQ, value: .sequence([])))
        #expect(AttributeMatching.matches(keys, record))
        keys.set(DataElement(tag: sequenceTag, vr: .SQ, value: .sequence([code("")])))
        #expect(AttributeMatching.matches(keys, record))
        keys.set(DataElement(tag: sequenceTag, vr: .SQ, value: .sequence([code("B2")])))
        #expect(AttributeMatching.matches(keys, record))
        keys.set(DataElement(tag: sequenceTag, vr: .SQ, value: .sequence([code("C3")])))
        #expect(!AttributeMatching.matches(keys, record))
        #expect(!AttributeMatching.matches(keys, Self.record))
    }
}

extension AttributeMatchingTests {
    @Test("numbers: IS compared as numbers, binary US by value")
    func numbers() {
        var record = Self.record
        record.set(.instanceNumber, vr: .IS, string: "5")
        record.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x02]))  // Rows 512
        #expect(AttributeMatching.matches(Self.key(.instanceNumber, .IS, "+5"), record))
        #expect(!AttributeMatching.matches(Self.key(.instanceNumber, .IS, "6"), record))
        var rows = DataSet()
        rows.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x02]))
        #expect(AttributeMatching.matches(rows, record))
        rows.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x01]))
        #expect(!AttributeMatching.matches(rows, record))
        rows.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: []))
        #expect(AttributeMatching.matches(rows, record))
    }
}
