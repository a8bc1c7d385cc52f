import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-dump's output on pydicom's own test files (issue 36): with --compact the NDJSON lines are followed by
/// the envelope, whose data.files names the file of each line; without it each file is its data set alone.
@Suite(.tags(.integration), .integrationTier) struct DumpCommandTests {
    /// pydicom's test file `name`, from the venv the tests use.
    static func pydicomFile(_ name: String) async throws -> String {
        let run = try await PeerHarness.run(
            TestSupport.python, ["-c", "import pydicom.data; print(pydicom.data.get_testdata_file('\(name)'))"])
        let path = run.stdout.split(separator: "\n").first.map(String.init) ?? ""
        try #require(run.exitCode == 0 && path.hasPrefix("/"), "pydicom has no \(name): \(run.stderr)")
        return path
    }

    /// Three files, the second not DICOM: three lines in order, then the envelope naming each.
    @Test func compactLinesAreNamedByTheEnvelope() async throws {
        let ct = try await Self.pydicomFile("CT_small.dcm")
        let mr = try await Self.pydicomFile("MR_small.dcm")
        try await TestSupport.withTemporaryDirectory { directory in
            let junk = directory + "/junk.dcm"
            try Data("not a DICOM file\n".utf8).write(to: URL(fileURLWithPath: junk))
            let run = try await PeerHarness.run("px-dump", ["--compact", ct, junk, mr])
            #expect(run.exitCode == 1, "\(run.stderr)")
            let lines = run.stdout.split(separator: "\n").map { try? JSONParser.parse(String($0)) }
            try #require(lines.count == 4, "\(run.stdout)")
            #expect(lines[0]?["00080060"]?["Value"]?.arrayValue?.first?.stringValue == "CT")
            #expect(lines[1]?["file"]?.stringValue == junk)
            #expect(lines[2]?["00080060"]?["Value"]?.arrayValue?.first?.stringValue == "MR")
            let envelope = try #require(lines[3])
            #expect(envelope["status"]?.stringValue == "error")
            #expect(envelope["backend"]?.stringValue == "none")
            #expect(envelope["error"]?["code"]?.stringValue == "partialFailure")
            let files = envelope["data"]?["files"]?.arrayValue ?? []
            #expect(files.map { $0["file"]?.stringValue } == [ct, junk, mr])
            #expect(files.map { $0["status"]?.stringValue } == ["success", "error", "success"])
            #expect(envelope["data"]?["read"] == .number("2"))
            #expect(envelope["data"]?["failed"] == .number("1"))
        }
    }

    /// Without --compact the output is one DICOM JSON document, as dcm2json prints it: no envelope.
    @Test func aPrettyDumpIsTheDataSetAlone() async throws {
        let ct = try await Self.pydicomFile("CT_small.dcm")
        let run = try await PeerHarness.run("px-dump", [ct])
        #expect(run.exitCode == 0, "\(run.stderr)")
        let document = try JSONParser.parse(run.stdout)
        #expect(document["00080060"]?["Value"]?.arrayValue?.first?.stringValue == "CT")
        #expect(document["status"] == nil)
    }
}
