import DICOMData
import PXCommandLine
import PXCore
import PXTestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct PeerSpecTests {
    @Test func forms() throws {
        #expect(try PeerSpec.parse("127.0.0.1:104") == .address(host: "127.0.0.1", port: 104, aeTitle: nil))
        #expect(
            try PeerSpec.parse("QRSCP@pacs.local:11112") == .address(host: "pacs.local", port: 11112, aeTitle: "QRSCP"))
        #expect(try PeerSpec.parse("pacs:ORTHANC:4242") == .address(host: "pacs", port: 4242, aeTitle: "ORTHANC"))
        #expect(try PeerSpec.parse("mypacs") == .node("mypacs"))
    }

    @Test(arguments: ["", "host:", "host:notaport", "host:0", "host:70000", "@h:1", "AE@h", "a:b:c:d", ":104"])
    func malformed(_ text: String) {
        #expect(throws: PXError.self) { try PeerSpec.parse(text) }
    }
}

@Suite(.timeLimit(.minutes(10))) struct TOMLSubsetTests {
    @Test func configFile() throws {
        let config = try PXConfig(
            parsing: """
                # px config
                [local]
                ae_title = "MYSCU"   # trailing comment

                [nodes.pacs]
                host = "10.0.0.5"
                port = 104
                ae_title = 'PACS#1'
                """)
        #expect(config.localAETitle == "MYSCU")
        #expect(config.nodes["pacs"] == PXConfig.Node(host: "10.0.0.5", port: 104, aeTitle: "PACS#1"))
    }

    @Test func valuesAndEscapes() throws {
        let t = try TOMLSubset.parse("a = \"x\\\"y\"\nb = 1_000\nc = true\n[t]\nd = -3")
        #expect(t[""]?["a"] == .string("x\"y"))
        #expect(t[""]?["b"] == .integer(1000))
        #expect(t[""]?["c"] == .bool(true))
        #expect(t["t"]?["d"] == .integer(-3))
    }

    @Test(arguments: ["[nodes.x", "key", "a = \"open", "a = [1, 2]", "[[array]]"])
    func rejects(_ text: String) {
        #expect(throws: PXError.self) { try TOMLSubset.parse(text) }
    }

    @Test func incompleteNode() {
        #expect(throws: PXError.self) { try PXConfig(parsing: "[nodes.a]\nhost = \"h\"") }
    }
}

@Suite(.timeLimit(.minutes(10))) struct QueryKeyTests {
    @Test func spellings() throws {
        #expect(try QueryKey.parse("PatientName=Doe*") == QueryKey(tag: .patientName, vr: .PN, value: "Doe*"))
        #expect(try QueryKey.parse("(0010,0020)=PAT1").tag == .patientID)
        #expect(try QueryKey.parse("0020,000d").value == nil)
        #expect(throws: PXError.self) { try QueryKey.parse("NoSuchKeyword=1") }
    }

    @Test func moveTargetsFromFindOutput() throws {
        let text = """
            {"status":"success","backend":"dcmtk","command":[],"data":[{"uid":{"tag":0,"value":0,"label":"uid"},
            "StudyInstanceUID":{"tag":"0020,000d","value":"1.2","label":"StudyInstanceUID"},
            "series":[{"SeriesInstanceUID":{"tag":"0020,000e","value":"1.2.3","label":"SeriesInstanceUID"}},
                      {"SeriesInstanceUID":{"tag":"0020,000e","value":"1.2.4","label":"SeriesInstanceUID"}}]}]}
            """
        let targets = try RetrieveSelection.parse(pxFindOutput: text)
        #expect(
            targets == [
                RetrieveSelection(studyInstanceUID: "1.2", seriesInstanceUID: "1.2.3"),
                RetrieveSelection(studyInstanceUID: "1.2", seriesInstanceUID: "1.2.4"),
            ])
        let ndjson =
            "{\"StudyInstanceUID\":\"9.8\",\"SeriesInstanceUID\":\"9.8.7\",\"SOPInstanceUID\":\"9.8.7.6\"}\n{\"status\":\"success\",\"data\":{\"count\":1}}\n"
        #expect(
            try RetrieveSelection.parse(pxFindOutput: ndjson) == [
                RetrieveSelection(studyInstanceUID: "9.8", seriesInstanceUID: "9.8.7", sopInstanceUIDs: ["9.8.7.6"])
            ])
    }
}

/// Every command's `--help` explains its exit codes, and its text fits an 80-column terminal without
/// being re-wrapped mid-line by ArgumentParser.
@Suite(.timeLimit(.minutes(10))) struct HelpTextTests {
    @Test(arguments: [
        "px-echo", "px-find", "px-move", "px-listen", "px-push", "px-get", "px-dump", "px-serve", "px-ls",
    ])
    func exitTableAndWidth(command: String) async throws {
        // A wide terminal: ArgumentParser wraps nothing, so the lines are the ones we wrote.
        let run = try await PeerHarness.run(command, ["--help"], environment: ["COLUMNS": "200"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        if command != "px-dump" {
            for code in [
                "0   success", "1   DICOM failure", "64  usage error", "69  DCMTK tool missing", "75  timeout",
            ] {
                #expect(run.stdout.contains(code), "\(command) --help lacks '\(code)'")
            }
        } else {
            #expect(run.stdout.contains("Exit status"))
        }
        // The discussion: after the OVERVIEW line, up to the generated USAGE line.
        let lines = run.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        let discussion = lines.dropFirst().prefix { !$0.hasPrefix("USAGE:") }
        #expect(discussion.count > 5)
        let long = discussion.filter { $0.count > 80 }
        #expect(long.isEmpty, "\(command): \(long)")
    }
}

/// A usage error found while parsing the arguments is a JSON envelope on stdout too (exit 64), with
/// ArgumentParser's message and usage line on stderr; `--help` stays plain text.
@Suite(.timeLimit(.minutes(10))) struct UsageErrorTests {
    @Test(arguments: [
        ("px-echo", ["127.0.0.1:1", "--no-such-option"], "Unknown option '--no-such-option'"),
        ("px-find", ["127.0.0.1:1", "--limit", "many"], "The value 'many' is invalid for '--limit <limit>'"),
        ("px-move", ["127.0.0.1:1"], "give the move destination with --destination"),
        ("px-get", ["127.0.0.1:1", "--no-such-option"], "Unknown option '--no-such-option'"),
        ("px-listen", ["--port", "70000"], "--port 70000 is out of range 0-65535"),
        ("px-push", ["127.0.0.1:1", "a.dcm", "--window", "0", "--backend", "native"], "--window must be at least 1"),
        ("px-serve", ["place", "--move-destination", "NOPE"], "--move-destination 'NOPE': expected AE=host:port"),
        ("px-ls", ["place", "--limit", "many"], "The value 'many' is invalid for '--limit <limit>'"),
    ])
    func envelope(command: String, arguments: [String], message: String) async throws {
        let run = try await PeerHarness.run(command, arguments)
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)")
        let json = try #require(run.json, "no JSON on stdout: \(run.stdout)")
        #expect(json["status"]?.stringValue == "error")
        #expect(json["error"]?["code"]?.stringValue == "usage")
        #expect(json["error"]?["message"]?.stringValue == message, "\(run.stdout)")
        #expect(json["backend"]?.stringValue == (arguments.contains("native") ? "native" : "auto"))
        #expect(json["command"]?.arrayValue?.count == arguments.count + 1)
        #expect(run.stderr.contains("Error: " + message), "\(run.stderr)")
    }

    /// An enumerated option's value is checked by ArgumentParser, which names the valid ones.
    @Test(arguments: [
        (
            "px-find", ["127.0.0.1:1", "--level", "instance"],
            "The value 'instance' is invalid for '--level <level>'. Please provide one of 'patient', 'study', 'series' or 'image'."
        ),
        (
            "px-find", ["127.0.0.1:1", "--format", "xlsx"],
            "The value 'xlsx' is invalid for '--format <format>'. Please provide one of the following: 'pypx', 'pypx-clean', 'dicom-json', 'ndjson', 'csv', 'table', 'tree'"
        ),
        (
            "px-listen", ["--on-duplicate", "replace"],
            "The value 'replace' is invalid for '--on-duplicate <on-duplicate>'. Please provide one of 'keep', 'overwrite' or 'rename'."
        ),
    ])
    func enumeratedValues(command: String, arguments: [String], message: String) async throws {
        let run = try await PeerHarness.run(command, arguments)
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["error"]?["code"]?.stringValue == "usage")
        #expect(run.json?["error"]?["message"]?.stringValue == message, "\(run.stdout)")
    }

    /// DICOM spells QueryRetrieveLevel in capitals (PS3.4 §C.6): `--level IMAGE` is `--level image`.
    /// The query then runs (and finds the port closed), it is not a usage error.
    @Test(arguments: ["IMAGE", "image", "Series", "PATIENT"])
    func levelInAnyCase(level: String) async throws {
        let port = String(try TestSupport.freePort())
        let run = try await PeerHarness.run(
            "px-find", ["127.0.0.1:" + port, "--level", level, "--model", "PATIENT", "--backend", "native"])
        #expect(run.exitCode == 1, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["error"]?["code"]?.stringValue == "connectionRefused")
    }

    @Test func helpIsNotAnError() async throws {
        let run = try await PeerHarness.run("px-find", ["--help"])
        #expect(run.exitCode == 0)
        #expect(run.stdout.hasPrefix("OVERVIEW:"))
        #expect(run.json == nil)
    }
}
