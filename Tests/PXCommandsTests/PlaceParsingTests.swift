import DICOMData
import Foundation
import PXCommandLine
import PXCommands
import PXCore
import PXPlaces
import PXTestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct PlaceParsingTests {
    static let config = try! PXConfig(
        parsing: """
            [nodes.pacs]
            host = "10.0.0.5"
            port = 104
            ae_title = "PACS"

            [nodes.cloud]
            url = "https://example.org/dicom-web"

            [places.archive]
            path = "/data/archive"
            layout = "{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm"

            [places.zips]
            path = "/data/zips"
            kind = "zip"
            """)

    @Test func forms() throws {
        let config = Self.config
        #expect(try Place.parse("QR@h:104", config: config) == .node(.address(host: "h", port: 104, aeTitle: "QR")))
        #expect(try Place.parse("h:QR:104", config: config) == .node(.address(host: "h", port: 104, aeTitle: "QR")))
        #expect(try Place.parse("pacs", config: config) == .node(.node("pacs")))
        #expect(try Place.parse("cloud", config: config) == .web(url: "https://example.org/dicom-web"))
        #expect(try Place.parse("http://h/dicom-web", config: config) == .web(url: "http://h/dicom-web"))
        #expect(try Place.parse("/data/x/", config: config) == .folder(path: "/data/x", layout: nil))
        #expect(try Place.parse("zip:/data/z", config: config) == .zip(path: "/data/z"))
        #expect(try Place.parse("folder:/data/f", config: config) == .folder(path: "/data/f", layout: nil))
        #expect(
            try Place.parse("archive", config: config)
                == .folder(path: "/data/archive", layout: "{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm"))
        #expect(try Place.parse("zips", config: config) == .zip(path: "/data/zips"))
        // Relative paths are made absolute; a bare word is a config name, never a folder.
        if case .folder(let path, _) = try Place.parse("./in", config: config) {
            #expect(path.hasPrefix("/") && path.hasSuffix("/in"))
        } else {
            Issue.record("./in is not a folder")
        }
        #expect(throws: PXError.self) { try Place.parse("nosuchname", config: config) }
        #expect(throws: PXError.self) { try Place.parse("", config: config) }
        #expect(throws: PXError.self) { try Place.parse("zip:", config: config) }
        #expect(
            try Place.parse("/d", config: config).withLayout("{SOPInstanceUID}.dcm")
                == .folder(path: "/d", layout: "{SOPInstanceUID}.dcm"))
        #expect(throws: PXError.self) { try Place.parse("/d", config: config).withLayout("{NoSuchKeyword}.dcm") }
    }

    @Test(arguments: [
        "[places.a]\nkind = \"folder\"", "[places.a]\npath = \"relative\"", "[places.a]\npath = \"/x\"\nkind = \"tar\"",
        "[places.a]\npath = \"/x\"\nkind = \"zip\"\nlayout = \"{SOPInstanceUID}.dcm\"",
        "[places.a]\npath = \"/x\"\nlayout = \"/{SOPInstanceUID}.dcm\"",
    ])
    func badPlaceTables(_ text: String) {
        #expect(throws: PXError.self) { try PXConfig(parsing: text) }
    }

    @Test func batchFile() throws {
        let text = """
            # ids to fetch
            Name,PatientID
            a,PAT1
            "b","PAT2"

            c,
            d,PAT*
            e
            f,PAT3\r
            """
        guard case .lines(let lines, let errors) = try SyncSelection.parseBatch(text) else {
            Issue.record("not lines")
            return
        }
        #expect(lines.map(\.value) == ["PAT1", "PAT2", "PAT3"])
        #expect(lines.map(\.number) == [3, 4, 9])
        #expect(lines.allSatisfy { $0.keyword == "PatientID" })
        #expect(errors.map(\.number) == [6, 7, 8])
        #expect(throws: PXError.self) { try SyncSelection.parseBatch("Name,Other\nx,y") }
        #expect(throws: PXError.self) { try SyncSelection.parseBatch("") }
        guard case .lines(_, let uidErrors) = try SyncSelection.parseBatch("StudyInstanceUID\n1.2.3\nabc\n") else {
            Issue.record("not lines")
            return
        }
        #expect(uidErrors.map(\.number) == [3])
    }
}

/// px-sync's usage and connection errors: the JSON envelope with the error, and the exit status for it.
@Suite(.tags(.integration), .integrationTier, .timeLimit(.minutes(10))) struct SyncErrorTests {
    @Test func usageAndConnectionErrors() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-sync-")
        let one = try await PeerHarness.runAsync("px-sync", [work])
        #expect(one.exitCode == 64)
        #expect(one.json?["error"]?["code"]?.stringValue == "usage")
        let unknown = try await PeerHarness.runAsync("px-sync", ["nosuchname", work + "/d"])
        #expect(unknown.exitCode == 64)
        #expect(unknown.json?["error"]?["message"]?.stringValue?.contains("./nosuchname") == true, "\(unknown.stdout)")
        let badLayout = try await PeerHarness.runAsync(
            "px-sync", ["QR@127.0.0.1:104", work + "/d", "--layout", "{NoSuchKeyword}.dcm"])
        #expect(badLayout.exitCode == 64, "\(badLayout.stdout)")
        let held = try TestSupport.holdPort()
        defer { held.release() }
        let port = held.port
        for backend in ["dcmtk", "native"] {
            let refused = try await PeerHarness.runAsync(
                "px-sync", ["QR@127.0.0.1:\(port)", work + "/d", "--backend", backend])
            #expect(refused.exitCode == 1, "\(backend): \(refused.stdout)")
            #expect(
                refused.json?["error"]?["code"]?.stringValue == "connectionRefused", "\(backend): \(refused.stdout)")
            #expect(refused.json?["data"]?["found"] == .number("0"))
        }
    }
}
