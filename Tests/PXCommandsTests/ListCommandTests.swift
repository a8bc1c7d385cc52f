import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-ls: a folder place listed with px-find's keys and formats; the same answers as px-find asking px-serve
/// over the same place, and the index brought up to date (or not, with --no-refresh) before each listing.
@Suite(.serialized, .timeLimit(.minutes(5))) struct ListCommandTests {
    static func lines(_ stdout: String) -> [String] {
        stdout.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("{\"status\"") }
    }

    @Test func listsAsPxFindAsksPxServe() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-") { work in
            let place = work + "/place"
            try ServeCommandTests.makePlace(place)
            for arguments in [
                ["--format", "ndjson"], ["--format", "ndjson", "--PatientID", "P1"],
                ["--format", "ndjson", "--level", "image", "--StudyInstanceUID", "1.2.826.0.1.1"],
                ["--format", "ndjson", "--level", "patient", "--model", "patient"],
                // Written as the records are read (px-ls keeps no listing): the whole place, and a --limit.
                ["--format", "ndjson", "--level", "image"], ["--format", "ndjson", "--level", "image", "--limit", "2"],
            ] {
                let ls = try await PeerHarness.runAsync("px-ls", [place] + arguments)
                #expect(ls.exitCode == 0, "\(ls.stdout) \(ls.stderr)")
                #expect(ls.json?["backend"]?.stringValue == "place")
                let (server, port) = try await ServeCommandTests.start(place, work: work)
                let find = try await PeerHarness.runAsync(
                    "px-find", ["PXSERVE@127.0.0.1:\(port)", "--backend", "native"] + arguments)
                server.kill()
                #expect(find.exitCode == 0, "\(find.stdout) \(find.stderr)")
                #expect(!Self.lines(ls.stdout).isEmpty)
                #expect(Self.lines(ls.stdout) == Self.lines(find.stdout), "\(arguments)")
            }
            // The tree view, for people (no envelope on success): the same text as px-find's over px-serve.
            let lsTree = try await PeerHarness.runAsync("px-ls", [place, "--format", "tree"])
            let (treeServer, treePort) = try await ServeCommandTests.start(place, work: work)
            let findTree = try await PeerHarness.runAsync(
                "px-find", ["PXSERVE@127.0.0.1:\(treePort)", "--backend", "native", "--format", "tree"])
            treeServer.kill()
            #expect(lsTree.exitCode == 0 && findTree.exitCode == 0, "\(lsTree.stdout) \(findTree.stdout)")
            #expect(lsTree.stdout.hasPrefix("2 patients | "), "\(lsTree.stdout)")
            #expect(lsTree.stdout == findTree.stdout)
            let badLevel = try await PeerHarness.runAsync("px-ls", [place, "--format", "tree", "--level", "image"])
            #expect(badLevel.exitCode == 64)
            // The default (pypx) shape: studies with their series nested.
            let pypx = try await PeerHarness.runAsync("px-ls", [place, "--PatientID", "P1"])
            let studies = pypx.json?["data"]?.arrayValue ?? []
            #expect(studies.count == 1)
            #expect(studies.first?["series"]?.arrayValue?.count == 2, "\(pypx.stdout)")
            #expect(studies.first?["NumberOfStudyRelatedInstances"]?["value"]?.stringValue == "3")
        }
    }

    @Test func listsAZipPlaceAsTheFolderItWasMadeFrom() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-zip-") { work in
            let place = work + "/place"
            try ServeCommandTests.makePlace(place)
            let zips = "zip:" + work + "/zips"
            let sync = try await PeerHarness.runAsync("px-sync", [place, zips])
            #expect(sync.exitCode == 0, "\(sync.stdout) \(sync.stderr)")
            for arguments in [
                ["--format", "tree"],
                ["--format", "ndjson", "--level", "image", "--QueryReturnTags", "SOPInstanceUID,SeriesInstanceUID"],
                ["--format", "ndjson", "--level", "series", "--PatientID", "P1", "--QueryReturnTags", "Modality"],
            ] {
                let fromZip = try await PeerHarness.runAsync("px-ls", [zips] + arguments)
                let fromFolder = try await PeerHarness.runAsync("px-ls", [place] + arguments)
                #expect(fromZip.exitCode == 0 && fromFolder.exitCode == 0, "\(fromZip.stdout) \(fromZip.stderr)")
                #expect(!Self.lines(fromZip.stdout).isEmpty)
                #expect(
                    Set(Self.lines(fromZip.stdout)) == Set(Self.lines(fromFolder.stdout)),
                    "\(arguments): \(fromZip.stdout) vs \(fromFolder.stdout)")
            }
            let node = try await PeerHarness.runAsync("px-ls", ["PXSERVE@127.0.0.1:1"])
            #expect(node.exitCode == 64, "\(node.stdout)")
        }
    }

    /// An instance held in two files is one instance: listed once at image level and counted once, whether
    /// each UID is held once (px-ls then remembers none) or not.
    @Test func anInstanceHeldTwiceIsListedOnce() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-twice-") { work in
            let place = work + "/place"
            try ServeCommandTests.makePlace(place)
            let once = try await PeerHarness.runAsync("px-ls", [place, "--level", "image", "--format", "ndjson"])
            #expect(Self.lines(once.stdout).count == 4, "\(once.stdout)")
            try FileManager.default.copyItem(atPath: place + "/in/1-1-2.dcm", toPath: place + "/in/z-copy.dcm")
            let twice = try await PeerHarness.runAsync("px-ls", [place, "--level", "image", "--format", "ndjson"])
            #expect(Self.lines(twice.stdout).count == 4, "\(twice.stdout)")
            #expect(Self.lines(twice.stdout) == Self.lines(once.stdout))
            let studies = try await PeerHarness.runAsync(
                "px-ls",
                [
                    place, "--level", "study", "--format", "ndjson", "--PatientID", "P1", "--QueryReturnTags",
                    "NumberOfStudyRelatedInstances",
                ])
            #expect(studies.stdout.contains("\"NumberOfStudyRelatedInstances\":\"3\""), "\(studies.stdout)")
        }
    }

    @Test func refreshesTheIndexUnlessToldNotTo() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-refresh-") { work in
            let place = work + "/place"
            try ServeCommandTests.makePlace(place)
            let first = try await PeerHarness.runAsync("px-ls", [place, "--level", "study", "--format", "ndjson"])
            #expect(Self.lines(first.stdout).count == 2)
            try FileManager.default.removeItem(atPath: place + "/in/2-1-1.dcm")
            let stale = try await PeerHarness.runAsync(
                "px-ls", [place, "--level", "study", "--format", "ndjson", "--no-refresh"])
            #expect(Self.lines(stale.stdout).count == 2)
            let fresh = try await PeerHarness.runAsync("px-ls", [place, "--level", "study", "--format", "ndjson"])
            #expect(Self.lines(fresh.stdout).count == 1, "\(fresh.stdout)")
            let missing = try await PeerHarness.runAsync("px-ls", [work + "/nowhere"])
            #expect(missing.exitCode != 0)
            #expect(missing.json?["error"]?["code"]?.stringValue == "io")
        }
    }
}
