import Foundation
import Testing

@testable import DICOMData

/// ``DataSet/textDump(indent:maximumValueLength:)`` against `dcmdump`: every element line gives the
/// same tag, VR, length and VM (PS3.5 §6.4), at the same nesting, on files px did not write.
///
/// Files dcmdump warns about are left out (it repairs them its own way). Where dcmdump reads a UN element
/// of defined length as a sequence (CP-246) and px keeps it as UN, the element and what dcmdump found
/// inside it are left out of the comparison.
@Suite("Text dump vs dcmdump", .serialized, .timeLimit(.minutes(10)))
struct TextDumpTests {
    struct Row: Equatable, CustomStringConvertible {
        var indent: Int
        var tag: String
        var vr: String
        /// `length,VM`; `nil` for sequences.
        var lengthAndVM: String?
        var description: String { "\(String(repeating: " ", count: indent))\(tag) \(vr) \(lengthAndVM ?? "")" }
    }

    /// Element lines of a dump: items, delimiters and the meta group are left out.
    static func rows(_ text: String) -> [Row] {
        let element = #/^(\s*)\(([0-9a-f]{4}),([0-9a-f]{4})\) ([A-Z]{2}|\?\?) /#
        let counts = #/\#\s*(\d+),\s*(\d+) /#
        var out: [Row] = []
        for line in text.split(separator: "\n") {
            guard let m = line.firstMatch(of: element), m.output.2 != "0002", m.output.2 != "fffe" else { continue }
            // dcmdump writes ?? for an unknown VR in an implicit VR data set, which px calls UN.
            let vr = m.output.4 == "??" ? "UN" : String(m.output.4)
            var lengthAndVM: String?
            if vr != "SQ", let c = line.firstMatch(of: counts) { lengthAndVM = "\(c.output.1),\(c.output.2)" }
            out.append(
                Row(indent: m.output.1.count, tag: "\(m.output.2),\(m.output.3)", vr: vr, lengthAndVM: lengthAndVM))
        }
        return out
    }

    /// Drops dcmdump's CP-246 sequences (and their contents) where px has a UN element, and those UN rows.
    static func withoutCP246(_ reference: [Row], _ ours: [Row]) -> ([Row], [Row]) {
        let unknown = Set(ours.filter { $0.vr == "UN" }.map { "\($0.indent) \($0.tag)" })
        var kept: [Row] = []
        var droppedTags: Set<String> = []
        var skipBelow: Int?
        for row in reference {
            if let depth = skipBelow {
                if row.indent > depth { continue }
                skipBelow = nil
            }
            if row.vr == "SQ" && unknown.contains("\(row.indent) \(row.tag)") {
                skipBelow = row.indent
                droppedTags.insert("\(row.indent) \(row.tag)")
                continue
            }
            kept.append(row)
        }
        return (kept, ours.filter { !($0.vr == "UN" && droppedTags.contains("\($0.indent) \($0.tag)")) })
    }

    @Test(
        "Tag, VR, length and VM of every element equal dcmdump's (pydicom's test files)", .tags(.integration),
        .integrationTier)
    func againstDcmdump() async throws {
        var compared = 0
        var mismatches: [String] = []
        for file in try await Corpus.pydicom() {
            // Values shortened as px shortens them, so that a long text with line breaks stays on its line.
            let dump = try await ExternalTool.run("dcmdump", [file.path])
            guard dump.status == 0, !dump.stderr.contains("W: "), !dump.stderr.contains("E: "),
                let parsed = try? Part10File(contentsOf: file.path)
            else { continue }
            var (reference, ours) = Self.withoutCP246(Self.rows(dump.text), Self.rows(parsed.dataSet.textDump()))
            // dcmdump writes a value's line breaks as they are, so its length and VM fall on a later line; px escapes
            // them (HumanText), so its own are on the element's line: compare them where dcmdump's can be read.
            if reference.count == ours.count {
                for i in ours.indices where reference[i].lengthAndVM == nil { ours[i].lengthAndVM = nil }
            }
            compared += 1
            if reference != ours {
                let first =
                    zip(reference, ours).first { $0 != $1 }.map { "dcmdump \($0) / px \($1)" }
                    ?? "\(reference.count) vs \(ours.count) rows"
                mismatches.append("\(file.lastPathComponent): \(first)")
            }
        }
        #expect(compared >= 60, "only \(compared) files compared")
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test("VM counts the whole value, not the shortened display")
    func vmBeforeTruncation() {
        var ds = DataSet()
        let values = (0..<30).map { "\($0).5" }.joined(separator: "\\")
        ds.set(Tag(0x3004, 0x000C), vr: .DS, string: values)
        let line = ds.textDump()
        #expect(line.contains("...]"))
        #expect(line.hasSuffix(", 30 GridFrameOffsetVector"), "\(line)")
    }
}
