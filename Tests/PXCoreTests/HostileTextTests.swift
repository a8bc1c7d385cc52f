import DICOMData
import PXCore
import Testing

/// Issue 36, hostile text: values from a peer or a file never reach a terminal as control characters (table,
/// tree, text dump), a spreadsheet as a formula (CSV), or any output as a raw NUL; hosts are names or
/// addresses before any backend sees them.
@Suite struct HostileTextTests {
    /// Every character a hostile value can use on a terminal: ESC sequences (retitle, clear, move), BEL, CR, LF,
    /// NUL, DEL, a C1 CSI, and the bidi overrides and isolates.
    static let hostile =
        "\u{1B}]0;pwned\u{07}\u{1B}[2J\r\nFAKE ROW\u{0}\u{7F}\u{9B}31m\u{202E}evil\u{2066}x\u{2069}\u{200F}\u{061C}"

    /// The scalars ``HumanText`` must never let through.
    static func isRawControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// No control character but the renderer's own line ends.
    static func checkNoRawControl(_ text: String, _ comment: Comment? = nil) {
        let bad = text.unicodeScalars.filter { $0 != "\n" && isRawControl($0) }
        #expect(bad.isEmpty, "raw \(bad.map { String($0.value, radix: 16) }) in \(text.debugDescription)")
    }

    @Test(arguments: [
        ("\u{1B}[31m", #"\x1b[31m"#), ("bell\u{07}", #"bell\x07"#), ("a\r\nb", #"a\x0d\x0ab"#),
        ("nul\u{0}", #"nul\x00"#),
        ("del\u{7F}", #"del\x7f"#), ("c1\u{85}\u{9B}", #"c1\u0085\u009b"#), ("\u{202E}txt.exe", #"\u202etxt.exe"#),
        ("\u{2066}\u{2067}\u{2068}\u{2069}", #"\u2066\u2067\u2068\u2069"#),
        ("\u{200E}\u{200F}\u{061C}", #"\u200e\u200f\u061c"#),
        ("\u{202A}\u{202B}\u{202C}\u{202D}", #"\u202a\u202b\u202c\u202d"#), (#"back\slash"#, #"back\\slash"#),
        (#"\x1b"#, #"\\x1b"#), ("Müller 山田 e\u{301}", "Müller 山田 e\u{301}"), ("", ""),
    ])
    func escapes(raw: String, shown: String) {
        #expect(HumanText.escaped(raw) == shown)
        Self.checkNoRawControl(HumanText.escaped(raw))
    }

    @Test func everyControlScalarIsEscaped() {
        let all = (0..<0x3000).compactMap(Unicode.Scalar.init).filter(Self.isRawControl)
        #expect(all.count == 32 + 33 + 1 + 2 + 5 + 4)
        var text = String.UnicodeScalarView()
        text.append(contentsOf: all)
        Self.checkNoRawControl(HumanText.escaped(String(text)))
        #expect(HumanText.escaped(values: ["a\\b", "\u{1B}"]) == #"a\\b\\x1b"#)
    }

    static func hostileStudy() -> DataSet {
        var ds = DataSet()
        ds.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
        ds.set(.patientName, vr: .PN, string: "DOE^\u{1B}]0;pwned\u{07}")
        ds.set(.patientID, vr: .LO, string: "P\r\nFAKE\u{0}")
        ds.set(.studyDate, vr: .DA, string: "20240101")
        ds.set(Tag(0x0008, 0x1030), vr: .LO, string: hostile)
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.3")
        ds.set(Tag(0x0008, 0x0061), vr: .CS, strings: ["CT", "\u{1B}[2J"])
        return ds
    }

    @Test func tableEscapesEveryValue() {
        let table = PXOutput.table([Self.hostileStudy()])
        Self.checkNoRawControl(table)
        #expect(table.contains(#"DOE^\x1b]0;pwned\x07"#), "\(table)")
        #expect(table.contains(#"P\x0d\x0aFAKE"#), "\(table)")
        #expect(table.contains(#"CT\\x1b[2J"#), "\(table)")
        // One header, one rule, one row: the CR LF in a value made no row.
        #expect(table.split(separator: "\n").count == 3)
    }

    @Test func treeEscapesEveryValue() {
        var series = DataSet()
        series.set(.seriesInstanceUID, vr: .UI, string: "1.2.3.4")
        series.set(.modality, vr: .CS, string: "CT\u{1B}c")
        series.set(Tag(0x0008, 0x103E), vr: .LO, string: Self.hostile)
        let study = StudyWithSeries(study: Self.hostileStudy(), series: [series], seriesStatus: .success)
        let tree = PXOutput.tree(PXOutput.treeStudies([study]))
        Self.checkNoRawControl(tree)
        #expect(tree.contains(#"CT\x1bc"#), "\(tree)")
        #expect(tree.contains(#"\u202eevil"#), "\(tree)")
        #expect(tree.split(separator: "\n").count == 4, "\(tree)")
    }

    @Test func textDumpEscapesEveryValue() {
        let dump = Self.hostileStudy().textDump()
        Self.checkNoRawControl(dump)
        #expect(dump.contains(#"[DOE^\x1b]0;pwned\x07]"#), "\(dump)")
        #expect(dump.contains(#"[CT\\x1b[2J]  # 8, 2 ModalitiesInStudy"#), "\(dump)")
    }

    @Test(arguments: [
        ("=HYPERLINK(\"http://x\")", "'=HYPERLINK(\"http://x\")"), ("+1", "'+1"), ("-1+2", "'-1+2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"), ("\rx", "'\rx"), ("a=b", "a=b"), ("", ""), ("DOE^JOHN", "DOE^JOHN"),
    ])
    func csvNeutralizesFormulas(field: String, safe: String) {
        #expect(PXOutput.csvNeutralized(field) == safe)
    }

    @Test func csvRecordsNeutralizeUnlessRawAndNeverHoldNUL() {
        let fields = ["=1+1", "a\u{0}b", "x,y", "-\"q\""]
        #expect(PXOutput.csvRecord(fields) == "'=1+1,ab,\"x,y\",\"'-\"\"q\"\"\"\r\n")
        #expect(PXOutput.csvRecord(fields, raw: true) == "=1+1,ab,\"x,y\",\"-\"\"q\"\"\"\r\n")
        let study = StudyWithSeries(study: Self.hostileStudy(), series: [], seriesStatus: .success)
        let columns = ["PatientID", "StudyDescription", "PatientName"]
        for raw in [false, true] {
            let csv = PXOutput.csvRecords(study, columns: columns, raw: raw)
            #expect(!csv.unicodeScalars.contains("\u{0}"), "\(csv.debugDescription)")
        }
    }

    /// JSON escapes every control character itself: no raw NUL (or other C0 control) in any JSON output.
    @Test func jsonNeverHoldsARawControl() {
        let ds = Self.hostileStudy()
        for json in [ds.dicomJSON(), ds.pypxJSON(), ds.flatJSON(), PXOutput.pypxEntry(ds, index: 0)] {
            for pretty in [false, true] {
                var bytes: [UInt8] = []
                json.write(into: &bytes, pretty: pretty, indent: 0)
                #expect(
                    !bytes.contains { $0 < 0x20 && $0 != 0x0A && $0 != 0x20 },
                    "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
    }

    @Test(arguments: [
        ("pacs.example.org", "pacs.example.org"), ("localhost", "localhost"), ("127.0.0.1", "127.0.0.1"),
        ("my_pacs-1", "my_pacs-1"), ("[::1]", "::1"), ("[fe80::1:2]", "fe80::1:2"), ("pacs.", "pacs."),
        (String(repeating: "a.", count: 126) + "b", String(repeating: "a.", count: 126) + "b"),
    ])
    func hostsAccepted(text: String, host: String) throws {
        #expect(try HostName.parse(text) == host)
    }

    @Test(arguments: [
        "", "pacs\nx", "pacs\r", "a\u{1B}]0;t\u{07}", "a b", "a/b", "a@b", "ünï.example", "a..b", ".a",
        String(repeating: "a", count: 64), String(repeating: "a", count: 100_000),
        String(repeating: "a.", count: 127), "::1", "[::1", "[pacs]", "[]", "[::1]x", "a\u{0}b", "a\u{202E}b",
    ])
    func hostsRefused(text: String) {
        let error = #expect(throws: PXError.self) { try HostName.parse(text, role: "peer host") }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("peer host") == true, "\(error?.message ?? "")")
        // The message itself carries no control character, and stays short.
        Self.checkNoRawControl(error?.message ?? "")
        #expect((error?.message.count ?? 0) < 300)
    }

    @Test func nodeChecksItsHost() {
        #expect(throws: PXError.self) { try DICOMNode(host: "pacs\n-aet", port: 104, calledAETitle: "A") }
        #expect((try? DICOMNode(host: "::1", port: 104, calledAETitle: "A"))?.host == "::1")
    }
}
