import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXPlaces
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

/// The config file, read by TOMLKit: any valid TOML 1.0, refused with its line when invalid.
@Suite(.timeLimit(.minutes(10))) struct ConfigFileTests {
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

    /// What the hand-written subset refused and TOML allows: inline tables, dotted keys, quoted table names,
    /// multi-line and escaped strings, arrays and dates in tables px does not read, hex and underscored integers.
    @Test func anyValidTOML() throws {
        let config = try PXConfig(
            parsing: #"""
                title = "my nodes"
                updated = 2026-11-26T13:00:00Z
                tags = ["a", "b", [1, 2]]
                local.ae_title = "DOTTED"

                [nodes]
                inline = { host = "h1", port = 0x68, ae_title = "IN\u0041" }

                [nodes."x-ray room"]
                host = """
                room.example"""
                port = 11_112
                ae_title = "ROOM"
                notes = ["px reads", "what it knows"]

                [[unrelated.array]]
                n = 1
                """#)
        #expect(config.localAETitle == "DOTTED")
        #expect(config.nodes["inline"] == PXConfig.Node(host: "h1", port: 104, aeTitle: "INA"))
        #expect(config.nodes["x-ray room"] == PXConfig.Node(host: "room.example", port: 11112, aeTitle: "ROOM"))
    }

    /// Invalid TOML is refused with its line (and column).
    @Test(arguments: [
        ("[nodes.x", 1), ("[nodes.a]\nhost = \"h\"\nkey", 3), ("a = 1\nb = \"open", 2), ("a = 1\na = 2", 2),
        ("[t]\n\n\nx = [1,", 4),
    ])
    func rejectsWithLine(text: String, line: Int) {
        let error = #expect(throws: PXError.self) { try PXConfig(parsing: text, path: "/etc/px.toml") }
        #expect(error?.code == .usage)
        #expect(
            error?.message.hasPrefix("config file /etc/px.toml line \(line), column ") == true,
            "\(error?.message ?? "")")
    }

    /// A key of the wrong type is named, with its table.
    @Test(arguments: [
        ("[nodes.a]\nhost = \"h\"\nport = \"104\"\nae_title = \"A\"", "config: nodes.a.port must be a number"),
        ("[nodes.a]\nhost = 1\nport = 104\nae_title = \"A\"", "config: nodes.a.host must be a quoted string"),
        (
            "[nodes.a]\nhost = \"h\"\nport = 1\nae_title = \"A\"\ntls = \"yes\"",
            "config: nodes.a.tls must be true or false"
        ),
    ])
    func wrongTypes(text: String, message: String) {
        let error = #expect(throws: PXError.self) { try PXConfig(parsing: text) }
        #expect(error?.message == message)
    }

    @Test func incompleteNode() {
        let error = #expect(throws: PXError.self) { try PXConfig(parsing: "[nodes.a]\nhost = \"h\"") }
        #expect(error?.message == "config: [nodes.a] needs port = <number>")
    }

    /// dcm's own config (its `dcm_conf.toml`): remote nodes with dcm's defaults, the default local node.
    @Test func dcmSections() throws {
        let config = try PXConfig(
            parsing: """
                [local_nodes]

                  [local_nodes.other_local]
                  ae_title = "MYOTHERAE"
                  port = 11113

                  [local_nodes.default]
                  ae_title = "YOURAE"
                  port = 11112

                [remote_nodes]

                  [remote_nodes.yourpacs]
                  host = "yourpacs.example.org"
                  ae_title = "PACSAETITLE"
                  port = 104

                  [remote_nodes.readme]
                  hostname = "mypacs.org"
                  ae_title = "MYPACS"
                  port = 11112

                  [remote_nodes.bare]
                  host = "bare.example.org"

                [selectors.internal]
                attr = "DeviceSerialNumber"
                op = "in"
                rvalue = [ "12345", "67890" ]
                """)
        #expect(
            config.nodes["yourpacs"] == PXConfig.Node(host: "yourpacs.example.org", port: 104, aeTitle: "PACSAETITLE"))
        #expect(config.nodes["readme"] == PXConfig.Node(host: "mypacs.org", port: 11112, aeTitle: "MYPACS"))
        #expect(config.nodes["bare"] == PXConfig.Node(host: "bare.example.org", port: 11112, aeTitle: "ANYAE"))
        #expect(config.localAETitle == "YOURAE")
        #expect(config.localPort == 11112)
        // px's [local] wins over dcm's default local node; one name in both node tables is an error.
        let both = try PXConfig(parsing: "[local]\nae_title = \"PX\"\n[local_nodes.default]\nae_title = \"DCM\"")
        #expect(both.localAETitle == "PX")
        #expect(throws: PXError.self) {
            try PXConfig(
                parsing: "[nodes.a]\nhost = \"h\"\nport = 1\nae_title = \"A\"\n[remote_nodes.a]\nhost = \"h\"")
        }
        #expect(throws: PXError.self) { try PXConfig(parsing: "[remote_nodes.a]\nae_title = \"A\"") }
    }
}

@Suite(.timeLimit(.minutes(10))) struct QueryKeyTests {
    @Test func spellings() throws {
        #expect(try QueryKey.parse("PatientName=Doe*") == QueryKey(tag: .patientName, vr: .PN, value: "Doe*"))
        #expect(try QueryKey.parse("(0010,0020)=PAT1").tag == .patientID)
        #expect(try QueryKey.parse("0020,000d").value == nil)
        #expect(throws: PXError.self) { try QueryKey.parse("NoSuchKeyword=1") }
    }

    /// dcm's `px-find pacs StudyDate=20240101`: which words are query keys, and the peer wherever it stands.
    @Test func positionalKeys() throws {
        for key in ["StudyDate=20240101", "PatientName=Doe*", "(0010,0020)=P1", "0010,0020=P1", "Modality="] {
            #expect(QueryKey.isAssignment(key), "\(key)")
        }
        for peer in [
            "pacs", "QR@h:104", "h:QR:104", "127.0.0.1:104", "http://h/dicom-web?a=b", "/data/run=1", "zip:/z=1", "=x",
        ] {
            #expect(!QueryKey.isAssignment(peer), "\(peer)")
        }
        #expect(
            try QueryKey.separate(first: "pacs", rest: ["StudyDate=2024", "Modality=MR"])
                == ("pacs", ["StudyDate=2024", "Modality=MR"]))
        #expect(try QueryKey.separate(first: "StudyDate=2024", rest: ["pacs"]) == ("pacs", ["StudyDate=2024"]))
        #expect(try QueryKey.separate(first: "StudyDate=2024", rest: []) == (nil, ["StudyDate=2024"]))
        let extra = #expect(throws: PXError.self) { try QueryKey.separate(first: "pacs", rest: ["other"]) }
        #expect(extra?.message.hasPrefix("unexpected argument 'other' after 'pacs'") == true)
        let unknown = #expect(throws: PXError.self) { try QueryKey.separate(first: "pacs", rest: ["NoSuchKey=1"]) }
        #expect(unknown?.message == "unknown query key 'NoSuchKey': use a DICOM keyword or (gggg,eeee)")
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
        #expect(!RetrieveSelection.isNoMatch(pxFindOutput: ndjson))
    }

    /// Issue 32: what px-find prints when nothing matched is nothing to retrieve, not a usage error; other
    /// text without a StudyInstanceUID is not px-find's answer of no match.
    @Test func findOutputOfNoMatch() throws {
        for text in [
            "[]",
            "[]\n",
            #"{"status":"success","backend":"native","command":["px-find"],"data":[]}"#,
            #"{"status":"success","backend":"native","command":[],"data":{"count":0}}"# + "\n",
        ] {
            #expect(try RetrieveSelection.parse(pxFindOutput: text).isEmpty, "\(text)")
            #expect(RetrieveSelection.isNoMatch(pxFindOutput: text), "\(text)")
        }
        for text in [
            "", " \n", "{}", #"{"foo":1}"#, "[{}]",
            #"{"status":"error","backend":"native","command":[],"data":[],"error":{"code":"timeout"}}"#,
            #"{"status":"success","backend":"native","command":[],"data":[{"PatientID":"P"}]}"#,
            "not json",
        ] {
            #expect(!RetrieveSelection.isNoMatch(pxFindOutput: text), "\(text)")
        }
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

/// px-find --help lists the common query keys (issue 23) and says -k takes any keyword.
@Suite(.timeLimit(.minutes(10))) struct QueryHelpTests {
    @Test(arguments: ["px-find", "px-ls"]) func commonKeysListed(command: String) async throws {
        let run = try await PeerHarness.run(command, ["--help"], environment: ["COLUMNS": "200"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        for flag in [
            "--PatientID", "--PatientName", "--PatientBirthDate", "--AccessionNumber", "--StudyDate", "--Modality",
            "--ModalitiesInStudy", "--StudyDescription", "--SeriesDescription", "--StudyInstanceUID",
            "--SeriesInstanceUID", "--SOPInstanceUID", "-k, --key <key>", "<Keyword=value> ...",
        ] {
            #expect(run.stdout.contains(flag), "\(command) --help lacks \(flag)")
        }
        #expect(run.stdout.contains("Any query key, by DICOM keyword or tag"))
        // pypx 0.8's camelCase spellings stay hidden.
        #expect(!run.stdout.contains("--patientID <"))
    }
}

/// pypx's --JSONargs: an object of options, inline or in a file, before the rest of the command line.
@Suite(.timeLimit(.minutes(10))) struct JSONArgumentsTests {
    @Test func expands() throws {
        #expect(try JSONArguments.expand(["pacs", "-k", "A=1"]) == ["pacs", "-k", "A=1"])
        #expect(
            try JSONArguments.expand([
                "pacs", "--JSONargs",
                #"{"PatientID": "P1", "serverPort": 104, "StudyOnly": true, "json": false, "x": null}"#,
                "--format", "table",
            ]) == ["--PatientID", "P1", "--serverPort", "104", "--StudyOnly", "pacs", "--format", "table"])
        let file = try TestSupport.makeTemporaryDirectory(prefix: "px-jsonargs-") + "/args.json"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(#"{"aec": "QR"}"#.utf8)))
        #expect(try JSONArguments.expand(["--JSONargs=" + file, "h:1"]) == ["--aec", "QR", "h:1"])
        for bad in [
            ["--JSONargs"], ["--JSONargs", "[1]"], ["--JSONargs", "/no/such/file"], ["--JSONargs", #"{"a": [1]}"#],
        ] {
            #expect(throws: (any Error).self) { try JSONArguments.expand(bad) }
        }
    }

    @Test func usageErrorEnvelope() async throws {
        let run = try await PeerHarness.run("px-find", ["--JSONargs", "{not json"])
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)")
        #expect(run.json?["error"]?["code"]?.stringValue == "usage")
        #expect(run.json?["error"]?["message"]?.stringValue?.hasPrefix("--JSONargs: ") == true, "\(run.stdout)")
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
        let closed = try TestSupport.holdPort()
        defer { closed.release() }
        let port = String(closed.port)
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
