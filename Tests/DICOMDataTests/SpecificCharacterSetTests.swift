import Testing
@testable import DICOMData

/// One decoding case: (0008,0005) values, VR, encoded bytes, expected text.
struct CharsetVector: Sendable, CustomTestStringConvertible {
    let name: String
    let terms: [String]
    let vr: VR
    let bytes: [UInt8]
    let text: String
    /// Whether `encode` of `text` must give back exactly `bytes`.
    let roundTrips: Bool

    init(_ name: String, _ terms: [String], _ vr: VR = .PN, _ bytes: [UInt8], _ text: String, roundTrips: Bool = true) {
        self.name = name
        self.terms = terms
        self.vr = vr
        self.bytes = bytes
        self.text = text
        self.roundTrips = roundTrips
    }

    var testDescription: String { name }
}

private let esc: UInt8 = 0x1B

private func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

/// The worked examples of PS3.5 Annexes H (Japanese), I (Korean), J and K (Chinese), byte for byte,
/// and single-byte examples matching the pydicom/DCMTK character set test files.
let charsetVectors: [CharsetVector] = [
    // PS3.5 Example H.3-1: value 1 empty (ISO-IR 6), value 2 ISO 2022 IR 87.
    CharsetVector(
        "H.3-1 Yamada^Tarou", ["", "ISO 2022 IR 87"], .PN,
        ascii("Yamada^Tarou=")
            + [esc, 0x24, 0x42, 0x3B, 0x33, 0x45, 0x44, esc, 0x28, 0x42, 0x5E]
            + [esc, 0x24, 0x42, 0x42, 0x40, 0x4F, 0x3A, esc, 0x28, 0x42, 0x3D]
            + [esc, 0x24, 0x42, 0x24, 0x64, 0x24, 0x5E, 0x24, 0x40, esc, 0x28, 0x42, 0x5E]
            + [esc, 0x24, 0x42, 0x24, 0x3F, 0x24, 0x6D, 0x24, 0x26, esc, 0x28, 0x42],
        "Yamada^Tarou=山田^太郎=やまだ^たろう"),
    // PS3.5 Example H.3-2: value 1 ISO 2022 IR 13 (half-width katakana in G1, romaji in G0).
    CharsetVector(
        "H.3-2 katakana and kanji", ["ISO 2022 IR 13", "ISO 2022 IR 87"], .PN,
        [0xD4, 0xCF, 0xC0, 0xDE, 0x5E, 0xC0, 0xDB, 0xB3, 0x3D]
            + [esc, 0x24, 0x42, 0x3B, 0x33, 0x45, 0x44, esc, 0x28, 0x4A, 0x5E]
            + [esc, 0x24, 0x42, 0x42, 0x40, 0x4F, 0x3A, esc, 0x28, 0x4A, 0x3D]
            + [esc, 0x24, 0x42, 0x24, 0x64, 0x24, 0x5E, 0x24, 0x40, esc, 0x28, 0x4A, 0x5E]
            + [esc, 0x24, 0x42, 0x24, 0x3F, 0x24, 0x6D, 0x24, 0x26, esc, 0x28, 0x4A],
        "ﾔﾏﾀﾞ^ﾀﾛｳ=山田^太郎=やまだ^たろう"),
    // PS3.5 Example I.2-1: KS X 1001 in G1, designated again in every component.
    CharsetVector(
        "I.2-1 Hong^Gildong", ["", "ISO 2022 IR 149"], .PN,
        ascii("Hong^Gildong=")
            + [esc, 0x24, 0x29, 0x43, 0xFB, 0xF3, 0x5E]
            + [esc, 0x24, 0x29, 0x43, 0xD1, 0xCE, 0xD4, 0xD7, 0x3D]
            + [esc, 0x24, 0x29, 0x43, 0xC8, 0xAB, 0x5E]
            + [esc, 0x24, 0x29, 0x43, 0xB1, 0xE6, 0xB5, 0xBF],
        "Hong^Gildong=洪^吉洞=홍^길동"),
    // PS3.5 Example J.3-1: GB18030.
    CharsetVector(
        "J.3-1 GB18030 Wang^XiaoDong", ["GB18030"], .PN,
        ascii("Wang^XiaoDong=") + [0xCD, 0xF5, 0x5E, 0xD0, 0xA1, 0xB6, 0xAB, 0x3D],
        "Wang^XiaoDong=王^小东="),
    // The same bytes are valid GBK (PS3.5 Annex J introduction).
    CharsetVector(
        "J.3-1 as GBK", ["GBK"], .PN,
        ascii("Wang^XiaoDong=") + [0xCD, 0xF5, 0x5E, 0xD0, 0xA1, 0xB6, 0xAB, 0x3D],
        "Wang^XiaoDong=王^小东="),
    // PS3.5 Example J.4-1: GB18030 long text with CR LF.
    CharsetVector(
        "J.4-1 GB18030 LT", ["GB18030"], .LT,
        ascii("The first line includes") + [0xD6, 0xD0, 0xCE, 0xC4] + ascii(".\r\nThe second line includes")
            + [0xD6, 0xD0, 0xCE, 0xC4] + ascii(", too.\r\nThe third line.\r\n"),
        "The first line includes中文.\r\nThe second line includes中文, too.\r\nThe third line.\r\n"),
    // PS3.5 Example K.2-1: GB 2312 in G1 (ISO 2022 IR 58), trailing padding space removed.
    CharsetVector(
        "K.2-1 Zhang^XiaoDong", ["", "ISO 2022 IR 58"], .PN,
        ascii("Zhang^XiaoDong=") + [esc, 0x24, 0x29, 0x41, 0xD5, 0xC5, 0x5E]
            + [esc, 0x24, 0x29, 0x41, 0xD0, 0xA1, 0xB6, 0xAB, 0x3D],
        "Zhang^XiaoDong=张^小东="),
    // PS3.5 Example K.3-1: long text, G1 designated again after each CR LF.
    CharsetVector(
        "K.3-1 GB2312 LT", ["", "ISO 2022 IR 58"], .LT,
        [0x31, 0x2E, esc, 0x24, 0x29, 0x41, 0xB5, 0xDA, 0xD2, 0xBB, 0xD0, 0xD0, 0xCE, 0xC4, 0xD7, 0xD6, 0xA1, 0xA3, 0x0D, 0x0A]
            + [0x32, 0x2E, esc, 0x24, 0x29, 0x41, 0xB5, 0xDA, 0xB6, 0xFE, 0xD0, 0xD0, 0xCE, 0xC4, 0xD7, 0xD6, 0xA1, 0xA3, 0x0D, 0x0A]
            + [0x33, 0x2E, esc, 0x24, 0x29, 0x41, 0xB5, 0xDA, 0xC8, 0xFD, 0xD0, 0xD0, 0xCE, 0xC4, 0xD7, 0xD6, 0xA1, 0xA3, 0x0D, 0x0A],
        "1.第一行文字。\r\n2.第二行文字。\r\n3.第三行文字。\r\n"),
    // UTF-8 (PS3.5 Example J.2-1).
    CharsetVector(
        "J.2-1 UTF-8", ["ISO_IR 192"], .PN,
        ascii("Wang^XiaoDong=") + [0xE7, 0x8E, 0x8B, 0x5E, 0xE5, 0xB0, 0x8F, 0xE6, 0x9D, 0xB1, 0x3D],
        "Wang^XiaoDong=王^小東="),
    // JIS X 0212 (ISO 2022 IR 159) next to JIS X 0208.
    CharsetVector(
        "JIS X 0212", ["ISO 2022 IR 6", "ISO 2022 IR 87", "ISO 2022 IR 159"], .PN,
        ascii("Abc") + [esc, 0x24, 0x28, 0x44, 0x30, 0x21, esc, 0x28, 0x42, 0x5E, esc, 0x24, 0x42, 0x3B, 0x33, esc, 0x28, 0x42],
        "Abc丂^山"),
    // Single-byte sets without code extensions (PS3.3 Table C.12-2).
    CharsetVector(
        "Latin-1", ["ISO_IR 100"], .PN, [0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72, 0x5E, 0x4A, 0xFC, 0x72, 0x67, 0x65, 0x6E],
        "Müller^Jürgen"),
    CharsetVector(
        "Latin-1 chrFren", ["ISO_IR 100"], .PN, ascii("Buc^J") + [0xE9, 0x72, 0xF4] + ascii("me"), "Buc^Jérôme"),
    CharsetVector(
        "Latin-2", ["ISO_IR 101"], .PN, [0xA3, 0xF3, 0x64, 0xBC, 0x5E, 0x57, 0x61, 0xB3, 0xEA, 0x73, 0x61],
        "Łódź^Wałęsa"),
    CharsetVector(
        "Latin-5", ["ISO_IR 148"], .PN, [0xD0, 0xFC, 0x6E, 0x65, 0xFE, 0x5E, 0xDE, 0x61, 0x68, 0x69, 0x6E],
        "Ğüneş^Şahin"),
    CharsetVector(
        "Greek chrGreek", ["ISO_IR 126"], .PN, [0xC4, 0xE9, 0xEF, 0xED, 0xF5, 0xF3, 0xE9, 0xEF, 0xF2], "Διονυσιος"),
    CharsetVector(
        "Cyrillic chrRuss", ["ISO_IR 144"], .PN, [0xBB, 0xEE, 0xDA, 0x63, 0x65, 0xDC, 0xD1, 0x79, 0x70, 0xD3],
        "Люкceмбypг"),
    CharsetVector(
        "Hebrew chrHbrw", ["ISO_IR 138"], .PN, [0xF9, 0xF8, 0xE5, 0xEF, 0x5E, 0xE3, 0xE1, 0xE5, 0xF8, 0xE4],
        "שרון^דבורה"),
    CharsetVector(
        "Arabic chrArab", ["ISO_IR 127"], .PN, [0xE2, 0xC8, 0xC7, 0xE6, 0xEA, 0x5E, 0xE4, 0xE6, 0xD2, 0xC7, 0xD1],
        "قباني^لنزار"),
    CharsetVector(
        "Thai", ["ISO_IR 166"], .PN, [0xC0, 0xD2, 0xC9, 0xD2, 0xE4, 0xB7, 0xC2, 0x5E, 0xCA, 0xC1, 0xAA, 0xD2, 0xC2],
        "ภาษาไทย^สมชาย"),
    CharsetVector(
        "ISO_IR 13 katakana", ["ISO_IR 13"], .PN, [0xD4, 0xCF, 0xC0, 0xDE, 0x5E, 0xC0, 0xDB, 0xB3], "ﾔﾏﾀﾞ^ﾀﾛｳ"),
    // ISO 2022 single-byte sets designated by escape sequences into G1 (PS3.3 Table C.12-3).
    CharsetVector(
        "Latin-1 and Greek by escapes", ["ISO 2022 IR 100", "ISO 2022 IR 126"], .LO,
        [0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72, 0x20, esc, 0x2D, 0x46, 0xC4, 0xE9, 0xEF, 0x5C, 0xFC],
        "Müller Διο\\ü"),
]

@Suite struct SpecificCharacterSetTests {
    @Test(arguments: charsetVectors)
    func decodesStandardExamples(_ v: CharsetVector) {
        let cs = SpecificCharacterSet(terms: v.terms)
        #expect(cs.unknownTerms.isEmpty)
        #expect(cs.decode(v.bytes, vr: v.vr) == v.text)
        // Any collection of bytes works, not only arrays.
        #expect(cs.decode(v.bytes[...], vr: v.vr) == v.text)
    }

    @Test(arguments: charsetVectors.filter(\.roundTrips))
    func encodesToTheStandardBytes(_ v: CharsetVector) throws {
        let cs = SpecificCharacterSet(terms: v.terms)
        let encoded = try #require(cs.encode(v.text, vr: v.vr))
        #expect(encoded == v.bytes)
        #expect(cs.decode(encoded, vr: v.vr) == v.text)
    }

    @Test func parsesTerms() {
        let cs = SpecificCharacterSet(terms: ["ISO 2022 IR 6 ", " ISO 2022 IR 87", "ISO 2022 IR 159"])
        #expect(cs.terms == ["ISO 2022 IR 6", "ISO 2022 IR 87", "ISO 2022 IR 159"])
        #expect(cs.usesCodeExtensions)
        #expect(SpecificCharacterSet(attributeValue: "\\ISO 2022 IR 87").terms == ["", "ISO 2022 IR 87"])
        #expect(SpecificCharacterSet(terms: [""]) == .defaultRepertoire)
        #expect(SpecificCharacterSet.defaultRepertoire.terms.isEmpty)
        #expect(!SpecificCharacterSet(terms: ["ISO_IR 100"]).usesCodeExtensions)
        // Table C.12-4 sets only exist with the ISO 2022 prefix.
        #expect(SpecificCharacterSet(terms: ["ISO_IR 87"]).unknownTerms == ["ISO_IR 87"])
    }

    @Test func unknownTermFallsBackToLatin1() {
        let cs = SpecificCharacterSet(terms: ["ISO_IR 999"])
        #expect(cs.unknownTerms == ["ISO_IR 999"])
        #expect(cs.terms == ["ISO_IR 999"])
        #expect(cs.decode([0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72], vr: .PN) == "Müller")
        let mixed = SpecificCharacterSet(terms: ["", "KLINGON"])
        #expect(mixed.unknownTerms == ["KLINGON"])
        #expect(mixed.decode(ascii("Doe^John"), vr: .PN) == "Doe^John")
    }

    @Test func invalidUTF8BecomesReplacementCharacters() {
        let cs = SpecificCharacterSet(terms: ["ISO_IR 192"])
        #expect(cs.decode([0x4D, 0x75, 0xFF, 0x6C, 0xC3, 0x28, 0xE2, 0x82], vr: .LO) == "Mu\u{FFFD}l\u{FFFD}(\u{FFFD}")
    }

    @Test func invalidMultiByteSequencesDoNotCrash() {
        let jp = SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"])
        // A lone first byte at the end, an unassigned code (row 0x7F is out of range), truncated escapes.
        #expect(jp.decode([esc, 0x24, 0x42, 0x3B, 0x33, 0x45], vr: .PN) == "山\u{FFFD}")
        #expect(jp.decode([esc, 0x24, 0x42, 0x22, 0x2F], vr: .PN) == "\u{FFFD}")
        #expect(jp.decode([0x41, esc], vr: .PN) == "A\u{1B}")
        #expect(jp.decode([0x41, esc, 0x24], vr: .PN) == "A\u{1B}$")
        let kr = SpecificCharacterSet(terms: ["", "ISO 2022 IR 149"])
        #expect(kr.decode([esc, 0x24, 0x29, 0x43, 0xB1], vr: .PN) == "\u{FFFD}")
        #expect(kr.decode([esc, 0x24, 0x29, 0x43, 0xB1, 0x41], vr: .PN) == "\u{FFFD}A")
        let gb = SpecificCharacterSet(terms: ["GB18030"])
        #expect(gb.decode([0x41, 0xCD], vr: .LO) == "A\u{FFFD}")
        // Every byte pair decodes to something under every scheme.
        let everyScheme: [[String]] = [
            [], ["ISO_IR 100"], ["ISO_IR 13"], ["ISO_IR 192"], ["GB18030"], ["GBK"], ["ISO_IR 166"],
            ["ISO 2022 IR 13", "ISO 2022 IR 87", "ISO 2022 IR 159"], ["", "ISO 2022 IR 149"], ["", "ISO 2022 IR 58"],
        ]
        var junk: [UInt8] = []
        for a in stride(from: 0, through: 255, by: 3) { junk += [UInt8(a), UInt8(255 - a), esc] }
        for terms in everyScheme {
            let cs = SpecificCharacterSet(terms: terms)
            for vr in [VR.PN, .LO, .LT, .CS] {
                #expect(!cs.decode(junk, vr: vr).isEmpty)
            }
        }
    }

    @Test func delimitersResetToTheInitialSets() {
        let jp = SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"])
        // While JIS X 0208 is in G0, bytes are read in pairs: 3D 5E is one kanji, not '=' and '^',
        // and 5C 41 is one kanji, not a value separator.
        #expect(jp.decode([esc, 0x24, 0x42, 0x3D, 0x5E, esc, 0x28, 0x42, 0x5E, 0x41], vr: .PN) == "殉^A")
        #expect(jp.decode([esc, 0x24, 0x42, 0x5C, 0x41, esc, 0x28, 0x42, 0x5C, 0x41], vr: .LO) == "楞\\A")
        // In LT the backslash is an ordinary character, CR LF reset.
        #expect(jp.decode([esc, 0x24, 0x42, 0x3B, 0x33, 0x0D, 0x0A, 0x41], vr: .LT) == "山\r\nA")
        let kr = SpecificCharacterSet(terms: ["", "ISO 2022 IR 149"])
        // After '^' G1 is empty again: the high bytes are no longer KS X 1001 (Latin-1 fallback).
        #expect(kr.decode([esc, 0x24, 0x29, 0x43, 0xFB, 0xF3, 0x5E, 0xFB], vr: .PN) == "洪^û")
        // In LO '^' is not a delimiter.
        #expect(kr.decode([esc, 0x24, 0x29, 0x43, 0xFB, 0xF3, 0x5E, 0xFB, 0xF3], vr: .LO) == "洪^洪")
    }

    @Test func jisRomanInG0() {
        let cs = SpecificCharacterSet(terms: ["ISO_IR 13"])
        // 7E is OVERLINE; 5C is YEN SIGN in single-valued text, the value separator elsewhere.
        #expect(cs.decode([0x41, 0x7E, 0x5C, 0xB1], vr: .LT) == "A‾¥ｱ")
        #expect(cs.decode([0x41, 0x5C, 0xB1], vr: .LO) == "A\\ｱ")
        #expect(cs.encode("A‾¥ｱ", vr: .LT) == [0x41, 0x7E, 0x5C, 0xB1])
        #expect(cs.encode("A\\ｱ", vr: .LO) == [0x41, 0x5C, 0xB1])
        #expect(cs.encode("山", vr: .LO) == nil)
    }

    @Test func vrsOutsideSpecificCharacterSetUseTheDefaultRepertoire() {
        let cs = SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"])
        #expect(cs.decode(ascii("ORIGINAL\\PRIMARY"), vr: .CS) == "ORIGINAL\\PRIMARY")
        #expect(cs.decode([0x41, 0xE9, 0x1B], vr: .CS) == "Aé\u{1B}")
        #expect(SpecificCharacterSet(terms: ["ISO_IR 192"]).decode([0xC3, 0xA9], vr: .AE) == "Ã©")
        #expect(cs.encode("ABC", vr: .CS) == ascii("ABC"))
        #expect(cs.encode("山", vr: .CS) == nil)
    }

    @Test func defaultRepertoire() {
        let cs = SpecificCharacterSet.defaultRepertoire
        #expect(cs.decode(ascii("Doe^John"), vr: .PN) == "Doe^John")
        #expect(cs.decode([0x4D, 0xFC], vr: .PN) == "Mü")
        #expect(cs.encode("Doe^John", vr: .PN) == ascii("Doe^John"))
        #expect(cs.encode("Müller", vr: .PN) == nil)
    }

    @Test func encodingRejectsWhatTheSetCannotHold() {
        #expect(SpecificCharacterSet(terms: ["ISO_IR 100"]).encode("Ελλάδα", vr: .LO) == nil)
        #expect(SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"]).encode("홍", vr: .PN) == nil)
        #expect(SpecificCharacterSet(terms: ["GBK"]).encode("😀", vr: .LO) == nil)
        #expect(SpecificCharacterSet(terms: ["GB18030"]).encode("😀", vr: .LO) == [0x94, 0x39, 0xFC, 0x36])
        #expect(SpecificCharacterSet(terms: ["ISO_IR 192"]).encode("😀", vr: .LO) == [0xF0, 0x9F, 0x98, 0x80])
        // ESC in the input would corrupt the designations.
        #expect(SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"]).encode("a\u{1B}b", vr: .LO) == nil)
    }

    @Test func encodesMultiValuedWithSwitchBackBeforeSeparator() throws {
        let cs = SpecificCharacterSet(terms: ["", "ISO 2022 IR 87"])
        let encoded = try #require(cs.encode("山\\田", vr: .LO))
        #expect(encoded == [esc, 0x24, 0x42, 0x3B, 0x33, esc, 0x28, 0x42, 0x5C, esc, 0x24, 0x42, 0x45, 0x44, esc, 0x28, 0x42])
        #expect(cs.decode(encoded, vr: .LO) == "山\\田")
    }

    @Test func decodingIsSafeFromManyTasks() async {
        let cs = SpecificCharacterSet(terms: ["GB18030"])
        let bytes = ascii("Wang^XiaoDong=") + [0xCD, 0xF5, 0x5E, 0xD0, 0xA1, 0xB6, 0xAB, 0x3D]
        await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    (0..<200).allSatisfy { _ in cs.decode(bytes, vr: .PN) == "Wang^XiaoDong=王^小东=" }
                }
            }
            for await ok in group { #expect(ok) }
        }
    }
}
