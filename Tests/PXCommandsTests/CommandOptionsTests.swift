import ArgumentParser
import DICOMData
import Foundation
import Logging
import PX
import PXCommandLine
import PXCommands
import PXCore
import PXStorage
import PXTestSupport
import Synchronization
import Testing

/// The enumerated options: parsed by ArgumentParser, case-insensitive where DICOM spells the value in
/// capitals (QueryRetrieveLevel `IMAGE`, PS3.4 §C.6).
@Suite(.timeLimit(.minutes(1))) struct ArgumentValueTests {
    @Test(arguments: [
        ("image", QueryLevel.image), ("IMAGE", .image), ("Series", .series), ("STUDY", .study), ("patient", .patient),
    ])
    func level(text: String, level: QueryLevel) {
        #expect(QueryLevel(argument: text) == level)
    }

    @Test func unknownValuesAreRejected() {
        #expect(QueryLevel(argument: "instance") == nil)
        #expect(QueryModel(argument: "series") == nil)
        #expect(PXOutput.FindFormat(argument: "xlsx") == nil)
        #expect(DuplicatePolicy(argument: "replace") == nil)
    }

    @Test func modelFormatAndDuplicatePolicy() {
        #expect(QueryModel(argument: "PATIENT") == .patientRoot)
        #expect(QueryModel(argument: "study") == .studyRoot)
        #expect(PXOutput.FindFormat(argument: "dicom-json") == .dicomJSON)
        #expect(DuplicatePolicy(argument: "rename") == .rename)
        // What --help lists.
        #expect(QueryLevel.allValueStrings == ["patient", "study", "series", "image"])
        #expect(PXOutput.FindFormat(argument: "csv") == .csv)
        #expect(PXOutput.FindFormat(argument: "pypx-clean") == .pypxClean)
        #expect(
            PXOutput.FindFormat.allValueStrings == [
                "pypx", "pypx-clean", "dicom-json", "ndjson", "csv", "table", "tree",
            ])
    }
}

/// The option groups the commands share, parsed as ArgumentParser parses them inside a command.
@Suite(.timeLimit(.minutes(1))) struct OptionGroupTests {
    @Test func queryLevelInCapitals() throws {
        let query = try QueryOptions.parse(["--level", "IMAGE", "--model", "Patient", "--PatientID", "P1"])
        #expect(query.level == .image)
        #expect(query.model == .patientRoot)
        #expect(query.singleLevel == .image)
        #expect(try query.matchingKeys().map(\.keyword) == ["PatientID"])
    }

    @Test func queryLevelDefaults() throws {
        #expect(try QueryOptions.parse([]).singleLevel == nil)
        #expect(try QueryOptions.parse(["--StudyOnly"]).singleLevel == .study)
    }

    @Test func queryUsageErrors() {
        #expect(throws: (any Error).self) { try QueryOptions.parse(["--level", "instance"]) }
        #expect(throws: (any Error).self) { try QueryOptions.parse(["--level", "patient"]) }
        #expect(throws: (any Error).self) { try QueryOptions.parse(["--limit", "0"]) }
        #expect(throws: (any Error).self) { try QueryOptions.parse(["-k", "NoSuchKeyword=1"]) }
    }

    @Test func outputGroups() throws {
        #expect(try OutputOptions.parse(["--pretty"]).pretty)
        #expect(try !OutputOptions.parse([]).pretty)
        let find = try FindOutputOptions.parse(["--format", "ndjson", "--pretty"])
        #expect(find.format == .ndjson)
        #expect(find.output.pretty)
        #expect(try FindOutputOptions.parse([]).format == .pypx)
        #expect(try FindOutputOptions.parse(["--format", "csv"]).format == .csv)
        #expect(throws: (any Error).self) { try FindOutputOptions.parse(["--format", "xlsx"]) }
    }

    @Test func retrieveTargetsFromTheCommandLine() throws {
        let retrieve = try RetrieveOptions.parse([
            "--model", "PATIENT", "--PatientID", "P1", "--StudyInstanceUID", "1.2", "--seriesUID", "1.2.3",
            "--SOPInstanceUID", "1.2.3.4", "--SOPInstanceUID", "1.2.3.5",
        ])
        #expect(retrieve.model == .patientRoot)
        // With a StudyInstanceUID, stdin is not read.
        #expect(
            try retrieve.targets(verb: "move") == [
                RetrieveSelection(
                    patientID: "P1", studyInstanceUID: "1.2", seriesInstanceUID: "1.2.3",
                    sopInstanceUIDs: ["1.2.3.4", "1.2.3.5"])
            ])
    }

    /// A series or instances without their study (pypx 0.8's --seriesUID) are targets whose study px finds
    /// with one C-FIND (issue 23); with several studies a series is ambiguous.
    @Test func retrieveWithoutAStudy() throws {
        let series = try RetrieveOptions.parse(["--SeriesInstanceUID", "1.2.3"])
        #expect(
            try series.targets(verb: "move") == [RetrieveSelection(studyInstanceUID: "", seriesInstanceUID: "1.2.3")])
        #expect(try series.targets(verb: "move").first?.needsStudy == true)
        let instance = try RetrieveOptions.parse(["--SOPInstanceUID", "1.2.3.4"])
        #expect(try instance.targets(verb: "get").first?.needsStudy == true)
        #expect(throws: (any Error).self) {
            try RetrieveOptions.parse([
                "--StudyInstanceUID", "1", "--StudyInstanceUID", "2", "--SeriesInstanceUID", "3",
            ])
        }
        #expect(throws: (any Error).self) { try RetrieveOptions.parse(["--model", "series"]) }
    }

    @Test func listenConfiguration() throws {
        let listen = try ListenOptions.parse([
            "--port", "0", "--on-duplicate", "rename", "-d", "received", "--allow-calling", "A,B",
            "--on-series-complete", "/bin/echo", "--port", "1",
        ])
        // --on-series-complete takes the rest of the line, options included.
        #expect(listen.onSeriesComplete == ["/bin/echo", "--port", "1"])
        let configuration = try listen.configuration()
        #expect(configuration.port == 0)
        #expect(configuration.duplicates == .rename)
        #expect(configuration.root.hasPrefix("/") && configuration.root.hasSuffix("/received"))
        #expect(configuration.allowedCallingAETitles == ["A", "B"])
        #expect(throws: (any Error).self) { try ListenOptions.parse(["--on-duplicate", "replace"]) }
        #expect(throws: (any Error).self) { try ListenOptions.parse(["--port", "70000"]) }
    }

    @Test func absolutePaths() {
        #expect(absolutePath("/a/b") == "/a/b")
        let relative = absolutePath("x")
        #expect(relative.hasPrefix("/") && relative.hasSuffix("/x"))
    }
}

/// The run-and-report path: the envelope, its data after an early stop, and the exit status.
@Suite(.timeLimit(.minutes(1))) struct CommandRunnerTests {
    /// Collects what a command prints.
    final class Collected: Sendable {
        private let bytes = Mutex<[UInt8]>([])
        var sink: @Sendable ([UInt8]) -> Void { { new in self.bytes.withLock { $0 += new } } }
        var json: JSONValue? {
            let text = bytes.withLock { String(decoding: $0, as: UTF8.self) }
            return try? JSONParser.parse(text)
        }
        var isEmpty: Bool { bytes.withLock { $0.isEmpty } }
    }

    static func native() throws -> BackendOptions { try BackendOptions.parse(["--backend", "native"]) }

    /// A DIMSE node to bind the backend to (never contacted: the bodies do not use their peer).
    static func node() throws -> ConnectionOptions { try ConnectionOptions.parse(["127.0.0.1:1"]) }

    /// The exit status `body` ends with: 0, or the `ExitCode` thrown.
    static func status(_ body: () async throws -> Void) async -> Int32 {
        do {
            try await body()
            return 0
        } catch let exit as ExitCode {
            return exit.rawValue
        } catch {
            return -1
        }
    }

    @Test func successPrintsTheData() async throws {
        let collected = Collected()
        let output = CommandOutput(pretty: false, command: ["px-test"], sink: collected.sink)
        let status = await Self.status {
            try await CommandRunner.run(
                output: output, backend: try Self.native(), need: .verify, peer: try Self.node()
            ) {
                _, data in
                data = .object([JSONMember("n", .integer(1))])
                return nil
            }
        }
        #expect(status == 0)
        let json = try #require(collected.json)
        #expect(json["status"]?.stringValue == "success")
        #expect(json["backend"]?.stringValue == "native")
        #expect(json["data"]?["n"] == .integer(1))
        #expect(json["command"]?.arrayValue?.first?.stringValue == "px-test")
    }

    @Test func aThrownErrorKeepsWhatWasDone() async throws {
        let collected = Collected()
        let output = CommandOutput(pretty: false, command: ["px-test"], sink: collected.sink)
        let status = await Self.status {
            try await CommandRunner.run(
                output: output, backend: try Self.native(), need: .move, peer: try Self.node(), state: [Int](),
                data: { .object([JSONMember("done", .integer($0.count))]) }
            ) { _, done in
                done.append(1)
                done.append(2)
                throw PXError.timeout("C-MOVE")
            }
        }
        #expect(status == PXExit.timeout)
        let json = try #require(collected.json)
        #expect(json["status"]?.stringValue == "error")
        #expect(json["error"]?["code"]?.stringValue == "timeout")
        #expect(json["data"]?["done"] == .integer(2))
    }

    @Test func aNotedFailureSetsTheStatus() async throws {
        let collected = Collected()
        let output = CommandOutput(pretty: false, command: ["px-test"], sink: collected.sink)
        let status = await Self.status {
            try await CommandRunner.run(
                output: output, backend: try Self.native(), need: .query, peer: try Self.node()
            ) {
                _, data in
                data = .array([])
                return .dimseFailure(DIMSEStatus(code: 0xA700), operation: "C-FIND")
            }
        }
        #expect(status == PXExit.dicomFailure)
        #expect(collected.json?["data"]?.arrayValue?.isEmpty == true)
        #expect(collected.json?["error"]?["code"]?.stringValue == "dimseFailure")
    }

    @Test func noEnvelopeAfterATableUnlessItFailed() async throws {
        let quiet = Collected()
        let status = await Self.status {
            try await CommandRunner.run(
                output: CommandOutput(pretty: false, command: ["px-test"], sink: quiet.sink),
                backend: try Self.native(),
                need: .query, peer: try Self.node(), envelopeOnSuccess: false
            ) { _, _ in nil }
        }
        #expect(status == 0)
        #expect(quiet.isEmpty)
        let failed = Collected()
        let failedStatus = await Self.status {
            try await CommandRunner.run(
                output: CommandOutput(pretty: false, command: ["px-test"], sink: failed.sink),
                backend: try Self.native(),
                need: .query, peer: try Self.node(), envelopeOnSuccess: false
            ) { _, _ in throw PXError.usage("bad") }
        }
        #expect(failedStatus == PXExit.usage)
        #expect(failed.json?["error"]?["code"]?.stringValue == "usage")
    }

    /// A backend that cannot be made is reported under the backend asked (a missing DCMTK tool, run without
    /// DCMTK on PATH, is IntegrationTests' `backendSelection`).
    @Test func aBackendThatCannotBeMadeIsReportedUnderTheBackendAsked() async throws {
        let collected = Collected()
        let dcmtk = try BackendOptions.parse(["--backend", "dcmtk"])
        let status = await Self.status {
            try await CommandRunner.run(
                output: CommandOutput(pretty: false, command: ["px-test"], sink: collected.sink), backend: dcmtk,
                need: .verify, peer: try ConnectionOptions.parse(["http://127.0.0.1:1/dicom-web"])
            ) { _, _ in
                Issue.record("the body runs without a backend")
                return nil
            }
        }
        #expect(status == PXExit.usage)
        #expect(collected.json?["backend"]?.stringValue == "dcmtk")
        #expect(collected.json?["error"]?["message"]?.stringValue?.contains("cannot reach a DICOMweb peer") == true)
    }

    /// What a peer cannot do is refused by its type before the command runs: a DICOMweb backend is not a
    /// ``Moving`` one (no C-MOVE in PS3.18), so px-move's need has no way to take it from one; it can verify.
    @Test func aDICOMwebPeerIsRefusedWhatItCannotDo() async throws {
        let peer = try ConnectionOptions.parse(["http://127.0.0.1:1/dicom-web"])
        let refused = Collected()
        let status = await Self.status {
            try await CommandRunner.run(
                output: CommandOutput(pretty: false, command: ["px-test"], sink: refused.sink),
                backend: BackendOptions.parse([]), need: .move, peer: peer, state: [Int](), data: { _ in nil }
            ) { _, _ in
                Issue.record("C-MOVE runs on a DICOMweb peer")
                return nil
            }
        }
        #expect(status == PXExit.usage)
        #expect(refused.json?["backend"]?.stringValue == "dicomweb")
        #expect(refused.json?["error"]?["code"]?.stringValue == "usage")
        #expect(
            refused.json?["error"]?["message"]?.stringValue
                == "C-MOVE is not supported for a DICOMweb peer: use px-get, which retrieves with WADO-RS")
        let backend = try peer.backend(BackendOptions.parse([]), for: .echo)
        #expect(backend.name == "dicomweb")
        #expect(throws: Never.self) { try PeerNeed<any Verifying>.verify.capability(of: backend) }
        #expect(throws: Never.self) { try PeerNeed<any Querying & Retrieving>.retrieve.capability(of: backend) }
        #expect(throws: PXError.self) { try PeerNeed<DIMSEPeer>.move.capability(of: backend) }
        #expect(throws: PXError.self) { try PeerNeed<any Receiving>.receive.capability(of: backend) }
    }
}

/// px-listen's series hook on swift-subprocess: the environment, no shell, and a hook that hangs
/// blocks nothing.
@Suite(.timeLimit(.minutes(2))) struct SeriesHookRunnerTests {
    static let series = SeriesCompletion(
        directory: "/data/P1/S1/SE1", seriesInstanceUID: "1.2.3", studyInstanceUID: "1.2", patientID: "P1; rm -rf /",
        instances: 7, reason: "timeout")

    @Test func theHookGetsTheSeriesInItsEnvironment() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let out = dir + "/env.txt"
            // `env` by name (found in PATH), its stdout sent to a file by a shell that we name ourselves:
            // px never interprets the command.
            let hooks = SeriesHookRunner(
                command: ["sh", "-c", "env > \"$0.tmp\" && mv \"$0.tmp\" \"$0\"", out], logger: Logger(label: "test"))
            hooks.run(for: Self.series)
            await hooks.waitForAll(upTo: 60)
            #expect(hooks.runningCount == 0)
            let text = try String(contentsOfFile: out, encoding: .utf8)
            let lines = Set(text.split(separator: "\n").map(String.init))
            for line in [
                "PX_SERIES_DIR=/data/P1/S1/SE1", "PX_SERIES_UID=1.2.3", "PX_STUDY_UID=1.2",
                "PX_PATIENT_ID=P1; rm -rf /",
                "PX_INSTANCES=7", "PX_COMPLETION_REASON=timeout",
            ] {
                #expect(lines.contains(line), "\(line) missing")
            }
            // px-listen's own environment is passed on.
            #expect(lines.contains { $0.hasPrefix("PATH=") })
        }
    }

    @Test func aHangingHookBlocksNothing() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            // Each hook waits until the test creates `release`.
            let release = dir + "/release"
            let hooks = SeriesHookRunner(
                command: ["/bin/sh", "-c", "while [ ! -e \"$0\" ]; do sleep 0.05; done", release],
                logger: Logger(label: "test"))
            hooks.run(for: Self.series)
            hooks.run(for: Self.series)
            // Both still run: starting them waited for neither, and waiting gives up at its deadline.
            await hooks.waitForAll(upTo: 0.2)
            #expect(hooks.runningCount == 2)
            #expect(FileManager.default.createFile(atPath: release, contents: nil))
            await hooks.waitForAll(upTo: 60)
            #expect(hooks.runningCount == 0)
        }
    }

    @Test func aMissingCommandIsLoggedNotFatal() async throws {
        let hooks = SeriesHookRunner(command: ["/nonexistent/hook"], logger: Logger(label: "test"))
        hooks.run(for: Self.series)
        await hooks.waitForAll(upTo: 60)
        #expect(hooks.runningCount == 0)
    }
}
