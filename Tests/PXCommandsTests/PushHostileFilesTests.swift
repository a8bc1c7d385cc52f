import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-push with broken files among good ones, and peers that abort (issue 14 item 8), on both backends,
/// into storescp, Orthanc and pynetdicom: every good file is stored with the data set it has on disk, the
/// broken ones fail locally with their reason, and nothing answered Success is missing or different on
/// the peer. px-find against a raw-socket SCP that floods pending responses (issue 14 item 7).
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct PushHostileFilesTests {
    /// pydicom's test data in the venv (.venv/lib/python3.X/site-packages/pydicom/data/test_files).
    static let pydicomFiles = TestSupport.pydicomTestFiles
    static let python = TestSupport.python

    /// pydicom's files: four good ones (rtplan.dcm's meta names another SOP Instance UID than its data set,
    /// image_dfl.dcm is deflated), one truncated (Pixel Data longer than the file) and one whose data set is
    /// not encoded in its transfer syntax (implicit VR under JPEG Baseline).
    static let good = ["CT_small.dcm", "MR_small.dcm", "rtplan.dcm", "image_dfl.dcm"]
    static let broken = ["MR_truncated.dcm": "(7fe0,0010) announces 8192 bytes", "SC_rgb_jpeg.dcm": "has no valid VR"]

    /// A folder with copies of the good and broken files.
    static func folder(_ work: String) throws -> String {
        let directory = work + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let names = Self.good + Self.broken.keys
        for name in names {
            try FileManager.default.copyItem(atPath: Self.pydicomFiles + "/" + name, toPath: directory + "/" + name)
        }
        return directory
    }

    /// The data set bytes of a Part 10 file as the peer must hold them: for a deflated file, inflated
    /// (Explicit VR Little Endian, what px sends a peer that accepts it); without Data Set Trailing Padding
    /// (FFFC,FFFC), which has no meaning (PS3.10 §7.2) and which DCMTK drops when it writes a file.
    static func dataSetBytes(_ path: String) throws -> [UInt8] {
        let structure = try Part10File.checkStructure(contentsOf: path, maximumInflatedSize: 1 << 28)
        var bytes: [UInt8]
        if structure.transferSyntax.isDeflated {
            bytes = try Part10File.inflatedDataSet(
                contentsOf: path, dataSetOffset: structure.dataSetOffset, maximumInflatedSize: 1 << 28)
        } else {
            bytes = Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))[structure.dataSetOffset...])
        }
        // The last element, when it is (FFFC,FFFC): explicit (OB, 12-byte header) or implicit (8-byte header).
        func little32(_ at: Int) -> Int {
            Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        }
        for start in stride(from: max(0, bytes.count - (1 << 16)), to: bytes.count - 7, by: 1)
        where bytes[start] == 0xFC && bytes[start + 1] == 0xFF && bytes[start + 2] == 0xFC && bytes[start + 3] == 0xFF {
            if bytes[start + 4] == 0x4F, bytes[start + 5] == 0x42, start + 12 <= bytes.count,
                start + 12 + little32(start + 8) == bytes.count
            {
                return Array(bytes[..<start])
            }
            if start + 8 + little32(start + 4) == bytes.count { return Array(bytes[..<start]) }
        }
        return bytes
    }

    /// A data set as DICOM JSON without Data Set Trailing Padding (see ``dataSetBytes(_:)``), and the
    /// Pixel Data value apart: its OB/OW choice is lost in Implicit VR (PS3.5 §A.1), its bytes are not.
    static func dataSetJSON(_ path: String) throws -> [JSONValue] {
        var dataSet = try Part10File(contentsOf: path).dataSet
        _ = dataSet.remove(Tag(0xFFFC, 0xFFFC))
        let pixels = dataSet.remove(.pixelData)
        return [dataSet.dicomJSON(), .string(pixels.map { $0.bytes.map { String($0, radix: 16) }.joined() } ?? "")]
    }

    /// The Part 10 files under `directory` (recursively) by their data set's SOP Instance UID.
    static func receivedByUID(_ directory: String) -> [String: String] {
        var out: [String: String] = [:]
        for path in PushGetCommandTests.files(under: directory) {
            guard let structure = try? Part10File.checkStructure(contentsOf: path, maximumInflatedSize: 1 << 28),
                let uid = structure.sopInstanceUID
            else { continue }
            out[uid] = path
        }
        return out
    }

    /// Checks one px-push run: the good files succeeded and are on the peer with their data set (byte for byte
    /// on the native backend, which sends the file's own bytes; equal as DICOM JSON on DCMTK's, where storescu
    /// re-encodes), the broken ones failed with their reason and were never sent, the meta disagreement is a
    /// warning, and every success is on the peer.
    static func expectPushed(
        _ run: PeerHarness.Run, backend: String, peer: String, received: String, associations: Int = 1
    ) throws {
        let json = try #require(run.json, "\(peer) \(backend): \(run.stdout) \(run.stderr)")
        #expect(run.exitCode == 1, "\(peer) \(backend): \(run.stdout)")
        #expect(json["error"]?["code"]?.stringValue == "partialFailure", "\(peer) \(backend): \(run.stdout)")
        #expect(json["data"]?["associations"] == .number(String(associations)), "\(peer) \(backend)")
        let files = json["data"]?["files"]?.arrayValue ?? []
        #expect(files.count == Self.good.count + Self.broken.count)
        let onPeer = Self.receivedByUID(received)
        for file in files {
            let path = file["path"]?.stringValue ?? ""
            let name = String(path.split(separator: "/").last ?? "")
            if let reason = Self.broken[name] {
                #expect(file["status"]?.stringValue == "failed", "\(peer) \(backend) \(name)")
                #expect(file["error"]?["code"]?.stringValue == "malformedFile", "\(peer) \(backend) \(name): \(file)")
                #expect(
                    file["error"]?["message"]?.stringValue?.contains(reason) == true,
                    "\(peer) \(backend) \(name): \(file)")
                #expect(file["attempts"] == .number("0"))
            } else {
                #expect(file["status"]?.stringValue == "success", "\(peer) \(backend) \(name): \(file)")
                #expect(file["attempts"] == .number("1"), "\(peer) \(backend) \(name)")
            }
            if name == "rtplan.dcm" {
                // The data set's own UID is the one announced; the meta's is in the warning.
                #expect(file["SOPInstanceUID"]?.stringValue == "1.2.777.777.77.7.7777.7777.20030903150023")
                #expect(
                    file["warning"]?.stringValue?.contains("1.2.999.999.99.9.9999.9999.20030903150023") == true,
                    "\(file)")
            } else {
                #expect(file["warning"] == .null, "\(peer) \(backend) \(name)")
            }
            guard file["status"]?.stringValue == "success" else { continue }
            let uid = file["SOPInstanceUID"]?.stringValue ?? ""
            let copy = try #require(onPeer[uid], "\(peer) \(backend): \(name) answered Success but is not on the peer")
            let sent = try Part10File.checkStructure(contentsOf: path, maximumInflatedSize: 1 << 28).transferSyntax
            let held = try Part10File.checkStructure(contentsOf: copy, maximumInflatedSize: 1 << 28).transferSyntax
            if backend == "native" && (held == sent || (sent.isDeflated && held == .explicitVRLittleEndian)) {
                // The file's own bytes (a deflated one inflated): the same bytes on the peer.
                #expect(
                    try Self.dataSetBytes(copy) == Self.dataSetBytes(path),
                    "\(peer) \(backend) \(name): data set differs on the peer")
            } else {
                // Re-encoded for the context the peer chose (pynetdicom takes Implicit VR for the deflated file).
                #expect(
                    try Self.dataSetJSON(copy) == Self.dataSetJSON(path),
                    "\(peer) \(backend) \(name): data set differs on the peer")
            }
        }
        // Nothing of the broken files reached the peer.
        #expect(onPeer.count == Self.good.count, "\(peer) \(backend): \(onPeer.keys.sorted())")
    }

    /// Starts scripts/pynetdicom-scp.py; returns it and its port once it listens.
    static func startPynetdicom(_ output: String, log: String, extra: [String] = []) async throws -> (PeerProcess, Int)
    {
        try await PeerHarness.startPythonPeer("pynetdicom-scp.py", [output, "--aet", "PYSCP"] + extra, log: log)
    }

    /// px-push of `paths` to a storescp started with `options` (on a free port), stopped afterwards.
    static func pushToStorescp(_ options: [String], _ paths: [String], backend: String, log: String) async throws
        -> PeerHarness.Run
    {
        let port = try TestSupport.freePort()
        let storescp = try PeerProcess("storescp", options + [String(port)], logFile: log)
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: port, aeTitle: "STORESCP")
        let push = try await PeerHarness.runAsync(
            "px-push", ["STORESCP@127.0.0.1:\(port)"] + paths + ["--backend", backend])
        await storescp.stop()
        return push
    }

    @Test func brokenFilesAmongGoodOnesToStorescp() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let files = try Self.folder(work)
        for backend in PushGetCommandTests.backends {
            let received = work + "/storescp-" + backend
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let push = try await Self.pushToStorescp(
                ["-od", received], [files], backend: backend, log: work + "/storescp-\(backend).log")
            try Self.expectPushed(push, backend: backend, peer: "storescp", received: received)
        }
    }

    @Test func brokenFilesAmongGoodOnesToPynetdicom() async throws {
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let files = try Self.folder(work)
        for backend in PushGetCommandTests.backends {
            let received = work + "/pynetdicom-" + backend
            let (scp, port) = try await Self.startPynetdicom(received, log: work + "/pynetdicom-\(backend).log")
            let push = try await PeerHarness.runAsync(
                "px-push", ["PYSCP@127.0.0.1:\(port)", files, "--backend", backend])
            await scp.stop()
            try Self.expectPushed(push, backend: backend, peer: "pynetdicom", received: received)
        }
    }

    @Test func brokenFilesAmongGoodOnesToOrthanc() async throws {
        guard
            PeerHarness.requireTools(["Orthanc", "storescu"])
                || FileManager.default.isExecutableFile(atPath: "/usr/sbin/Orthanc")
        else {
            return
        }
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let files = try Self.folder(work)
        for backend in PushGetCommandTests.backends {
            let orthanc = work + "/orthanc-" + backend
            let start = try await PeerHarness.runAsync(
                TestSupport.repositoryRoot + "/scripts/orthanc-start.sh", [orthanc],
                environment: ["PATH": OrthancCommandPeer.path])
            try #require(start.exitCode == 0, "orthanc-start.sh: \(start.stderr)")
            let ports = (start.stdout.split(separator: "\n").last ?? "").split(separator: " ").compactMap { Int($0) }
            try #require(ports.count == 2, "orthanc-start.sh printed no ports: \(start.stdout)")
            let push = try await PeerHarness.runAsync(
                "px-push", ["ORTHANC@127.0.0.1:\(ports[0])", files, "--backend", backend])
            await OrthancCommandPeer.stop(orthanc)
            try Self.expectPushed(push, backend: backend, peer: "Orthanc", received: orthanc + "/db")
        }
    }

    /// A peer that aborts the association on one instance: px-push opens a new association and goes on,
    /// sends that instance once more (it is charged two attempts and failed), and stores every other file.
    @Test func reconnectAfterAnAbort() async throws {
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let directory = work + "/files"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        for name in ["CT_small.dcm", "MR_small.dcm", "rtplan.dcm", "rtdose.dcm"] {
            try FileManager.default.copyItem(atPath: Self.pydicomFiles + "/" + name, toPath: directory + "/" + name)
        }
        // MR_small.dcm, second in byte order of names: the peer aborts when it arrives.
        let victim = try #require(
            try Part10File.checkStructure(contentsOf: directory + "/MR_small.dcm", maximumInflatedSize: 1 << 20)
                .sopInstanceUID)
        for backend in PushGetCommandTests.backends {
            let received = work + "/pynetdicom-" + backend
            let (scp, port) = try await Self.startPynetdicom(
                received, log: work + "/abort-\(backend).log", extra: ["--abort-on", victim])
            let push = try await PeerHarness.runAsync(
                "px-push", ["PYSCP@127.0.0.1:\(port)", directory, "--backend", backend])
            await scp.stop()
            let json = try #require(push.json, "\(backend): \(push.stdout) \(push.stderr)")
            #expect(push.exitCode == 1)
            #expect(json["error"]?["code"]?.stringValue == "partialFailure", "\(backend): \(push.stdout)")
            // One association, one after each abort of the victim.
            #expect(json["data"]?["associations"] == .number("3"), "\(backend): \(push.stdout)")
            #expect(json["data"]?["completed"] == .number("3"), "\(backend): \(push.stdout)")
            let onPeer = Self.receivedByUID(received)
            for file in json["data"]?["files"]?.arrayValue ?? [] {
                let path = file["path"]?.stringValue ?? ""
                if path.hasSuffix("/MR_small.dcm") {
                    #expect(file["status"]?.stringValue == "failed")
                    #expect(file["attempts"] == .number("2"), "\(backend): \(file)")
                    #expect(file["error"]?["code"]?.stringValue == "aborted", "\(backend): \(file)")
                } else {
                    #expect(file["status"]?.stringValue == "success", "\(backend): \(file)")
                    #expect(file["attempts"] == .number("1"), "\(backend): \(file)")
                    let copy = try #require(
                        onPeer[file["SOPInstanceUID"]?.stringValue ?? ""], "\(backend): \(path) not on the peer")
                    if backend == "native" { #expect(try Self.dataSetBytes(copy) == Self.dataSetBytes(path)) }
                }
            }
        }
    }

    /// A peer that aborts every association: px-push stops after a bounded number of them.
    @Test func aPeerThatAbortsEverythingEndsThePush() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let files = try Self.folder(work)
        for backend in PushGetCommandTests.backends {
            let push = try await Self.pushToStorescp(
                ["--abort-after", "--ignore"], [files], backend: backend, log: work + "/abort-\(backend).log")
            let json = try #require(push.json, "\(backend): \(push.stdout)")
            #expect(push.exitCode == 1)
            #expect(json["error"]?["code"]?.stringValue == "aborted", "\(backend): \(push.stdout)")
            // The first file twice, the second once: three associations in a row answered nothing.
            #expect(json["data"]?["associations"] == .number("3"), "\(backend): \(push.stdout)")
            let attempts = (json["data"]?["files"]?.arrayValue ?? []).map { file -> Int in
                if case .number(let n)? = file["attempts"] { return Int(n) ?? 0 }
                return 0
            }
            #expect(attempts.reduce(0, +) == 3, "\(backend): \(push.stdout)")
            #expect(json["data"]?["completed"] == .number("0"))
        }
    }

    /// One file and an abort: data is the per-file list, not null (DCMTK backend included).
    @Test func oneFileAndAnAbortStillListsTheFile() async throws {
        guard PeerHarness.requireTools(["storescp", "storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        for backend in PushGetCommandTests.backends {
            let push = try await Self.pushToStorescp(
                ["--abort-after", "--ignore"], [Self.pydicomFiles + "/CT_small.dcm"], backend: backend,
                log: work + "/one-\(backend).log")
            let json = try #require(push.json, "\(backend): \(push.stdout)")
            #expect(json["error"]?["code"]?.stringValue == "aborted", "\(backend): \(push.stdout)")
            let files = json["data"]?["files"]?.arrayValue ?? []
            #expect(files.count == 1, "\(backend): \(push.stdout)")
            #expect(files.first?["attempts"] == .number("2"), "\(backend): \(push.stdout)")
        }
    }
}
