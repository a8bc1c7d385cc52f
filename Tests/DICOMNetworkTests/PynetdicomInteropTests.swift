import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// Interop with pynetdicom (pydicom's DICOM networking) on 127.0.0.1, both directions:
///
/// - our ``DICOMClient`` (C-ECHO, C-STORE) against scripts/pynetdicom-scp.py, which writes what it receives
///   without decoding it;
/// - scripts/pynetdicom-scu.py (C-ECHO, C-STORE as the file holds it, or decoded and re-encoded by pydicom) against
///   our ``DICOMServer``.
///
/// The pynetdicom SCP and the corpora are set up once for the suite by ``PynetdicomPeer``.
@Suite(
    "Interop with pynetdicom", .tags(.integration), .integrationTier, .serialized, PynetdicomPeer(),
    .timeLimit(.minutes(10)))
struct PynetdicomInteropTests {
    static func client(_ callingAETitle: String) -> DICOMClient {
        DICOMClient(
            configuration: .init(
                callingAETitle: callingAETitle, connectTimeout: .seconds(5), acseTimeout: .seconds(10),
                dimseTimeout: .seconds(30)),
            logger: TestSupport.logger("px.test.client")
        )
    }

    static func context() throws -> PynetdicomPeer.Context {
        try #require(PynetdicomPeer.current, "the suite's pynetdicom SCP is not running")
    }

    /// scripts/pynetdicom-scu.py with `arguments`; its exit status and the JSON object it prints.
    static func scu(_ arguments: [String]) async throws -> (status: Int32, json: JSONValue) {
        let result = try await TestSupport.run(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/pynetdicom-scu.py"] + arguments,
            separateErrorOutput: true)
        let line = result.output.split(separator: "\n").last.map(String.init) ?? ""
        do {
            return (result.status, try JSONParser.parse(line))
        } catch {
            throw TestSupport.ScriptFailed(
                script: "pynetdicom-scu.py", status: result.status,
                output: "no JSON on stdout: \(result.output) \(result.errorOutput)")
        }
    }

    static func number(_ value: JSONValue?) -> Int? {
        if case .number(let text)? = value { return Int(text) }
        return nil
    }

    // MARK: our SCU -> pynetdicom SCP

    @Test("our C-ECHO to the pynetdicom SCP succeeds and arrives with our calling AE title")
    func echoToPynetdicom() async throws {
        let context = try Self.context()
        #expect(try await Self.client("PXECHO").echo(context.scp) == .success)
        let event = try await context.process.waitForEvent(timeout: 5) {
            $0["event"]?.stringValue == "echo" && $0["callingAETitle"]?.stringValue == "PXECHO"
        }
        #expect(event["callingAETitle"]?.stringValue == "PXECHO")
    }

    @Test("the pynetdicom SCP rejects a wrong called AE title; the rejection is decoded")
    func rejectedByPynetdicom() async throws {
        let context = try Self.context()
        var wrong = context.scp
        wrong.aeTitle = "NOT-PYSCP"
        await #expect {
            _ = try await Self.client("PXECHO").echo(wrong)
        } throws: { error in
            guard let error = error as? DICOMNetworkError, error.code == .associationRejected else { return false }
            return error.rejection?.reason == .calledAETitleNotRecognized
        }
    }

    @Test("our C-STORE of the corpus (seven transfer syntaxes) to pynetdicom: byte-identical data sets")
    func storeToPynetdicom() async throws {
        let context = try Self.context()
        let files = context.corpus
        let results = try await Self.client("PXSTORE").store(files: files, to: context.scp)
        #expect(results.count == files.count)
        for result in results {
            #expect(result.status == .success, "\(result.path): \(result.error ?? "")")
        }
        // The SCP files each instance by calling AE title, SOP Instance UID and the context's transfer syntax.
        var syntaxes: Set<String> = []
        for file in files {
            let header = try StorableFile(readingHeaderOf: file)
            syntaxes.insert(header.transferSyntaxUID)
            // Every file goes in its own transfer syntax, a deflated one as its deflate stream (issue 20).
            let sent = header.transferSyntaxUID
            let copy = context.outputDirectory + "/PXSTORE/\(header.sopInstanceUID)_\(sent).dcm"
            guard FileManager.default.fileExists(atPath: copy) else {
                Issue.record("\(file) did not arrive in \(sent) (no \(copy))")
                continue
            }
            #expect(try Part10File(contentsOf: copy).transferSyntax.uid == sent)
            var expected = try TestSupport.dataSetBytes(file)
            // An odd-length deflate stream goes with one trailing NUL byte (PS3.5 §A.5; DCMTK refuses odd fragments).
            if TransferSyntax(uid: sent).isDeflated && expected.count % 2 == 1 { expected.append(0) }
            #expect(try TestSupport.dataSetBytes(copy) == expected, "\(file)")
            let differences = try DataSetComparison.differences(expectedFile: file, actualFile: copy)
            #expect(differences.isEmpty, "\(file): \(differences.joined(separator: "; "))")
        }
        #expect(syntaxes.count >= 7, "the corpus should cover every transfer syntax it is made with")
        let stored = context.process.events.filter {
            $0["event"]?.stringValue == "stored" && $0["callingAETitle"]?.stringValue == "PXSTORE"
        }
        #expect(stored.count == files.count)
    }

    // MARK: pynetdicom SCU -> our SCP

    @Test("pynetdicom's C-ECHO to our server succeeds; a wrong called AE title is rejected")
    func echoFromPynetdicom() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(aeTitle: "PXSCP", directory: dir) { server in
                let echo = try await Self.scu(["echo", "127.0.0.1", "\(server.localPort)", "--aec", "PXSCP"])
                #expect(echo.status == 0, "\(echo.json.serialized())")
                #expect(echo.json["association"]?.stringValue == "accepted")
                #expect(Self.number(echo.json["echo"]?["status"]) == 0)
                #expect(
                    echo.json["acceptedContexts"]?.arrayValue?.first?["abstractSyntax"]?.stringValue
                        == WellKnownUID.verificationSOPClass)

                let wrong = try await Self.scu(["echo", "127.0.0.1", "\(server.localPort)", "--aec", "WRONG"])
                #expect(wrong.status == 1)
                #expect(wrong.json["association"]?.stringValue == "rejected")
            }
        }
    }

    @Test("pynetdicom's C-STORE of the corpus as the files hold it: byte-identical where a context was accepted")
    func storeFromPynetdicom() async throws {
        let context = try Self.context()
        try await TestSupport.withTemporaryDirectory { dir in
            let storage = RecordingStorage(directory: dir + "/received")
            let store = try await TestSupport.withServer(aeTitle: "PXSCP", storage: storage, directory: dir) { server in
                try await Self.scu(
                    ["store", "127.0.0.1", "\(server.localPort)", "--aet", "PYSTORE", "--aec", "PXSCP"] + context.corpus
                )
            }
            #expect(store.json["association"]?.stringValue == "accepted")
            let results = store.json["results"]?.arrayValue ?? []
            #expect(results.count == context.corpus.count)
            let accepted = Set(TransferSyntaxLists.storage)
            var sent = 0
            for result in results {
                let path = result["path"]?.stringValue ?? "?"
                let syntax = result["fileTransferSyntaxUID"]?.stringValue ?? "?"
                let uid = result["sopInstanceUID"]?.stringValue ?? "?"
                guard accepted.contains(syntax) else {
                    // Explicit VR Big Endian (retired) is not among our server's syntaxes, and pynetdicom does not
                    // convert an undecoded data set: the file must be refused before anything is sent.
                    #expect(result["status"] == .null, "\(path) in \(syntax) should have found no context")
                    #expect(result["error"]?.stringValue?.isEmpty == false)
                    continue
                }
                #expect(Self.number(result["status"]) == 0, "\(path): \(result.serialized())")
                let copy = dir + "/received/\(syntax)/\(uid).dcm"
                guard FileManager.default.fileExists(atPath: copy) else {
                    Issue.record("\(path) was not received in \(syntax)")
                    continue
                }
                sent += 1
                #expect(try TestSupport.dataSetBytes(copy) == TestSupport.dataSetBytes(path), "\(path)")
                let differences = try DataSetComparison.differences(expectedFile: path, actualFile: copy)
                #expect(differences.isEmpty, "\(path): \(differences.joined(separator: "; "))")
            }
            #expect(sent > 40)
            #expect(storage.instances.count == sent)
            #expect(storage.instances.allSatisfy { $0.callingAETitle == "PYSTORE" && $0.calledAETitle == "PXSCP" })
        }
    }

    @Test("pynetdicom's C-STORE of pydicom-encoded data sets (Implicit VR Little Endian): equal to the originals")
    func storeDecodedFromPynetdicom() async throws {
        let context = try Self.context()
        let implicit = WellKnownUID.implicitVRLittleEndian
        try await TestSupport.withTemporaryDirectory { dir in
            let storage = RecordingStorage(directory: dir + "/received")
            let store = try await TestSupport.withServer(aeTitle: "PXSCP", storage: storage, directory: dir) { server in
                try await Self.scu(
                    [
                        "store", "127.0.0.1", "\(server.localPort)", "--aec", "PXSCP", "--decode", "--transfer-syntax",
                        implicit,
                    ]
                        + context.qrCorpus)
            }
            #expect(store.status == 0, "\(store.json.serialized())")
            let results = store.json["results"]?.arrayValue ?? []
            #expect(results.count == context.qrCorpus.count)
            #expect(results.allSatisfy { Self.number($0["status"]) == 0 })
            #expect(storage.instances.count == context.qrCorpus.count)
            for original in context.qrCorpus {
                let uid = try StorableFile(readingHeaderOf: original).sopInstanceUID
                let copy = dir + "/received/\(implicit)/\(uid).dcm"
                guard FileManager.default.fileExists(atPath: copy) else {
                    Issue.record("\(original) was not received in Implicit VR Little Endian")
                    continue
                }
                let differences = try DataSetComparison.differences(expectedFile: original, actualFile: copy)
                #expect(differences.isEmpty, "\(original): \(differences.joined(separator: "; "))")
            }
        }
    }
}

/// The pynetdicom SCP for a whole suite, and the two corpora (scripts/make-corpus.sh: DCMTK-made files in seven
/// transfer syntaxes; scripts/make-qr-corpus.py: pydicom-made files). Stopped and removed when the suite ends,
/// whether it passed or not; missing DCMTK tools or Python modules fail the suite with an install hint.
struct PynetdicomPeer: SuiteTrait, TestScoping {
    static let scpAETitle = "PYSCP"

    struct Context: Sendable {
        var scp: DICOMPeer
        var process: PeerProcess
        /// Where the SCP writes: `<calling AE>/<SOP Instance UID>_<transfer syntax UID>.dcm`.
        var outputDirectory: String
        /// scripts/make-corpus.sh's files.
        var corpus: [String]
        /// scripts/make-qr-corpus.py's files.
        var qrCorpus: [String]
    }

    @TaskLocal static var current: Context?

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSupport.requirePeers(
            ["dump2dcm", "dcmodify", "dcmcjpeg", "dcmcrle", "dcmftest", "dcmdump", "python3"],
            pythonModules: ["pydicom", "pynetdicom"])
        try await TestSupport.withTemporaryDirectory { work in
            let corpus = try await TestSupport.makeCorpus(in: work + "/corpus")
            guard corpus.count > 40 else {
                throw TestSupport.ScriptFailed(
                    script: "make-corpus.sh", status: 0, output: "only \(corpus.count) files")
            }
            let qrCorpus = try await QRCorpus.make(in: work + "/qr-corpus").files
            let output = work + "/scp"
            let process = try PeerProcess(
                TestSupport.python,
                [TestSupport.repositoryRoot + "/scripts/pynetdicom-scp.py", output, "--aet", Self.scpAETitle],
                logFile: work + "/scp.log")
            do {
                let ready = try await process.waitForEvent { $0["event"]?.stringValue == "listening" }
                guard case .number(let text)? = ready["port"], let port = Int(text) else {
                    throw PeerProcess.PeerFailed(description: "no port in \(ready.serialized())")
                }
                let context = Context(
                    scp: DICOMPeer(host: "127.0.0.1", port: port, aeTitle: Self.scpAETitle), process: process,
                    outputDirectory: output,
                    corpus: corpus, qrCorpus: qrCorpus)
                try await Self.$current.withValue(context) { try await function() }
            } catch {
                await process.stop()
                throw error
            }
            await process.stop()
        }
    }
}
