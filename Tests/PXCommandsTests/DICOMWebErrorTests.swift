import DICOMData
import DICOMWeb
import Foundation
import PXCore
import PXTestSupport
import Testing

/// Issue 13's error list, the cases the other tests of the suite leave out: a host that does not
/// resolve, a URL that is not one, and a URL whose server answers 200 with something that is not
/// DICOMweb. Each a JSON error with a code and a non-zero exit, and no file under the root.
extension DICOMWebCommandTests {
    @Test(
        "wrong URLs: unknown host, malformed URL, a web page instead of DICOMweb: JSON errors, non-zero exits, no files"
    )
    func wrongURLs() async throws {
        let context = try Self.context()
        let root = context.work + "/wrong-urls"

        // RFC 6761: .invalid never resolves.
        let unknown = try await PeerHarness.runAsync(
            "px-get", ["http://px-no-such-host.invalid/dicom-web", "--StudyInstanceUID", "1.2.3", "-d", root])
        #expect(unknown.exitCode != 0, "\(unknown.stdout)")
        #expect(unknown.json?["status"]?.stringValue == "error", "\(unknown.stdout)")
        #expect(unknown.json?["error"]?["code"]?.stringValue == "unknownHost", "\(unknown.stdout)")

        for malformed in ["http://", "http://:8042/dicom-web", "https://[::1/dicom-web", "http://127.0.0.1:99999/x"] {
            let run = try await PeerHarness.runAsync("px-find", [malformed, "--level", "study"])
            #expect(run.exitCode == 64, "\(malformed): \(run.stdout) \(run.stderr)")
            #expect(run.json?["error"]?["code"]?.stringValue == "usage", "\(malformed): \(run.stdout)")
        }

        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "html-server")
        defer { server.kill() }
        let page = "http://127.0.0.1:\(port)/html"
        let find = try await PeerHarness.runAsync("px-find", [page, "--level", "study"])
        #expect(find.exitCode != 0, "\(find.stdout)")
        #expect(find.json?["error"]?["code"]?.stringValue == "invalidResponse", "\(find.stdout)")
        for parallel in ["1", "4"] {
            let get = try await PeerHarness.runAsync(
                "px-get", [page, "--StudyInstanceUID", "1.2.3", "-d", root, "--parallel", parallel])
            #expect(get.exitCode != 0, "\(get.stdout)")
            #expect(get.json?["error"]?["code"]?.stringValue == "invalidResponse", "\(get.stdout)")
        }
        #expect(Self.files(under: root).isEmpty)
    }
}

extension DICOMWebCommandTests {
    @Test("QIDO-RS paging against services that ignore limit, or offset: all matches once, or an error, never a loop")
    func pagingHostile() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "paging-server")
        defer { server.kill() }
        let noPaging = DICOMWebInventory(
            place: try DICOMWebPlace(url: "http://127.0.0.1:\(port)/nopaging"), pageSize: 2)
        let studies = try await noPaging.studies(matching: DataSet())
        #expect(studies.map(\.studyInstanceUID) == ["1.2.3.1", "1.2.3.2", "1.2.3.3"])

        let noOffset = DICOMWebInventory(
            place: try DICOMWebPlace(url: "http://127.0.0.1:\(port)/nooffset"), pageSize: 1)
        do {
            let got = try await noOffset.studies(matching: DataSet())
            Issue.record("a service that ignores offset gave \(got.count) studies, no error")
        } catch {
            #expect(error.code == .invalidResponse, "\(error)")
        }

        let limited = try await PeerHarness.runAsync(
            "px-find", ["http://127.0.0.1:\(port)/nopaging", "--level", "study", "--limit", "2"])
        #expect(limited.json?["data"]?.arrayValue?.count == 2, "\(limited.stdout)")
    }
}
