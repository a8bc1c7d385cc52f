import DICOMData
import Foundation
import PXTestSupport
import Testing

/// Issue 20, the receiving side: every transfer syntax arrives as it was sent, on every path where px is the
/// receiver of C-STORE. The files: ten of pydicom's test files (JPEG 4.50, 4.51, 4.70, JPEG-LS 4.80, 4.81,
/// JPEG 2000 4.90, 4.91, RLE, Explicit VR Big Endian, Deflated) and the seven image files of
/// scripts/make-corpus.sh (seven syntaxes), each its own study (scripts/ts-matrix.py). Each received data set
/// must equal the original (pydicom ==, and the same bytes after the file meta information) with the transfer
/// syntax unchanged. docs/transfer-syntaxes.rst holds the table of these cells.
@Suite(
    "Transfer syntax matrix (receiving)", .tags(.integration), .integrationTier, .serialized, TransferSyntaxMatrix(),
    .timeLimit(.minutes(10)))
struct TransferSyntaxMatrixTests {
    static func matrix() throws -> TransferSyntaxMatrix.Context {
        try #require(TransferSyntaxMatrix.current, "the suite's files and Orthanc are not ready")
    }

    /// Checks what `root` holds against `originals` (the files sent, or what the archive holds): every file
    /// there, transfer syntax unchanged, data set equal; `bytes`: byte for byte after the file meta information
    /// too (when the sender sends the data set as it holds it: not DCMTK, which re-encodes what it sends, nor
    /// storescp, which writes what it parsed).
    static func expectAllArrived(_ root: String, from originals: String, count: Int, bytes: Bool) async throws {
        let compare = try await PeerHarness.run(
            TestSupport.python, [TransferSyntaxMatrix.script, "compare", originals, root])
        try #require(compare.exitCode == 0, "ts-matrix.py compare failed: \(compare.stderr)")
        let results = try #require(compare.json?["results"]?.arrayValue)
        #expect(results.count == count)
        for result in results {
            let name = result["name"]?.stringValue ?? "?"
            let syntax = result["transferSyntaxUID"]?.stringValue ?? "?"
            #expect(result["received"]?.stringValue != nil, "\(name) (\(syntax)) did not arrive")
            #expect(result["receivedTransferSyntaxUID"]?.stringValue == syntax, "\(name): transfer syntax changed")
            #expect(result["equal"] == .bool(true), "\(name) (\(syntax)): data set not equal")
            if bytes { #expect(result["bytesEqual"] == .bool(true), "\(name) (\(syntax)): bytes differ") }
        }
    }

    /// px-listen receiving from pynetdicom (scripts/pynetdicom-scu.py: one context per SOP class and transfer
    /// syntax of the files, each data set sent as it is in its file).
    @Test(arguments: ["native", "dcmtk"]) func listenReceivesEverySyntax(backend: String) async throws {
        let matrix = try Self.matrix()
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-listen-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(backend: backend, root: work + "/got", work: work)
        let sent = try await PeerHarness.runAsync(
            TestSupport.python,
            [TestSupport.repositoryRoot + "/scripts/pynetdicom-scu.py", "store", "127.0.0.1", String(listener.port)]
                + matrix.files.map(\.path) + ["--aec", "PXLISTEN"])
        #expect(sent.exitCode == 0, "pynetdicom-scu.py: \(sent.stdout) \(sent.stderr)")
        let arrived = await listener.waitFor(seconds: 30) {
            $0.filter { $0["event"]?.stringValue == "instanceReceived" }.count >= matrix.files.count
        }
        await listener.stop(signal: SIGTERM)
        #expect(arrived, "\(listener.events()) \(listener.stderr())")
        #expect(listener.events("storeFailed").isEmpty, "\(listener.events("storeFailed"))")
        // storescp (dcmtk backend) writes the data set it parsed: equal, not necessarily the same bytes.
        try await Self.expectAllArrived(
            work + "/got", from: matrix.originals, count: matrix.files.count, bytes: backend == "native")
    }

    /// A data set that ends before its elements do (the sender's file was truncated): px-listen native answers
    /// 0xC000 (Error: Cannot understand, PS3.4 §B.2.3), not 0xA700, with a `storeFailed` event, and stores the
    /// next instance of the association. The DCMTK backend's storescp aborts the association on it; px-listen
    /// still reports the instance as `storeFailed`.
    @Test(arguments: ["native", "dcmtk"]) func truncatedDataSetIsNotUnderstood(backend: String) async throws {
        let matrix = try Self.matrix()
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-truncated-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let source = try #require(matrix.files.first { $0.transferSyntaxUID == WellKnownUID.explicitVRLittleEndian })
        let good = try #require(matrix.files.first { $0.transferSyntaxUID == WellKnownUID.implicitVRLittleEndian })
        let bytes = try #require(FileManager.default.contents(atPath: source.path))
        let truncated = work + "/truncated.dcm"
        #expect(FileManager.default.createFile(atPath: truncated, contents: bytes.dropLast(1000)))
        let listener = try await ListenerProcess.start(backend: backend, root: work + "/got", work: work)
        let sent = try await PeerHarness.runAsync(
            TestSupport.python,
            [
                TestSupport.repositoryRoot + "/scripts/pynetdicom-scu.py", "store", "127.0.0.1", String(listener.port),
                truncated, good.path, "--aec", "PXLISTEN",
            ])
        let statuses = (sent.json?["results"]?.arrayValue ?? []).map { $0["status"] }
        let failed = await listener.waitFor(seconds: 15) { events in
            events.contains {
                $0["event"]?.stringValue == "storeFailed" && $0["SOPInstanceUID"]?.stringValue == source.sopInstanceUID
            }
        }
        if backend == "native" {
            #expect(statuses == [.number("49152"), .number("0")], "\(sent.stdout)")
            #expect(
                await listener.waitFor(seconds: 10) { $0.contains { $0["event"]?.stringValue == "instanceReceived" } })
        }
        await listener.stop(signal: SIGTERM)
        #expect(failed, "\(listener.events()) \(listener.stderr())")
    }

    /// px-get (native) by C-GET from a pynetdicom Q/R SCP and from Orthanc, which send each instance on a
    /// context of its own syntax when the requestor proposed one.
    @Test(arguments: ["pynetdicom", "orthanc"]) func getReceivesEverySyntax(peer: String) async throws {
        let matrix = try Self.matrix()
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-get-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        var scp: PeerProcess?
        defer { scp?.kill() }
        let node: String
        if peer == "pynetdicom" {
            let (process, port) = try await PeerHarness.startPythonPeer(
                "pynetdicom-qr-scp.py", [matrix.originals], log: work + "/qr.log")
            scp = process
            node = "PYQR@127.0.0.1:\(port)"
        } else {
            node = "ORTHANC@127.0.0.1:\(matrix.orthancPort)"
        }
        let studies = matrix.files.flatMap { ["--StudyInstanceUID", $0.studyInstanceUID] }
        let get = try await PeerHarness.runAsync(
            "px-get", [node] + studies + ["-d", work + "/got", "--backend", "native"])
        #expect(get.exitCode == 0, "\(get.stdout) \(get.stderr) \(scp?.log ?? "")")
        let instances = (get.json?["data"]?["gets"]?.arrayValue ?? []).flatMap { $0["instances"]?.arrayValue ?? [] }
        // Each stored file's transfer syntax is reported.
        #expect(instances.count == matrix.files.count)
        for instance in instances {
            let uid = instance["SOPInstanceUID"]?.stringValue
            let file = matrix.files.first { $0.sopInstanceUID == uid }
            #expect(instance["transferSyntaxUID"]?.stringValue == file?.transferSyntaxUID, "\(instance)")
        }
        // Orthanc holds what it received (compared with its storage area); it re-encodes what it sends (DCMTK).
        if peer == "pynetdicom" {
            try await Self.expectAllArrived(
                work + "/got", from: matrix.originals, count: matrix.files.count, bytes: true)
        } else {
            try await Self.expectAllArrived(
                work + "/got", from: matrix.orthancStorage, count: matrix.files.count, bytes: false)
        }
    }

    /// px-sync from Orthanc into a folder, by C-GET and by C-MOVE to its own receiver; a second run finds
    /// everything there and transfers nothing.
    @Test(arguments: ["get", "move"]) func syncReceivesEverySyntax(retrieve: String) async throws {
        let matrix = try Self.matrix()
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-sync-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let arguments =
            [
                "ORTHANC@127.0.0.1:\(matrix.orthancPort)", work + "/got", "--PatientID", "TSMATRIX",
                "--backend", "native", "--retrieve", retrieve,
            ]
            + (retrieve == "move"
                ? [
                    "--receiver-port", String(matrix.receiverPort), "--receiver-aet",
                    TransferSyntaxMatrix.receiverAETitle,
                ]
                : [])
        let sync = try await PeerHarness.runAsync("px-sync", arguments)
        #expect(sync.exitCode == 0, "\(sync.stdout) \(sync.stderr)")
        #expect(sync.json?["data"]?["instancesTransferred"] == .number(String(matrix.files.count)), "\(sync.stdout)")
        try await Self.expectAllArrived(
            work + "/got", from: matrix.orthancStorage, count: matrix.files.count, bytes: false)
        let again = try await PeerHarness.runAsync("px-sync", arguments)
        #expect(again.exitCode == 0, "\(again.stdout) \(again.stderr)")
        #expect(again.json?["data"]?["instancesTransferred"] == .number("0"), "\(again.stdout)")
    }

    /// px-serve as the Q/R peer, serving a folder place that holds the suite's files: px-get (native) by C-GET,
    /// px-sync into a folder by C-GET and by C-MOVE to px-sync's own receiver (a `--move-destination` of
    /// px-serve), and px-sync from a folder of the files into an empty px-serve's place (C-STORE). px-serve
    /// sends each file as it holds it on a context of its own syntax, and stores what it receives as it came:
    /// each data set arrives byte for byte, transfer syntax unchanged.
    @Test(arguments: ["get", "sync-get", "sync-move", "sync-store"])
    func servePeerKeepsEverySyntax(cell: String) async throws {
        let matrix = try Self.matrix()
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-serve-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        // The served place: a copy of the files (px-serve indexes it before it listens), or empty to receive them.
        let place = work + "/place"
        if cell == "sync-store" {
            try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
        } else {
            try FileManager.default.copyItem(atPath: matrix.originals, toPath: place)
        }
        let receiver = try TestSupport.holdPort()  // until px-serve listens (on port 0)
        let receiverPort = receiver.port
        let (server, port) = try await ServeCommandTests.start(
            place, work: work,
            extra: ["--move-destination", "\(TransferSyntaxMatrix.receiverAETitle)=127.0.0.1:\(receiverPort)"])
        receiver.release()
        defer { server.kill() }
        let node = "PXSERVE@127.0.0.1:\(port)"
        let got = work + "/got"
        let run: PeerHarness.Run
        switch cell {
        case "get":
            run = try await PeerHarness.runAsync(
                "px-get",
                [node] + matrix.files.flatMap { ["--StudyInstanceUID", $0.studyInstanceUID] } + [
                    "-d", got, "--backend", "native",
                ])
        case "sync-store":
            let folder = work + "/folder"
            try FileManager.default.copyItem(atPath: matrix.originals, toPath: folder)
            run = try await PeerHarness.runAsync("px-sync", [folder, node, "--backend", "native"])
        default:
            let retrieve = cell == "sync-move" ? "move" : "get"
            run = try await PeerHarness.runAsync(
                "px-sync",
                [node, got, "--PatientID", "TSMATRIX", "--backend", "native", "--retrieve", retrieve]
                    + (retrieve == "move"
                        ? [
                            "--receiver-port", String(receiverPort), "--receiver-aet",
                            TransferSyntaxMatrix.receiverAETitle,
                        ] : []))
        }
        #expect(run.exitCode == 0, "\(run.stdout) \(run.stderr) \(server.log)")
        if cell.hasPrefix("sync") {
            #expect(
                run.json?["data"]?["instancesTransferred"] == .number(String(matrix.files.count)), "\(run.stdout)")
        }
        try await Self.expectAllArrived(
            cell == "sync-store" ? place : got, from: matrix.originals, count: matrix.files.count, bytes: true)
        await server.stop()
    }

    /// A study of six JPEG 2000 instances from dcmqrscp (started with `+xw`: it accepts JPEG 2000 in the
    /// storage contexts of a C-GET), synced by C-GET into a folder: each data set equal to the one dcmqrscp
    /// holds, still JPEG 2000 (dcmqrscp re-encodes what it sends, so the bytes may differ); a second run
    /// transfers nothing. dcmqrscp sends every instance of a SOP class on the first context it accepted for the class,
    /// which is px's combined context, where dcmqrscp's own preference picks JPEG 2000.
    @Test func jpeg2000StudyFromDcmqrscp() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-qr-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let study = try await TransferSyntaxMatrix.study(work + "/files", count: 6, of: ["JPEG2000.dcm"])
        let port = try await TransferSyntaxMatrix.startDcmqrscp(work + "/qr", arguments: "+xw", files: study.paths)
        defer { TransferSyntaxMatrix.stopDcmqrscp(work + "/qr") }
        let arguments = [
            "QRSCP@127.0.0.1:\(port)", work + "/got", "--PatientID", "TSSTUDY", "--backend", "native",
        ]
        let sync = try await PeerHarness.runAsync("px-sync", arguments)
        #expect(sync.exitCode == 0, "\(sync.stdout) \(sync.stderr)")
        #expect(sync.json?["data"]?["instancesTransferred"] == .number("6"), "\(sync.stdout)")
        try await Self.expectAllArrived(work + "/got", from: work + "/qr/db/QRSCP", count: 6, bytes: false)
        let again = try await PeerHarness.runAsync("px-sync", arguments)
        #expect(again.exitCode == 0, "\(again.stdout) \(again.stderr)")
        #expect(again.json?["data"]?["instancesTransferred"] == .number("0"), "\(again.stdout)")
    }

    /// A C-GET that ends with one failed sub-operation (a dcmqrscp with its default negotiation cannot send a
    /// JPEG Baseline file on the uncompressed context it accepted: "unable to convert") is a partial failure,
    /// exit 1, on both backends; the other instance is stored.
    @Test(arguments: ["native", "dcmtk"]) func getWithOneFailedSubOperationExits1(backend: String) async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-fail-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let study = try await TransferSyntaxMatrix.study(
            work + "/files", count: 1, of: ["CT_small.dcm", "SC_rgb_jpeg_dcmtk.dcm"])
        let port = try await TransferSyntaxMatrix.startDcmqrscp(work + "/qr", arguments: "", files: study.paths)
        defer { TransferSyntaxMatrix.stopDcmqrscp(work + "/qr") }
        let get = try await PeerHarness.runAsync(
            "px-get",
            [
                "QRSCP@127.0.0.1:\(port)", "--StudyInstanceUID", study.studyInstanceUID, "-d", work + "/got",
                "--backend", backend,
            ])
        #expect(get.exitCode == 1, "\(get.stdout) \(get.stderr)")
        #expect(get.json?["status"]?.stringValue == "error")
        #expect(get.json?["error"]?["code"]?.stringValue == "partialFailure", "\(get.stdout)")
        #expect(get.json?["data"]?["failed"] == .number("1"), "\(get.stdout)")
        #expect(get.json?["data"]?["completed"] == .number("1"), "\(get.stdout)")
        #expect(get.json?["data"]?["instances"] == .number("1"), "\(get.stdout)")
    }
}

/// The suite's files (scripts/make-corpus.sh, then scripts/ts-matrix.py prepare) and an Orthanc loaded with
/// them (pynetdicom-scu.py: each file sent as it is), which knows px-sync's receiver as a C-MOVE destination.
/// Removed and stopped when the suite ends, passed or not.
struct TransferSyntaxMatrix: SuiteTrait, TestScoping {
    static let receiverAETitle = "PXSYNCRCV"
    static var script: String { TestSupport.repositoryRoot + "/scripts/ts-matrix.py" }

    struct File: Sendable {
        var path: String
        var transferSyntaxUID: String
        var studyInstanceUID: String
        var sopInstanceUID: String
    }

    struct Context: Sendable {
        var work: String
        var originals: String
        var files: [File]
        var orthancPort: Int
        /// Orthanc's storage area: the files as Orthanc holds them.
        var orthancStorage: String
        var receiverPort: Int
    }

    @TaskLocal static var current: Context?

    struct SetupFailed: Error, CustomStringConvertible { let description: String }

    /// PATH with the sbin directories, where Debian puts Orthanc.
    static var path: String {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin") + ":/usr/sbin:/sbin:/usr/local/sbin"
    }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase == nil else { return try await function() }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-tsm-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let scripts = TestSupport.repositoryRoot + "/scripts/"
        let corpus = try await PeerHarness.runAsync("/bin/bash", [scripts + "make-corpus.sh", work + "/corpus"])
        guard corpus.exitCode == 0 else { throw SetupFailed(description: "make-corpus.sh failed: \(corpus.stderr)") }
        let prepared = try await PeerHarness.runAsync(
            TestSupport.python, [Self.script, "prepare", work + "/originals", work + "/corpus"])
        guard prepared.exitCode == 0, let entries = prepared.json?["files"]?.arrayValue else {
            throw SetupFailed(description: "ts-matrix.py prepare failed: \(prepared.stderr)")
        }
        let files = entries.map {
            File(
                path: $0["path"]?.stringValue ?? "", transferSyntaxUID: $0["transferSyntaxUID"]?.stringValue ?? "",
                studyInstanceUID: $0["StudyInstanceUID"]?.stringValue ?? "",
                sopInstanceUID: $0["SOPInstanceUID"]?.stringValue ?? "")
        }
        let receiver = try TestSupport.holdPort()  // until Orthanc has picked its own two ports
        let receiverPort = receiver.port
        let orthanc = work + "/orthanc"
        let start = try await PeerHarness.runAsync(
            scripts + "orthanc-start.sh", [orthanc],
            environment: [
                "PATH": Self.path, "PX_ORTHANC_MODALITIES": "pxsync=\(Self.receiverAETitle)@127.0.0.1:\(receiverPort)",
            ])
        receiver.release()
        guard start.exitCode == 0 else { throw SetupFailed(description: "orthanc-start.sh failed: \(start.stderr)") }
        do {
            let ports = (start.stdout.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
            guard ports.count == 2 else { throw SetupFailed(description: "orthanc-start.sh printed no ports") }
            let load = try await PeerHarness.runAsync(
                TestSupport.python,
                [scripts + "pynetdicom-scu.py", "store", "127.0.0.1", String(ports[0])] + files.map(\.path) + [
                    "--aec", "ORTHANC",
                ])
            guard load.exitCode == 0 else {
                throw SetupFailed(
                    description: "pynetdicom-scu.py could not load Orthanc: \(load.stdout) \(load.stderr)")
            }
            let context = Context(
                work: work, originals: work + "/originals", files: files, orthancPort: ports[0],
                orthancStorage: orthanc + "/db", receiverPort: receiverPort)
            try await Self.$current.withValue(context) { try await function() }
        } catch {
            await Self.stop(orthanc + "/orthanc.pid")
            throw error
        }
        await Self.stop(orthanc + "/orthanc.pid")
    }

    static func stop(_ pidFile: String) async {
        do {
            let stop = try await PeerHarness.runAsync(
                TestSupport.repositoryRoot + "/scripts/peer-stop.sh", [pidFile])
            if stop.exitCode != 0 { Issue.record("peer-stop.sh could not stop \(pidFile): \(stop.stderr)") }
        } catch {
            Issue.record("cannot run peer-stop.sh: \(error)")
        }
    }

    /// `count` instances of each pydicom test file in one study (scripts/ts-matrix.py study).
    static func study(_ folder: String, count: Int, of names: [String]) async throws -> (
        studyInstanceUID: String, paths: [String]
    ) {
        let made = try await PeerHarness.run(TestSupport.python, [script, "study", folder, String(count)] + names)
        try #require(made.exitCode == 0, "ts-matrix.py study failed: \(made.stderr)")
        let study = try #require(made.json?["StudyInstanceUID"]?.stringValue)
        return (study, (made.json?["files"]?.arrayValue ?? []).compactMap { $0["path"]?.stringValue })
    }

    /// Starts dcmqrscp (scripts/dcmqrscp-start.sh, more options in `arguments`) holding `files`, indexed in its
    /// storage area with dcmqridx (a C-STORE to it would be refused for compressed files); returns its port.
    static func startDcmqrscp(_ work: String, arguments: String, files: [String]) async throws -> Int {
        let start = try await PeerHarness.runAsync(
            TestSupport.repositoryRoot + "/scripts/dcmqrscp-start.sh", [work], environment: ["PX_QR_ARGS": arguments])
        try #require(start.exitCode == 0, "dcmqrscp-start.sh failed: \(start.stderr)")
        let port = try #require(Int(start.stdout.split(separator: "\n").last ?? ""))
        let store = work + "/db/QRSCP"
        var stored: [String] = []
        for file in files {
            let target = store + "/" + (file as NSString).lastPathComponent
            try FileManager.default.copyItem(atPath: file, toPath: target)
            stored.append(target)
        }
        let index = try await PeerHarness.runAsync("/usr/bin/env", ["dcmqridx", store] + stored)
        try #require(index.exitCode == 0, "dcmqridx failed: \(index.stderr)")
        return port
    }

    static func stopDcmqrscp(_ work: String) {
        TestSupport.killPeer(pidFile: work + "/dcmqrscp.pid")
    }
}
