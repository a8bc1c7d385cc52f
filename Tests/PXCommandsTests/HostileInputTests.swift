import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXPlaces
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36, hostile text from the user's side: config and argument files that never end or never open, host
/// names no backend should see, query keys that have no place in an identifier; and from a place's side, values
/// that would act on a terminal or a spreadsheet. Each is refused (exit 64, `usage`) or escaped, and quickly.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileInputTests {
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// A run refused as a usage error, in the JSON envelope, with `fragment` in its message.
    static func expectUsage(
        _ run: PeerHarness.Run, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.json?["error"]?["code"]?.stringValue == "usage", "\(run.stdout)", sourceLocation: sourceLocation)
        let message = run.json?["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
    }

    // MARK: Bounded files

    @Test func boundedFileRefusesWhatIsNotASmallRegularFile() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-bounded-") { work in
            let fifo = work + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let big = work + "/big.toml"
            try Data(repeating: 0x23, count: 1024 + 1).write(to: URL(fileURLWithPath: big))
            let small = work + "/small.toml"
            try Data("a = 1\n".utf8).write(to: URL(fileURLWithPath: small))
            for (path, reason) in [
                ("/dev/zero", "not a regular file (a character device)"),
                ("/dev/urandom", "not a regular file (a character device)"),
                (fifo, "not a regular file (a FIFO)"), (work, "not a regular file (a directory)"),
                (big, "larger than 1 KiB (1025 bytes)"),
            ] {
                let start = ContinuousClock.now
                let error = #expect(throws: PXError.self) {
                    try BoundedFile.readText(path, limit: 1024, role: "config file")
                }
                #expect(error?.code == .usage)
                #expect(error?.message == "config file \(path): \(reason)")
                #expect(Self.seconds(since: start) < 2, "\(path)")
            }
            #expect(try BoundedFile.readText(small, limit: 1024, role: "config file") == "a = 1\n")
            #expect(try BoundedFile.readText(work + "/absent", limit: 1024, role: "config file") == nil)
            #expect(try PXConfig.readFile(small, limit: 6, role: "x") == "a = 1\n")
        }
    }

    @Test(arguments: ["/dev/zero", "/dev/urandom"])
    func endlessConfigIsAUsageErrorAtOnce(path: String) async throws {
        let start = ContinuousClock.now
        let run = try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": path])
        Self.expectUsage(run, "config file \(path): not a regular file")
        // Before: 2-5 GB of memory in seconds, and no end.
        #expect(Self.seconds(since: start) < 20)
    }

    @Test func fifoDirectoryAndOversizedConfigsAreUsageErrors() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-config-") { work in
            let fifo = work + "/config.toml"
            #expect(mkfifo(fifo, 0o600) == 0)
            // A FIFO with no writer: opening it blocked px forever.
            Self.expectUsage(
                try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": fifo]), "(a FIFO)")
            Self.expectUsage(
                try await PeerHarness.run("px-find", ["pacs"], environment: ["PX_CONFIG": work]), "(a directory)")
            let big = work + "/big.toml"
            try Data(("# " + String(repeating: "x", count: 1 << 20) + "\n").utf8).write(to: URL(fileURLWithPath: big))
            Self.expectUsage(
                try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": big]), "larger than 1 MiB")
            // --JSONargs FILE is bounded the same way.
            Self.expectUsage(try await PeerHarness.run("px-echo", ["--JSONargs", "/dev/zero"]), "not a regular file")
        }
    }

    // MARK: Host names

    @Test func peerHostsAreChecked() throws {
        #expect(try PeerSpec.parse("[::1]:104") == .address(host: "::1", port: 104, aeTitle: nil))
        #expect(try PeerSpec.parse("QR@[::1]:104") == .address(host: "::1", port: 104, aeTitle: "QR"))
        #expect(try PeerSpec.parse("[::1]:QR:104") == .address(host: "::1", port: 104, aeTitle: "QR"))
        #expect(try PeerSpec.parse("QR@my_pacs.local:104") == .address(host: "my_pacs.local", port: 104, aeTitle: "QR"))
        for text in [
            "QR@pacs\n-aet:104", "pacs\u{1B}]0;x\u{07}:104", "QR@" + String(repeating: "h", count: 100_000) + ":104",
            "h h:QR:104", "[::1:104", "[::1]104", "QR@[nothost]:104", "[::1]:a:b:104", "QR@::1:104",
        ] {
            let error = #expect(throws: PXError.self, "\(text.prefix(40).debugDescription)") {
                try PeerSpec.parse(text)
            }
            #expect(error?.code == .usage)
            #expect((error?.message.count ?? 0) < 300)
            #expect(error?.message.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value != 0x7F } == true)
        }
    }

    @Test func configNodeHostsAreChecked() throws {
        for host in ["pacs\\n-aet X", "a b", "::1", String(repeating: "a", count: 300)] {
            let error = #expect(throws: PXError.self) {
                try PXConfig(parsing: "[nodes.pacs]\nhost = \"\(host)\"\nport = 104\nae_title = \"P\"\n")
            }
            #expect(error?.message.hasPrefix("config: [nodes.pacs] host") == true, "\(error?.message ?? "")")
        }
        let error = #expect(throws: PXError.self) {
            try PXConfig(parsing: "[remote_nodes.pacs]\nhostname = \"x\\u0007\"\n")
        }
        #expect(error?.message.hasPrefix("config: [remote_nodes.pacs] host") == true, "\(error?.message ?? "")")
        let v6 = try PXConfig(parsing: "[nodes.pacs]\nhost = \"[::1]\"\nport = 104\nae_title = \"P\"\n")
        #expect(v6.nodes["pacs"]?.host == "::1")
    }

    @Test func hostileHostsNeverReachABackend() async throws {
        let held = try TestSupport.holdPort()
        defer { held.release() }
        for backend in ["dcmtk", "native"] {
            for arguments in [
                ["QR@pacs\n-aet:\(held.port)"], ["QR@" + String(repeating: "h", count: 100_000) + ":\(held.port)"],
                ["--serverIP", "127.0.0.1\r", "--serverPort", "\(held.port)"],
            ] {
                let run = try await PeerHarness.run("px-echo", arguments + ["--backend", backend])
                Self.expectUsage(run, "host")
            }
        }
        try await TestSupport.withTemporaryDirectory(prefix: "px-config-") { work in
            let config = work + "/config.toml"
            try Data("[nodes.pacs]\nhost = \"127.0.0.1\\u001b\"\nport = \(held.port)\nae_title = \"P\"\n".utf8).write(
                to: URL(fileURLWithPath: config))
            Self.expectUsage(
                try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": config]),
                "config: [nodes.pacs] host")
        }
    }

    // MARK: Query keys

    @Test(arguments: [
        ("(0002,0010)=1.2.840.10008.1.2", "group 0002"), ("TransferSyntaxUID=1.2", "group 0002"),
        ("AffectedSOPClassUID=1.2", "group 0000"), ("(0000,0100)=1", "group 0000"), ("(FFFE,E000)", "group FFFE"),
        ("(FFFE,E00D)=", "group FFFE"), ("(fffe,e0dd)", "group FFFE"), ("ReferencedSeriesSequence=x", "sequence (SQ)"),
    ])
    func identifierKeysAreChecked(text: String, reason: String) {
        let error = #expect(throws: PXError.self) { try QueryKey.parse(text) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains(reason) == true, "\(error?.message ?? "")")
    }

    @Test func aSequenceAloneStaysAReturnKey() throws {
        #expect(try QueryKey.parse("ReferencedSeriesSequence").vr == .SQ)
        #expect(try QueryKey.parse("ReferencedSeriesSequence=").value == "")
    }

    /// Refused before connecting: the port is held and refuses connections, so an error other than `usage`
    /// (connectionRefused) would mean px tried to send the key.
    @Test func badKeysAreRefusedBeforeConnecting() async throws {
        let held = try TestSupport.holdPort()
        defer { held.release() }
        let peer = "QR@127.0.0.1:\(held.port)"
        for arguments in [
            [peer, "--level", "study", "-k", "(0002,0010)=1.2.840.10008.1.2"], [peer, "TransferSyntaxUID=1.2"],
            [peer, "-k", "(FFFE,E000)"], [peer, "--level", "study", "-k", "ReferencedSeriesSequence=x"],
            [peer, "--level", "study", "(0000,0100)=1"],
        ] {
            for backend in ["dcmtk", "native"] {
                let run = try await PeerHarness.run("px-find", arguments + ["--backend", backend])
                Self.expectUsage(run, "query key")
            }
        }
        // The same command with a sequence as a return key gets as far as the peer.
        let returnKey = try await PeerHarness.run(
            "px-find", [peer, "--level", "study", "-k", "ReferencedSeriesSequence", "--backend", "native"])
        #expect(returnKey.json?["error"]?["code"]?.stringValue == "connectionRefused", "\(returnKey.stdout)")
    }

    // MARK: Values for people

    /// A place whose one instance holds a value of every hostile kind.
    static func makeHostilePlace(_ root: String) throws {
        var ds = DataSet()
        ds.set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: "1.2.826.0.9.1.1.1")
        ds.set(.studyDate, vr: .DA, string: "20240315")
        ds.set(.modality, vr: .CS, string: "CT")
        ds.set(.patientName, vr: .PN, string: "=HYPERLINK(\"http://x\")^\u{1B}]0;pwned\u{07}")
        ds.set(.patientID, vr: .LO, string: "P\r\nFAKE ROW\u{0}X")
        ds.set(Tag(0x0008, 0x1030), vr: .LO, string: "\u{1B}[2J\u{202E}evil\u{9B}")
        ds.set(Tag(0x0008, 0x103E), vr: .LO, string: "@SUM(A1)\u{7F}")
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.826.0.9.1")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.826.0.9.1.1")
        try FileManager.default.createDirectory(atPath: root + "/in", withIntermediateDirectories: true)
        try Data(try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).encoded()).write(
            to: URL(fileURLWithPath: root + "/in/hostile.dcm"))
    }

    static func rawControls(_ text: String) -> [UInt32] {
        text.unicodeScalars.filter { scalar in
            switch scalar.value {
            case 0x0A: return false
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }.map(\.value)
    }

    @Test func tableAndTreeOfAHostilePlaceHoldNoRawControl() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-hostile-") { work in
            let place = work + "/place"
            try Self.makeHostilePlace(place)
            for arguments in [
                ["--format", "table"], ["--format", "table", "--level", "series"], ["--format", "tree"],
                ["--format", "tree", "--level", "study"],
            ] {
                let run = try await PeerHarness.run("px-ls", [place] + arguments)
                #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr)")
                #expect(Self.rawControls(run.stdout).isEmpty, "\(arguments): \(run.stdout.debugDescription)")
                let shown = arguments.contains("series") ? #"@SUM(A1)\x7f"# : #"\x1b]0;pwned\x07"#
                #expect(run.stdout.contains(shown), "\(arguments): \(run.stdout)")
                #expect(!run.stdout.contains("FAKE ROW\n") && !run.stdout.hasPrefix("FAKE"))
            }
            let table = try await PeerHarness.run("px-ls", [place, "--format", "table", "--level", "study"])
            #expect(table.stdout.contains(#"\x1b[2J\u202eevil\u009b"#), "\(table.stdout)")
            #expect(table.stdout.split(separator: "\n").count == 3, "\(table.stdout)")
            // JSON keeps the values as they are, escaped by JSON itself: no raw NUL or ESC.
            for format in ["pypx", "dicom-json", "ndjson", "pypx-clean"] {
                let run = try await PeerHarness.run("px-ls", [place, "--format", format])
                #expect(run.exitCode == 0, "\(run.stdout)")
                // JSON writes C1 and bidi characters as they are (valid JSON); every C0 control and DEL escaped.
                let c0 = run.stdout.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n") || $0.value == 0x7F }
                #expect(c0.isEmpty, "\(format): \(run.stdout.debugDescription)")
                #expect(run.stdout.contains(#"\u001b]0;pwned\u0007"#), "\(format): \(run.stdout)")
            }
        }
    }

    /// The same values from a real peer: px-serve answers px-find's C-FIND from the hostile place, on both
    /// backends (findscu's answers are read back from its files).
    @Test func tableAndTreeFromAPeerHoldNoRawControl() async throws {
        guard PeerHarness.requireTools(["findscu"]) else { return }
        try await TestSupport.withTemporaryDirectory(prefix: "px-find-hostile-") { work in
            let place = work + "/place"
            try Self.makeHostilePlace(place)
            let (server, port) = try await ServeCommandTests.start(place, work: work)
            defer { server.kill() }
            for backend in ["native", "dcmtk"] {
                for format in ["table", "tree"] {
                    let run = try await PeerHarness.run(
                        "px-find", ["PXSERVE@127.0.0.1:\(port)", "--format", format, "--backend", backend])
                    #expect(run.exitCode == 0, "\(backend) \(format): \(run.stdout) \(run.stderr)")
                    #expect(
                        Self.rawControls(run.stdout).isEmpty, "\(backend) \(format): \(run.stdout.debugDescription)")
                    #expect(run.stdout.contains(#"\x1b]0;pwned\x07"#), "\(backend) \(format): \(run.stdout)")
                }
            }
        }
    }

    @Test func csvNeutralizesFormulasUnlessRaw() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-ls-csv-") { work in
            let place = work + "/place"
            try Self.makeHostilePlace(place)
            // The two-phase query's CSV: the study's PatientName and the series' SeriesDescription in one row.
            let safe = try await PeerHarness.run("px-ls", [place, "--format", "csv"])
            #expect(safe.exitCode == 0, "\(safe.stdout) \(safe.stderr)")
            #expect(safe.stdout.contains("'@SUM(A1)"), "\(safe.stdout.debugDescription)")
            #expect(safe.stdout.contains("\"'=HYPERLINK(\"\"http://x\"\")^"), "\(safe.stdout.debugDescription)")
            let raw = try await PeerHarness.run(
                "px-ls", [place, "--format", "csv", "--csv-raw"])
            #expect(raw.exitCode == 0)
            #expect(raw.stdout.contains(",@SUM(A1)"), "\(raw.stdout.debugDescription)")
            #expect(!raw.stdout.contains("'@SUM"))
            for run in [safe, raw] { #expect(!run.stdout.unicodeScalars.contains("\u{0}")) }
            let help = try await PeerHarness.run("px-find", ["--help"])
            #expect(help.stdout.contains("--csv-raw"))
        }
    }
}
