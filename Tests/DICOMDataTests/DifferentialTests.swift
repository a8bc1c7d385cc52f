import Foundation
import PXTestSupport
import Testing

@testable import DICOMData

/// px's DICOM JSON against DCMTK's dcm2json, element for element, on files px did not write.
///
/// Where dcm2json cannot convert a file (compressed pixel data, ISO 2022 IR 87 with this build's iconv,
/// a file it cannot parse) or leaves escape sequences unconverted in its output, the test says so and
/// compares with pydicom's `to_json_dict` instead, after ``PydicomNormalization`` has removed the
/// differences that are pydicom's own choices rather than decoding (group lengths, padding it keeps,
/// UN elements it converts through its dictionary, the original (0008,0005) terms).
/// Where dcm2json cannot read a file at all (exit 20), px must refuse it too.
@Suite(
    "Differential: px-dump vs dcm2json / pydicom", .tags(.integration), .integrationTier, .serialized,
    .timeLimit(.minutes(10)))
struct DifferentialTests {
    enum Reference: Equatable { case dcm2json, pydicom, bothFailed }

    struct Outcome {
        var reference: Reference
        var differences: [String]
        var note: String
    }

    static func compare(_ file: URL) async throws -> Outcome {
        let ours: JSONValue?
        do {
            ours = try Part10File(contentsOf: file.path).dataSet.dicomJSON()
        } catch {
            ours = nil
        }
        let dcmtk = try await ExternalTool.run("dcm2json", [file.path])
        let dcmtkText = dcmtk.text
        if dcmtk.status == 0, !dcmtkText.contains("\u{1B}"), !dcmtkText.contains("\\u001b") {
            guard let ours else {
                return Outcome(reference: .dcm2json, differences: ["px could not read a file dcm2json reads"], note: "")
            }
            let diffs = JSONComparison.differences(
                try JSONComparison.parse(Data(ours.serialized().utf8)), try JSONComparison.parse(dcmtk.stdout))
            return Outcome(reference: .dcm2json, differences: diffs, note: "")
        }
        let note = "dcm2json: exit \(dcmtk.status) \(dcmtk.stderr.split(separator: "\n").last ?? "")"
        // dcm2json exits 20 when it cannot parse the file at all (truncated, lengths past the end).
        let dcmtkCannotParse = dcmtk.status == 20
        let script = TestSupport.repositoryRoot + "/Tests/DICOMDataTests/Support/pydicom_json.py"
        let py = try await ExternalTool.run(TestSupport.python, [script, file.path])
        if py.status == 3 {
            if dcmtkCannotParse {
                // Neither reference reads the file: px must refuse it too.
                return Outcome(
                    reference: .dcm2json,
                    differences: ours == nil ? [] : ["px read a file that neither dcm2json nor pydicom reads"],
                    note: note)
            }
            // dcm2json parsed it but could not write JSON, and pydicom cannot either: reported in the counts.
            return Outcome(
                reference: .bothFailed, differences: [],
                note: note + "; pydicom: \(py.stderr.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        guard py.status == 0 else { throw Corpus.CorpusError(message: "pydicom_json.py failed: \(py.stderr)") }
        guard let ours else {
            // pydicom is lenient with truncated files; DCMTK and px refuse them.
            return Outcome(
                reference: dcmtkCannotParse ? .dcm2json : .pydicom,
                differences: dcmtkCannotParse ? [] : ["px could not read a file pydicom reads"], note: note)
        }
        let pxTree = try JSONComparison.parse(Data(ours.serialized().utf8))
        let reference = PydicomNormalization.normalize(try JSONComparison.parse(py.stdout), against: pxTree)
        let diffs = JSONComparison.differences(pxTree, reference, ignoring: { $0.hasSuffix("/00080005/Value") })
        return Outcome(reference: .pydicom, differences: diffs, note: note)
    }

    static func check(_ files: [URL], minimumDcm2json: Int) async throws {
        var byReference: [Reference: Int] = [:]
        for file in files {
            let outcome = try await compare(file)
            byReference[outcome.reference, default: 0] += 1
            for difference in outcome.differences.prefix(5) {
                Issue.record("\(file.lastPathComponent) vs \(outcome.reference): \(difference) \(outcome.note)")
            }
        }
        // Most files must be checked against DCMTK itself, not the fallbacks.
        #expect(byReference[.dcm2json, default: 0] >= minimumDcm2json, "\(byReference)")
        #expect(byReference[.bothFailed, default: 0] <= 2, "\(byReference)")
    }

    @Test("synthetic corpus made by DCMTK's dump2dcm and friends")
    func syntheticCorpus() async throws {
        let files = try await Corpus.synthetic()
        #expect(files.count >= 50)
        try await Self.check(files, minimumDcm2json: 40)
    }

    @Test("pydicom's bundled test and character-set files")
    func pydicomFiles() async throws {
        let files = try await Corpus.pydicom()
        #expect(files.count >= 90)
        try await Self.check(files, minimumDcm2json: 45)
    }

    @Test("files neither reference can read are refused by px with an error naming the offset")
    func truncatedFilesAreRefused() async throws {
        let files = try await Corpus.pydicom().filter { $0.lastPathComponent.contains("truncated") }
        #expect(files.count >= 2)
        for file in files {
            #expect(throws: DICOMDataError.self) { try Part10File(contentsOf: file.path) }
            do {
                _ = try Part10File(contentsOf: file.path)
            } catch {
                #expect(error.offset != nil, "\(file.lastPathComponent): \(error)")
            }
        }
    }
}
