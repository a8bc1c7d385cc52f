import DICOMData
import Testing

@testable import PXStorage

@Suite struct StorageLayoutTests {
    func header(_ values: [DICOMData.Tag: String]) -> DataSet {
        var ds = DataSet()
        let vrs: [DICOMData.Tag: VR] = [
            .patientID: .LO, .patientName: .PN, .studyDescription: .LO, .studyDate: .DA, .studyInstanceUID: .UI,
            .seriesDescription: .LO, .seriesDate: .DA, .seriesInstanceUID: .UI, .instanceNumber: .IS,
            .sopInstanceUID: .UI,
        ]
        for (tag, value) in values { ds.set(tag, vr: vrs[tag] ?? .LO, string: value) }
        return ds
    }

    /// The path under a root `/r`, for comparing.
    func path(_ ds: DataSet, _ layout: StorageLayout = StorageLayout()) -> String {
        "/r/" + layout.components(for: ds).joined(separator: "/")
    }

    @Test func buildsPypxTree() throws {
        let ds = header([
            .patientID: "32124", .patientName: "Doe^John", .studyDescription: "MRI BRAIN", .studyDate: "20120414",
            .studyInstanceUID: "1.2.3.100", .seriesDescription: "T1 AX", .seriesDate: "20120414",
            .seriesInstanceUID: "1.2.3.100.1", .instanceNumber: "7", .sopInstanceUID: "1.2.3.4.1",
        ])
        #expect(
            path(ds) == "/r/32124-Doe_John/MRI_BRAIN-20120414-1.2.3.100/T1_AX-20120414-1.2.3.100.1/00007-1.2.3.4.1.dcm")
    }

    @Test(arguments: ["../../etc", "/", "..", ".", "a/../../b", "\\..\\..", "x\0y", "\u{1}\u{7f}", "./.hidden"])
    func hostileValuesStayInsideRoot(_ hostile: String) throws {
        let ds = header([
            .patientID: hostile, .patientName: hostile, .studyDescription: hostile, .studyInstanceUID: hostile,
            .seriesDescription: hostile, .seriesInstanceUID: hostile, .sopInstanceUID: hostile,
            .instanceNumber: hostile,
        ])
        let parts = StorageLayout().components(for: ds)
        #expect(parts.count == 4)
        for part in parts {
            #expect(!part.isEmpty && part != "." && part != "..")
            #expect(!part.hasPrefix("."))
            #expect(!part.contains("/") && !part.contains("\\") && !part.contains("\0"))
            #expect(part.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F })
        }
    }

    @Test func emptyValuesGetThePlaceholder() throws {
        #expect(
            path(DataSet()) == "/r/unknown-unknown/unknown-unknown-unknown/unknown-unknown-unknown/00000-unknown.dcm")
    }

    @Test func longValuesAreShortenedWithAHash() throws {
        let long = String(repeating: "A", count: 300)
        let other = String(repeating: "A", count: 299) + "B"
        let layout = StorageLayout()
        let a = layout.sanitise(long)
        let b = layout.sanitise(other)
        #expect(a.utf8.count <= layout.maximumFieldLength)
        #expect(a != b)
        #expect(a.hasSuffix("~" + SHA256.hex(Array(long.utf8), bytes: 16)))
        #expect(
            path(header([.studyDescription: long]), layout).split(separator: "/").allSatisfy { $0.utf8.count < 255 })
    }

    @Test func keepsLettersOfOtherScripts() {
        #expect(StorageLayout().sanitise("山田^太郎") == "山田_太郎")
        #expect(StorageLayout().sanitise("Müller^Jürgen") == "Müller_Jürgen")
    }

    /// Issue 14 item 6b: `1.2.3.4+5` and `1.2.3.4/5` were both `1.2.3.4_5`.
    @Test func unsafeUIDsAreEncodedInjectively() {
        let layout = StorageLayout()
        let pairs = [
            ("1.2.3.4+5", "1.2.3.4/5"), ("1.2.3.4_5", "1.2.3.4/5"), ("1.2.3.4_2B5", "1.2.3.4+5"), ("unknown", ""),
            ("a\\b", "a_b"),
        ]
        for (a, b) in pairs {
            #expect(layout.encodeUID(a) != layout.encodeUID(b), "\(a) \(b)")
        }
        #expect(layout.encodeUID("1.2.3.4+5") == "1.2.3.4_2B5")
        #expect(layout.encodeUID("1.2.3.4/5") == "1.2.3.4_2F5")
        #expect(layout.encodeUID(".5") == "_2E5")
        #expect(layout.encodeUID("../..") == "_2E._2F..")
        // Padding is not part of a UID (PS3.5 §9.1).
        #expect(layout.encodeUID("1.2.3\0") == "1.2.3")
        #expect(layout.encodeUID("unknown") != layout.placeholder)
        // The file names differ too, for otherwise identical data sets.
        let first = StorageLayout().components(for: header([.sopInstanceUID: "1.2.3.4+5"]))
        let second = StorageLayout().components(for: header([.sopInstanceUID: "1.2.3.4/5"]))
        #expect(first.last != second.last)
        #expect(first.dropLast() == second.dropLast())
    }

    /// Every printable ASCII pair of short values: distinct values, distinct names.
    @Test func uidEncodingIsInjectiveOnShortValues() {
        let layout = StorageLayout()
        let alphabet = (0x20...0x7E).map { String(UnicodeScalar(UInt8($0))) } + ["\u{0}", "é"]
        var seen: [String: String] = [layout.encodeUID(""): ""]
        for a in alphabet {
            for b in alphabet {
                let value = "1" + a + b
                let name = layout.encodeUID(value)
                let trimmed = String(value.reversed().drop { $0 == " " || $0 == "\0" }.reversed())
                if let earlier = seen[name] {
                    #expect(
                        earlier == trimmed, "\(earlier.debugDescription) and \(value.debugDescription) share \(name)")
                }
                seen[name] = trimmed
                #expect(!name.contains("/") && !name.hasPrefix("."))
            }
        }
    }

    /// Valid UIDs, up to the 64 characters PS3.5 §9.1 allows, keep today's names exactly.
    @Test func validUIDsAreUnchanged() {
        let layout = StorageLayout()
        let longest = "1.2.840.113619.2.55.3.604688119.969.1268071029.320." + String(repeating: "9", count: 13)
        #expect(longest.utf8.count == 64)
        for uid in ["1.2.3", "2.25.152013755943437767370897010099568838985", longest] {
            #expect(layout.encodeUID(uid) == uid)
        }
    }

    /// Issue 14 item 6c: these two share their 32-bit FNV-1a hash, which named both the same.
    @Test func longUIDsWithTheSameOldHashGetDistinctNames() {
        let base = "1.2.826.0.1.3680043.8.498.1234567890123456789012345678901234567890."
        let (a, b) = (base + "122789", base + "339192")
        let layout = StorageLayout()
        let (nameA, nameB) = (layout.encodeUID(a), layout.encodeUID(b))
        #expect(nameA != nameB)
        #expect(nameA.utf8.count <= 64 && nameB.utf8.count <= 64)
        // 128 bits of SHA-256 after the ~.
        #expect(nameA.split(separator: "~").last?.count == 32)
    }

    @Test func sha256MatchesFIPSVectors() {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (String(repeating: "a", count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (String(repeating: "a", count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (String(repeating: "a", count: 64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            (String(repeating: "a", count: 119), "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"),
        ]
        for (message, digest) in vectors {
            #expect(SHA256.hex(Array(message.utf8), bytes: 32) == digest, "\(message.count) bytes")
        }
    }

    @Test func aLayoutStartingWithASlashIsAUsageError() {
        #expect(throws: StorageError.self) { try StorageLayout(template: "/{PatientID}/{SOPInstanceUID}.dcm") }
        do {
            _ = try StorageLayout(template: "/{SOPInstanceUID}.dcm")
        } catch {
            #expect(error.code == .layout && error.message.contains("may not start with /"), "\(error)")
        }
    }

    /// A name that could exceed NAME_MAX (255 bytes) is refused when the template is parsed, not with
    /// every instance.
    @Test func namesThatCanExceed255BytesAreRefusedUpFront() throws {
        // Four fields of up to 64 bytes and three dashes: 259.
        let folder = "{PatientName}-{StudyDescription}-{SeriesDescription}-{PatientID}/{SOPInstanceUID}.dcm"
        do {
            _ = try StorageLayout(template: folder)
            Issue.record("accepted \(folder)")
        } catch {
            #expect(error.code == .layout && error.message.contains("259 bytes"), "\(error)")
        }
        // The file name: 3 x 64 + 2 + ".dcm" + "-100000" for a duplicate = 205 fits; 4 fields, 267, do not.
        #expect(throws: StorageError.self) {
            try StorageLayout(
                template: "{PatientID}/{StudyInstanceUID}{SeriesInstanceUID}{SOPInstanceUID}{PatientName}.dcm")
        }
        _ = try StorageLayout(template: "{PatientID}/{StudyInstanceUID}-{SeriesInstanceUID}-{SOPInstanceUID}.dcm")
        // The pypx tree fits, and so does a 170-byte literal (170 + 1 + 64 + 4 + 7 = 246).
        _ = try StorageLayout(template: StorageLayout.pypxTemplate)
        _ = try StorageLayout(template: String(repeating: "x", count: 170) + "-{SOPInstanceUID}.dcm")
        #expect(throws: StorageError.self) {
            try StorageLayout(template: String(repeating: "x", count: 170) + "-{SOPInstanceUID}-{PatientID}.dcm")
        }
        #expect(StorageLayout().components(for: DataSet()).count == 4)
    }
}
