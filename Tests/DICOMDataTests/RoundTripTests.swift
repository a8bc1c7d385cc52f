import Foundation
import Testing

@testable import DICOMData

/// Read → write → compare with DCMTK: every file px writes passes `dcmftest`, and `dcmdump` of the copy
/// shows the same data set as `dcmdump` of the original (big-endian and deflated originals are written
/// as Explicit VR Little Endian, which px writes instead; the dump of values is the same).
@Suite(
    "Round trip through px's writer, checked by dcmftest and dcmdump", .tags(.integration), .integrationTier,
    .serialized, .timeLimit(.minutes(10)))
struct RoundTripTests {
    /// The data-set part of `dcmdump +L` output: everything after `# Dicom-Data-Set` except the
    /// transfer-syntax line.
    static func dataSetDump(_ path: String) async throws -> [String]? {
        let dump = try await ExternalTool.run("dcmdump", ["+L", "-q", path])
        guard dump.status == 0 else { return nil }
        let lines = dump.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let start = lines.firstIndex(of: "# Dicom-Data-Set") else { return nil }
        return lines[(start + 1)...].filter { !$0.hasPrefix("# Used TransferSyntax") }
    }

    static func roundTrip(_ files: [URL]) async throws -> Int {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("px-roundtrip-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var checked = 0
        for file in files {
            guard var parsed = try? Part10File(contentsOf: file.path), !parsed.hadNoPreamble,
                let original = try await dataSetDump(file.path)
            else { continue }
            if !parsed.transferSyntax.isWritable { parsed.transferSyntax = .explicitVRLittleEndian }
            let copy = dir.appendingPathComponent(file.lastPathComponent).path
            try parsed.write(to: copy)
            let test = try await ExternalTool.run("dcmftest", [copy])
            #expect(test.status == 0, "dcmftest rejects px's copy of \(file.lastPathComponent): \(test.text)")
            let written = try await dataSetDump(copy)
            #expect(written != nil, "dcmdump cannot read px's copy of \(file.lastPathComponent)")
            if let written {
                try await compare(original: original, copy: written, file: file, dir: dir)
            }
            checked += 1
        }
        return checked
    }

    /// Compares dumps; group lengths are compared with DCMTK's own recalculation (`dcmconv +g`), since px
    /// recalculates them and some originals carry wrong ones.
    static func compare(original: [String], copy: [String], file: URL, dir: URL) async throws {
        let isGroupLength = { (line: String) in line.contains("GroupLength") }
        let originalValues = original.filter { !isGroupLength($0) }
        let copyValues = copy.filter { !isGroupLength($0) }
        if originalValues != copyValues {
            let first = zip(originalValues, copyValues).first { $0 != $1 }
            Issue.record(
                "\(file.lastPathComponent): dumps differ; first difference:\n  original: \(first?.0 ?? "(\(originalValues.count) lines)")\n  copy:     \(first?.1 ?? "(\(copyValues.count) lines)")"
            )
        }
        let copyLengths = copy.filter(isGroupLength)
        if copyLengths != original.filter(isGroupLength) {
            let recalculated = dir.appendingPathComponent("dcmtk-" + file.lastPathComponent).path
            let conv = try await ExternalTool.run("dcmconv", ["+g", file.path, recalculated])
            #expect(conv.status == 0, "dcmconv +g failed on \(file.lastPathComponent)")
            // dcmconv +g adds group lengths where the original had none; each one px wrote must be among them.
            let expected = Set(try await dataSetDump(recalculated)?.filter(isGroupLength) ?? [])
            let wrong = copyLengths.filter { !expected.contains($0) }
            #expect(
                wrong.isEmpty, "\(file.lastPathComponent): group lengths differ from DCMTK's recalculation: \(wrong)")
        }
    }

    @Test("synthetic corpus")
    func syntheticCorpus() async throws {
        let checked = try await Self.roundTrip(try await Corpus.synthetic())
        #expect(checked >= 55)
    }

    @Test("pydicom's files")
    func pydicomFiles() async throws {
        let checked = try await Self.roundTrip(try await Corpus.pydicom())
        #expect(checked >= 60)
    }
}
