import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-push (C-STORE SCU) into DCMTK's storescp and px-get (C-GET SCU) from dcmqrscp, each on both
/// backends, on free loopback ports; the JSON of the two backends must be equal apart from
/// `backend` and `command`.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct PushGetCommandTests {
    static let backends = ["dcmtk", "native"]

    /// A private SOP class no storage SCP knows: storescp (without -pm) refuses its context.
    static let unknownSOPClass = "1.2.826.0.1.3680043.10.543.99"

    /// The corpus of scripts/make-qr-corpus.py, by SOP Instance UID, as DICOM JSON.
    static func loadCorpus(_ directory: String) throws -> [String: JSONValue] {
        var loaded: [String: JSONValue] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory) where file.hasSuffix(".dcm") {
            let ds = try Part10File(contentsOf: directory + "/" + file).dataSet
            loaded[ds.string(.sopInstanceUID) ?? ""] = ds.dicomJSON()
        }
        return loaded
    }

    static func makeCorpus(_ directory: String) async throws {
        let corpus = try await PeerHarness.runAsync(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", directory])
        try #require(corpus.exitCode == 0, "make-qr-corpus.py failed: \(corpus.stderr)")
    }

    /// Waits until the peer answers C-ECHO; fails the test when it did not within 30 s.
    static func waitForEcho(port: Int, aeTitle: String) async throws {
        let answered = try await TestSupport.waitForEcho(port: port, aeTitle: aeTitle)
        #expect(answered, "the peer on port \(port) did not answer C-ECHO")
    }

    /// The files under a directory, recursively.
    static func files(under directory: String) -> [String] {
        (FileManager.default.enumerator(atPath: directory)?.allObjects as? [String] ?? [])
            .filter { path in
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: directory + "/" + path, isDirectory: &isDirectory)
                    && !isDirectory.boolValue
            }
            .map { directory + "/" + $0 }
    }

    @Test func pushIntoStorescp() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu", "dcmodify"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await Self.makeCorpus(work + "/corpus")
        let loaded = try Self.loadCorpus(work + "/corpus")
        try #require(loaded.count == 6)
        // A copy of one CT with a SOP class the peer does not know, and a text file.
        let extra = work + "/extra"
        try FileManager.default.createDirectory(atPath: extra, withIntermediateDirectories: true)
        let source = try #require(
            try FileManager.default.contentsOfDirectory(atPath: work + "/corpus").sorted().first {
                $0.hasSuffix(".dcm")
            })
        try FileManager.default.copyItem(atPath: work + "/corpus/" + source, toPath: extra + "/unknown-class.dcm")
        let modify = try await PeerHarness.runAsync(
            "/usr/bin/dcmodify", ["-nb", "-m", "(0008,0016)=\(Self.unknownSOPClass)", extra + "/unknown-class.dcm"])
        try #require(modify.exitCode == 0, "dcmodify: \(modify.stderr)")
        FileManager.default.createFile(atPath: extra + "/notes.txt", contents: Data("not DICOM\n".utf8))

        var outputs: [String: [JSONValue]] = [:]
        for backend in Self.backends {
            let port = try TestSupport.freePort()
            let received = work + "/received-" + backend
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let storescp = try PeerProcess(
                "storescp", ["-od", received, String(port)], logFile: work + "/storescp-\(backend).log")
            try await Self.waitForEcho(port: port, aeTitle: "STORESCP")
            let push = try await PeerHarness.runAsync(
                "px-push",
                [
                    "STORESCP@127.0.0.1:\(port)", work + "/corpus", extra + "/unknown-class.dcm", extra + "/notes.txt",
                    "--backend", backend,
                ])
            await storescp.stop()

            #expect(push.exitCode == 1, "\(backend): \(push.stdout) \(push.stderr)")
            let json = try #require(push.json, "\(backend): \(push.stdout) \(push.stderr)")
            #expect(json["backend"]?.stringValue == backend)
            #expect(json["error"]?["code"]?.stringValue == "partialFailure")
            let files = json["data"]?["files"]?.arrayValue ?? []
            // 6 instances and index.json from the corpus directory, then the two extra files.
            #expect(files.count == 9, "\(push.stdout)")
            #expect(json["data"]?["completed"] == .number("6"))
            #expect(json["data"]?["failed"] == .number("3"))
            for file in files {
                let path = file["path"]?.stringValue ?? ""
                if path.hasSuffix(".dcm") && path.contains("/corpus/") {
                    #expect(file["status"]?.stringValue == "success", "\(file)")
                    #expect(file["dimseStatus"]?["code"]?.stringValue == "0x0000")
                    #expect(loaded[file["SOPInstanceUID"]?.stringValue ?? ""] != nil)
                } else if path.hasSuffix("unknown-class.dcm") {
                    #expect(file["status"]?.stringValue == "failed")
                    #expect(file["SOPClassUID"]?.stringValue == Self.unknownSOPClass)
                    #expect(file["error"]?["code"]?.stringValue == "noAcceptablePresentationContext", "\(file)")
                } else {
                    // index.json and notes.txt
                    #expect(file["status"]?.stringValue == "failed")
                    #expect(file["error"]?["code"]?.stringValue == "notDICOM", "\(file)")
                    #expect(file["dimseStatus"] == .null)
                }
            }
            // Every file that arrived is the one sent, as a data set.
            let arrived = Self.files(under: received)
            #expect(arrived.count == 6, "\(backend): \(arrived)")
            for path in arrived {
                let ds = try Part10File(contentsOf: path).dataSet
                #expect(
                    loaded[ds.string(.sopInstanceUID) ?? "?"] == ds.dicomJSON(), "\(backend): data set differs: \(path)"
                )
            }
            outputs[backend] = IntegrationTests.comparable(push)
        }
        #expect(outputs["native"] == outputs["dcmtk"], "native JSON differs from dcmtk JSON")
    }

    /// storescp with a profile that accepts CT Image Storage only: the MR file's context is rejected by
    /// the peer (PS3.8 §9.3.3.2, result 3), the CT files still go.
    @Test func pushToAPeerThatRejectsASOPClass() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await Self.makeCorpus(work + "/corpus")
        let profile = """
            [[TransferSyntaxes]]
            [Uncompressed]
            TransferSyntax1 = LocalEndianExplicit
            TransferSyntax2 = LittleEndianImplicit

            [[PresentationContexts]]
            [CTOnly]
            PresentationContext1 = CTImageStorage\\Uncompressed
            PresentationContext2 = VerificationSOPClass\\Uncompressed

            [[Profiles]]
            [CT]
            PresentationContexts = CTOnly

            """
        FileManager.default.createFile(atPath: work + "/ct-only.cfg", contents: Data(profile.utf8))
        let names = try FileManager.default.contentsOfDirectory(atPath: work + "/corpus").filter {
            $0.hasSuffix(".dcm")
        }.sorted()
        var outputs: [String: [JSONValue]] = [:]
        for backend in Self.backends {
            let port = try TestSupport.freePort()
            let received = work + "/received-" + backend
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let storescp = try PeerProcess(
                "storescp", ["-xf", work + "/ct-only.cfg", "CT", "-od", received, String(port)],
                logFile: work + "/storescp-\(backend).log")
            try await Self.waitForEcho(port: port, aeTitle: "STORESCP")
            let push = try await PeerHarness.runAsync(
                "px-push",
                ["STORESCP@127.0.0.1:\(port)"] + names.map { work + "/corpus/" + $0 } + ["--backend", backend])
            await storescp.stop()
            #expect(push.exitCode == 1, "\(backend): \(push.stdout) \(push.stderr)")
            let files = push.json?["data"]?["files"]?.arrayValue ?? []
            #expect(files.count == names.count)
            for file in files {
                if file["SOPClassUID"]?.stringValue == "1.2.840.10008.5.1.4.1.1.2" {
                    #expect(file["status"]?.stringValue == "success", "\(backend): \(file)")
                } else {
                    #expect(file["status"]?.stringValue == "failed", "\(backend): \(file)")
                    #expect(file["error"]?["code"]?.stringValue == "noAcceptablePresentationContext")
                }
            }
            let arrived = Self.files(under: received)
            #expect(arrived.count == files.filter { $0["status"]?.stringValue == "success" }.count)
            #expect(arrived.count == 4, "\(backend): \(arrived)")
            outputs[backend] = IntegrationTests.comparable(push)
        }
        #expect(outputs["native"] == outputs["dcmtk"], "native JSON differs from dcmtk JSON")
    }

    @Test func pushFailureStatusAndRefusedPeer() async throws {
        guard PeerHarness.requireTools(["storescp", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        try await Self.makeCorpus(work + "/corpus")
        var outputs: [String: [JSONValue]] = [:]
        for backend in Self.backends {
            // Nobody listening: connection refused, exit 1, no data.
            let closed = try TestSupport.holdPort()
            defer { closed.release() }
            let refused = try await PeerHarness.runAsync(
                "px-push", ["127.0.0.1:\(closed.port)", work + "/corpus", "--backend", backend])
            #expect(refused.exitCode == 1)
            #expect(refused.json?["error"]?["code"]?.stringValue == "connectionRefused", "\(refused.stdout)")
            // Only non-DICOM input: nothing to send, each file reported, exit 1.
            let none = try await PeerHarness.runAsync(
                "px-push",
                ["127.0.0.1:\(try TestSupport.freePort())", work + "/corpus/index.json", "--backend", backend])
            #expect(none.exitCode == 1)
            #expect(none.json?["data"]?["files"]?.arrayValue?.first?["error"]?["code"]?.stringValue == "notDICOM")
            // A peer that aborts the association on the first C-STORE: nothing stored, the abort is the error.
            let port = try TestSupport.freePort()
            let aborting = try PeerProcess(
                "storescp", ["--abort-after", "--ignore", String(port)], logFile: work + "/abort-\(backend).log")
            try await Self.waitForEcho(port: port, aeTitle: "STORESCP")
            let aborted = try await PeerHarness.runAsync(
                "px-push", ["STORESCP@127.0.0.1:\(port)", work + "/corpus", "--backend", backend])
            await aborting.stop()
            #expect(aborted.exitCode == 1)
            #expect(aborted.json?["error"]?["code"]?.stringValue == "aborted", "\(backend): \(aborted.stdout)")
            // (A refusal's or abort's message differs by backend: DCMTK's own text.)
            outputs[backend] = IntegrationTests.comparable(none)
        }
        #expect(outputs["native"] == outputs["dcmtk"], "native JSON differs from dcmtk JSON")
    }

    /// storescp offers no Query/Retrieve: the C-GET context is not accepted, on both backends alike.
    @Test func getFromAPeerWithoutCGet() async throws {
        guard PeerHarness.requireTools(["storescp", "getscu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let port = try TestSupport.freePort()
        let storescp = try PeerProcess("storescp", ["--ignore", String(port)], logFile: work + "/storescp.log")
        try await Self.waitForEcho(port: port, aeTitle: "STORESCP")
        var outputs: [String: [JSONValue]] = [:]
        for backend in Self.backends {
            let get = try await PeerHarness.runAsync(
                "px-get",
                [
                    "STORESCP@127.0.0.1:\(port)", "-d", work + "/got", "--StudyInstanceUID", "1.2.3", "--backend",
                    backend,
                ])
            #expect(get.exitCode == 1)
            #expect(
                get.json?["error"]?["code"]?.stringValue == "noAcceptablePresentationContext",
                "\(backend): \(get.stdout)")
            outputs[backend] = IntegrationTests.comparable(get)
        }
        await storescp.stop()
        #expect(outputs["native"] == outputs["dcmtk"], "native JSON differs from dcmtk JSON")
    }

    @Test func getFromDcmqrscp() async throws {
        guard PeerHarness.requireTools(["dcmqrscp", "getscu", "echoscu", "storescu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let scripts = TestSupport.repositoryRoot + "/scripts/"
        try await Self.makeCorpus(work + "/corpus")
        let loaded = try Self.loadCorpus(work + "/corpus")
        let start = try await PeerHarness.runAsync(scripts + "dcmqrscp-start.sh", [work + "/qr"])
        defer { TestSupport.killPeer(pidFile: work + "/qr/dcmqrscp.pid") }
        try #require(start.exitCode == 0, "dcmqrscp-start.sh failed: \(start.stderr)")
        let port = start.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let load = try await PeerHarness.runAsync(scripts + "dcmqrscp-load.sh", [work + "/qr", work + "/corpus"])
        try #require(load.exitCode == 0, "dcmqrscp-load.sh failed: \(load.stderr)")
        let peer = "QRSCP@127.0.0.1:\(port)"

        // The study with two CT instances in one series, and the MR series of the same patient.
        let corpusSets = try FileManager.default.contentsOfDirectory(atPath: work + "/corpus").filter {
            $0.hasSuffix(".dcm")
        }
        .map { try Part10File(contentsOf: work + "/corpus/" + $0).dataSet }
        let byStudy = Dictionary(grouping: corpusSets) { $0.string(.studyInstanceUID) ?? "" }
        let study = try #require(byStudy.first { $0.value.count == 2 }?.key)
        let mr = try #require(corpusSets.first { $0.string(.modality) == "MR" })
        let steps: [(name: String, arguments: [String], expected: Int)] = [
            ("study", ["--StudyInstanceUID", study], 2),
            (
                "series",
                [
                    "--StudyInstanceUID", mr.string(.studyInstanceUID) ?? "", "--SeriesInstanceUID",
                    mr.string(.seriesInstanceUID) ?? "",
                ], 1
            ),
            ("noMatch", ["--StudyInstanceUID", "1.2.3.4.5.6.7"], 0),
        ]
        // The same root for both backends, emptied in between, so the paths in the JSON agree.
        let root = work + "/got"
        var outputs: [String: [String: [JSONValue]]] = [:]
        for backend in Self.backends {
            var mine: [String: [JSONValue]] = [:]
            for step in steps {
                try? FileManager.default.removeItem(atPath: root)
                let get = try await PeerHarness.runAsync(
                    "px-get", [peer, "-d", root] + step.arguments + ["--backend", backend])
                #expect(get.exitCode == 0, "\(backend) \(step.name): \(get.stdout) \(get.stderr)")
                let data = get.json?["data"]
                #expect(get.json?["backend"]?.stringValue == backend)
                #expect(data?["completed"] == .number(String(step.expected)), "\(backend) \(step.name): \(get.stdout)")
                #expect(data?["failed"] == .number("0"))
                let result = data?["gets"]?.arrayValue?.first
                #expect(result?["dimseStatus"]?["code"]?.stringValue == "0x0000")
                #expect(result?["remaining"] == .number("0"))
                let instances = result?["instances"]?.arrayValue ?? []
                #expect(instances.count == step.expected, "\(backend) \(step.name): \(get.stdout)")
                // Each stored file is where the JSON says, inside the root, and equals what was loaded.
                let stored = Self.files(under: root).filter { !$0.contains("/.px-incoming") }
                #expect(stored.count == step.expected, "\(backend) \(step.name): \(stored)")
                for instance in instances {
                    let path = try #require(instance["path"]?.stringValue)
                    #expect(path.hasPrefix(root + "/"))
                    let ds = try Part10File(contentsOf: path).dataSet
                    #expect(ds.string(.sopInstanceUID) == instance["SOPInstanceUID"]?.stringValue)
                    #expect(
                        loaded[ds.string(.sopInstanceUID) ?? "?"] == ds.dicomJSON(),
                        "\(backend): data set differs: \(path)")
                }
                mine[step.name] = IntegrationTests.comparable(get)
            }
            // Piped px-find output: every series of PAT001 (3 instances in 2 studies).
            try? FileManager.default.removeItem(atPath: root)
            let find = try await PeerHarness.runAsync("px-find", [peer, "--PatientID", "PAT001", "--backend", backend])
            #expect(find.exitCode == 0)
            let piped = try await PeerHarness.runAsync(
                "px-get", [peer, "-d", root, "--backend", backend], stdin: find.stdout)
            #expect(piped.exitCode == 0, "\(backend) piped: \(piped.stdout) \(piped.stderr)")
            #expect(piped.json?["data"]?["instances"] == .number("3"), "\(piped.stdout)")
            #expect(piped.json?["data"]?["gets"]?.arrayValue?.count == 2)
            mine["piped"] = IntegrationTests.comparable(piped)
            outputs[backend] = mine
        }
        let dcmtk = outputs["dcmtk"] ?? [:]
        let native = outputs["native"] ?? [:]
        #expect(Set(dcmtk.keys) == Set(native.keys))
        for (name, expected) in dcmtk.sorted(by: { $0.key < $1.key }) {
            #expect(native[name] == expected, "\(name): native JSON differs from dcmtk JSON")
        }
    }
}
