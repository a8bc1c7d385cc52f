import DICOMData
import Foundation
import PXTestSupport
import Testing

/// dcm users' habits against a real dcmqrscp (issue 23): dcm's config file names the node and the local AE,
/// and query keys are written as dcm writes them, `px-find NODE StudyDate=20240116`, on px-find and px-ls.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct DcmHabitTests {
    @Test func dcmConfigAndPositionalKeys() async throws {
        guard PeerHarness.requireTools(["dcmqrscp", "storescu", "echoscu", "findscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-dcm-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let qrPort = try TestSupport.freePort()
        let scripts = TestSupport.repositoryRoot + "/scripts/"
        let corpus = try await PeerHarness.run(TestSupport.python, [scripts + "make-qr-corpus.py", work + "/corpus"])
        try #require(corpus.exitCode == 0, "make-qr-corpus.py failed: \(corpus.stderr)")
        let start = try await PeerHarness.run(scripts + "dcmqrscp-start.sh", [work + "/qr", String(qrPort)])
        defer { TestSupport.killPeer(pidFile: work + "/qr/dcmqrscp.pid") }
        try #require(start.exitCode == 0, "dcmqrscp-start.sh failed: \(start.stderr)")
        let load = try await PeerHarness.run(scripts + "dcmqrscp-load.sh", [work + "/qr", work + "/corpus"])
        try #require(load.exitCode == 0, "dcmqrscp-load.sh failed: \(load.stderr)")

        // dcm's config as dcm writes it (README's `hostname`), given as px's config file.
        let dcmConfig = """
            [local_nodes]
              [local_nodes.default]
              ae_title = "DCMSCU"
              port = 11112

            [remote_nodes]
              [remote_nodes.qr]
              hostname = "127.0.0.1"
              ae_title = "QRSCP"
              port = \(qrPort)

            [selectors.internal]
            attr = "DeviceSerialNumber"
            op = "in"
            rvalue = [ "12345", "67890" ]
            """
        let configPath = work + "/dcm_conf.toml"
        #expect(FileManager.default.createFile(atPath: configPath, contents: Data(dcmConfig.utf8)))
        let env = ["PX_CONFIG": configPath]

        let echo = try await PeerHarness.run("px-echo", ["qr"], environment: env)
        #expect(echo.exitCode == 0, "\(echo.stdout) \(echo.stderr)")
        #expect(echo.json?["data"]?["callingAETitle"]?.stringValue == "DCMSCU")

        // Invalid TOML: a usage error naming the file's line, in the JSON envelope.
        let broken = work + "/broken.toml"
        #expect(FileManager.default.createFile(atPath: broken, contents: Data("[remote_nodes.qr]\nport = = 1\n".utf8)))
        let refused = try await PeerHarness.run("px-echo", ["qr"], environment: ["PX_CONFIG": broken])
        #expect(refused.exitCode == 64, "\(refused.stdout) \(refused.stderr)")
        #expect(refused.json?["error"]?["code"]?.stringValue == "usage")
        #expect(
            refused.json?["error"]?["message"]?.stringValue?.hasPrefix("config file \(broken) line 2, column ") == true,
            "\(refused.stdout)")

        // dcm's own file where dcm keeps it, when px has none: $HOME/.config/dcm/dcm_conf.toml.
        let home = work + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.config/dcm", withIntermediateDirectories: true)
        #expect(
            FileManager.default.createFile(atPath: home + "/.config/dcm/dcm_conf.toml", contents: Data(dcmConfig.utf8)))
        let fromHome = try await PeerHarness.run("px-echo", ["qr"], environment: ["PX_CONFIG": "", "HOME": home])
        #expect(fromHome.exitCode == 0, "\(fromHome.stdout) \(fromHome.stderr)")
        #expect(fromHome.json?["data"]?["callingAETitle"]?.stringValue == "DCMSCU")

        // `px-find qr StudyDate=20240116` is `-k StudyDate=20240116`: one study (PAT001's second), on both backends,
        // and so is the key before the peer, or after --serverIP/--serverPort.
        for backend in ["dcmtk", "native"] {
            let b = ["--backend", backend]
            let flagged = try await PeerHarness.run(
                "px-find", ["qr", "-k", "StudyDate=20240116"] + b, environment: env)
            #expect(flagged.exitCode == 0, "\(flagged.stdout) \(flagged.stderr)")
            let studies = flagged.json?["data"]?.arrayValue ?? []
            #expect(studies.count == 1)
            #expect(studies.first?["PatientID"]?["value"]?.stringValue == "PAT001")
            for arguments in [
                ["qr", "StudyDate=20240116"], ["StudyDate=20240116", "qr"],
                ["--serverIP", "127.0.0.1", "--serverPort", String(qrPort), "--aec", "QRSCP", "StudyDate=20240116"],
            ] {
                let positional = try await PeerHarness.run("px-find", arguments + b, environment: env)
                #expect(positional.exitCode == 0, "\(arguments): \(positional.stdout) \(positional.stderr)")
                #expect(positional.json?["data"] == flagged.json?["data"], "\(arguments) \(backend)")
            }
            // Two keys at series level.
            let both = try await PeerHarness.run(
                "px-find", ["qr", "StudyDate=20240115", "Modality=MR", "--level", "series"] + b, environment: env)
            let flaggedBoth = try await PeerHarness.run(
                "px-find", ["qr", "-k", "StudyDate=20240115", "-k", "Modality=MR", "--level", "series"] + b,
                environment: env)
            #expect(both.exitCode == 0, "\(both.stdout) \(both.stderr)")
            #expect(both.json?["data"]?.arrayValue?.isEmpty == false)
            #expect(both.json?["data"] == flaggedBoth.json?["data"])
        }

        // pypx's --JSONargs gives what its flags give.
        let pypxFlags = [
            "--serverIP", "127.0.0.1", "--serverPort", String(qrPort), "--aec", "QRSCP", "--PatientID", "PAT002",
        ]
        let flags = try await PeerHarness.run("px-find", pypxFlags)
        let jsonArgs = try await PeerHarness.run(
            "px-find",
            [
                "--JSONargs",
                #"{"serverIP": "127.0.0.1", "serverPort": \#(qrPort), "aec": "QRSCP", "PatientID": "PAT002"}"#,
            ])
        #expect(flags.exitCode == 0, "\(flags.stdout) \(flags.stderr)")
        #expect(jsonArgs.exitCode == 0, "\(jsonArgs.stdout) \(jsonArgs.stderr)")
        #expect(flags.json?["data"]?.arrayValue?.count == 1)
        #expect(jsonArgs.json?["data"] == flags.json?["data"])

        // A word that is neither the peer nor Keyword=value, and a keyword the dictionary lacks: usage errors.
        for (arguments, message) in [
            (["qr", "pacs"], "unexpected argument 'pacs' after 'qr'"),
            (["qr", "NoSuchKeyword=1"], "unknown query key 'NoSuchKeyword': use a DICOM keyword or (gggg,eeee)"),
            (["StudyDate=20240116"], "give the peer"),
        ] {
            let run = try await PeerHarness.run("px-find", arguments, environment: env)
            #expect(run.exitCode == 64, "\(arguments): \(run.stdout) \(run.stderr)")
            #expect(run.json?["error"]?["code"]?.stringValue == "usage")
            #expect(run.json?["error"]?["message"]?.stringValue?.hasPrefix(message) == true, "\(run.stdout)")
        }

        // px-ls PLACE StudyDate=... lists what -k lists.
        let place = work + "/corpus"
        let listed = try await PeerHarness.run("px-ls", [place, "-k", "StudyDate=20240116"])
        #expect(listed.exitCode == 0, "\(listed.stdout) \(listed.stderr)")
        #expect(listed.json?["data"]?.arrayValue?.count == 1)
        for arguments in [[place, "StudyDate=20240116"], ["StudyDate=20240116", place]] {
            let positional = try await PeerHarness.run("px-ls", arguments + ["--no-refresh"])
            #expect(positional.exitCode == 0, "\(arguments): \(positional.stdout) \(positional.stderr)")
            #expect(positional.json?["data"] == listed.json?["data"])
        }
    }
}
