import DICOMData
import PXCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct StorageLayoutTests {
    func header(_ values: [DICOMData.Tag: String]) -> DataSet {
        var ds = DataSet()
        let vrs: [DICOMData.Tag: VR] = [
            .patientID: .LO, .patientName: .PN, .studyDescription: .LO, .studyDate: .DA, .studyInstanceUID: .UI,
            .seriesDescription: .LO, .seriesDate: .DA, .seriesInstanceUID: .UI, .instanceNumber: .IS, .sopInstanceUID: .UI,
        ]
        for (tag, value) in values { ds.set(tag, vr: vrs[tag] ?? .LO, string: value) }
        return ds
    }

    @Test func buildsPypxTree() throws {
        let ds = header([
            .patientID: "32124", .patientName: "Doe^John", .studyDescription: "MRI BRAIN", .studyDate: "20120414",
            .studyInstanceUID: "1.2.3.100", .seriesDescription: "T1 AX", .seriesDate: "20120414",
            .seriesInstanceUID: "1.2.3.100.1", .instanceNumber: "7", .sopInstanceUID: "1.2.3.4.1",
        ])
        let path = try StorageLayout().path(for: ds, root: "/data")
        #expect(path == "/data/32124-Doe_John/MRI_BRAIN-20120414-1.2.3.100/T1_AX-20120414-1.2.3.100.1/00007-1.2.3.4.1.dcm")
    }

    @Test(arguments: ["../../etc", "/", "..", ".", "a/../../b", "\\..\\..", "x\0y", "\u{1}\u{7f}", "./.hidden"])
    func hostileValuesStayInsideRoot(_ hostile: String) throws {
        let ds = header([
            .patientID: hostile, .patientName: hostile, .studyDescription: hostile, .studyInstanceUID: hostile,
            .seriesDescription: hostile, .seriesInstanceUID: hostile, .sopInstanceUID: hostile, .instanceNumber: hostile,
        ])
        let path = try StorageLayout().path(for: ds, root: "/data/root")
        #expect(StorageLayout.isInside(path, root: "/data/root"))
        let parts = path.dropFirst("/data/root/".count).split(separator: "/", omittingEmptySubsequences: false)
        #expect(parts.count == 4)
        for part in parts {
            #expect(!part.hasPrefix("."))
            #expect(!part.contains("\\") && !part.contains("\0"))
            #expect(part.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F })
        }
    }

    @Test func emptyValuesGetThePlaceholder() throws {
        let path = try StorageLayout().path(for: DataSet(), root: "/r")
        #expect(path == "/r/unknown-unknown/unknown-unknown-unknown/unknown-unknown-unknown/00000-unknown.dcm")
    }

    @Test func longValuesAreShortenedWithAHash() throws {
        let long = String(repeating: "A", count: 300)
        let other = String(repeating: "A", count: 299) + "B"
        let layout = StorageLayout()
        let a = layout.sanitise(long)
        let b = layout.sanitise(other)
        #expect(a.utf8.count <= layout.maximumFieldLength)
        #expect(a != b)
        #expect(a.contains("~"))
        let path = try layout.path(for: header([.studyDescription: long]), root: "/r")
        #expect(path.split(separator: "/").allSatisfy { $0.utf8.count < 255 })
    }

    @Test func keepsLettersOfOtherScripts() {
        #expect(StorageLayout().sanitise("山田^太郎") == "山田_太郎")
        #expect(StorageLayout().sanitise("Müller^Jürgen") == "Müller_Jürgen")
    }

    @Test func isInsideRejectsEscapes() {
        #expect(!StorageLayout.isInside("/r/../etc", root: "/r"))
        #expect(!StorageLayout.isInside("/rx/a", root: "/r"))
        #expect(!StorageLayout.isInside("/r//a", root: "/r"))
        #expect(StorageLayout.isInside("/r/a/b.dcm", root: "/r/"))
    }
}
