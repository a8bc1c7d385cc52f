import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// C-STORE with an asynchronous operations window (PS3.7 §D.3.3.3): the client keeps several requests
/// outstanding when the acceptor grants it, matches responses that come in any order, and never exceeds the
/// grant; our server grants a window and stores every instance intact; DCMTK's storescp grants none.
@Suite(
    "Asynchronous operations window", .tags(.integration), .integrationTier, .serialized,
    .requires("storescp", "dump2dcm", "dcmodify", "dcmcjpeg", "dcmcrle", "dcmftest", "dcmdump", "python3"),
    .timeLimit(.minutes(10))
)
struct AsynchronousWindowTests {
    /// An acceptor written independently of our stack (raw sockets): it answers the A-ASSOCIATE-RQ with
    /// window `granted`, then withholds every C-STORE-RSP until `granted` data sets have arrived unanswered
    /// (or all `total` have), checks for 0.3 s that nothing more arrives (a client over its window would
    /// send), and answers the held ones newest first. Status: 0x0000 for odd message IDs, 0xB000 for even.
    /// Prints `held=<most unanswered at once> early=<data arrived past the window> order=<IDs answered>`.
    static let scriptedAcceptor = #"""
        import socket, struct, sys
        port, granted, total = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", port)); srv.listen(1); srv.settimeout(30)
        print("ready", flush=True)
        c, _ = srv.accept(); c.settimeout(30)
        def exact(n):
            b = b""
            while len(b) < n:
                chunk = c.recv(n - len(b))
                if not chunk: raise SystemExit("peer closed")
                b += chunk
            return b
        def pdu():
            h = exact(6)
            return h[0], exact(struct.unpack(">I", h[2:6])[0])
        def items(b):
            i = 0
            while i < len(b):
                n = struct.unpack(">H", b[i+2:i+4])[0]
                yield b[i], b[i+4:i+4+n]
                i += 4 + n
        def item(t, v): return bytes([t, 0]) + struct.pack(">H", len(v)) + v
        t, rq = pdu(); assert t == 1
        proposed, ac = None, item(0x10, b"1.2.840.10008.3.1.1.1")
        for t, v in items(rq[68:]):
            if t == 0x20:
                ts = [s for st, s in items(v[4:]) if st == 0x40]
                ac += item(0x21, bytes([v[0], 0, 0, 0]) + item(0x40, ts[0]))
            if t == 0x50:
                for st, s in items(v):
                    if st == 0x53: proposed = struct.unpack(">HH", s)
        assert proposed is not None, "no asynchronous operations window proposed"
        ac += item(0x50, item(0x51, struct.pack(">I", 65536)) + item(0x52, b"1.2.3.4") + item(0x53, struct.pack(">HH", 1, granted)))
        body = b"\x00\x01\x00\x00" + rq[4:36] + bytes(32) + ac
        c.sendall(b"\x02\x00" + struct.pack(">I", len(body)) + body)
        def command(b):
            out, i = {}, 0
            while i < len(b):
                g, e, n = struct.unpack("<HHI", b[i:i+8]); out[(g, e)] = b[i+8:i+8+n]; i += 8 + n
            return out
        def element(e, v): return struct.pack("<HHI", 0, e, len(v)) + v
        def rsp(pc, cmd):
            mid = struct.unpack("<H", cmd[(0, 0x110)])[0]
            rest = (element(0x2, cmd[(0, 0x2)]) + element(0x100, struct.pack("<H", 0x8001)) + element(0x120, struct.pack("<H", mid))
                    + element(0x800, struct.pack("<H", 0x0101)) + element(0x900, struct.pack("<H", 0 if mid % 2 else 0xB000))
                    + element(0x1000, cmd[(0, 0x1000)]))
            cs = element(0x0, struct.pack("<I", len(rest))) + rest
            pdv = struct.pack(">I", len(cs) + 2) + bytes([pc, 3]) + cs
            c.sendall(b"\x04\x00" + struct.pack(">I", len(pdv)) + pdv)
            return mid
        held, most, early, order, done, partial, current = [], 0, 0, [], 0, b"", None
        while True:
            t, b = pdu()
            if t == 5:
                c.sendall(b"\x06\x00\x00\x00\x00\x04\x00\x00\x00\x00"); break
            assert t == 4, t
            i = 0
            while i < len(b):
                n = struct.unpack(">I", b[i:i+4])[0]; pc, mch = b[i+4], b[i+5]; frag = b[i+6:i+4+n]; i += 4 + n
                if mch & 1:
                    partial += frag
                    if mch & 2: current, partial = (pc, command(partial)), b""
                elif mch & 2:
                    held.append(current); done += 1; most = max(most, len(held))
            if held and (len(held) >= granted or done == total):
                c.settimeout(0.3)
                try:
                    if c.recv(1, socket.MSG_PEEK): early += 1
                except socket.timeout:
                    pass
                c.settimeout(30)
                for pc, cmd in reversed(held): order.append(rsp(pc, cmd))
                held = []
        print("held=%d early=%d order=%s" % (most, early, ",".join(map(str, order))), flush=True)
        """#

    static func client(window: UInt16) -> DICOMClient {
        var configuration = DICOMClient.Configuration(
            callingAETitle: "PXSCU", connectTimeout: .seconds(3), acseTimeout: .seconds(5), dimseTimeout: .seconds(5))
        configuration.maximumOutstandingRequests = window
        return DICOMClient(configuration: configuration, logger: TestSupport.logger("px.test.client"))
    }

    /// Uncompressed files of the test corpus.
    static func corpus(in directory: String) async throws -> [String] {
        try await TestSupport.makeCorpus(in: directory).filter {
            $0.hasSuffix("-explicit-le.dcm") || $0.hasSuffix("-implicit-le.dcm")
        }
    }

    /// Runs the scripted acceptor for `body`; returns body's result and what the acceptor printed.
    static func withScriptedAcceptor<R>(
        granted: Int, total: Int, directory: String, _ body: (Int) async throws -> R
    ) async throws -> (R, String) {
        let port = try TestSupport.freePort()
        let log = directory + "/acceptor.log"
        let acceptor = try PeerProcess(
            "python3", ["-c", Self.scriptedAcceptor, "\(port)", "\(granted)", "\(total)"], logFile: log)
        defer { acceptor.kill() }
        // Not waitForPort: the acceptor takes one connection only.
        for _ in 0..<200 where try String(contentsOfFile: log, encoding: .utf8).contains("ready") == false {
            try await Task.sleep(for: .milliseconds(25))
        }
        let result = try await body(port)
        for _ in 0..<200 where try String(contentsOfFile: log, encoding: .utf8).contains("held=") == false {
            try await Task.sleep(for: .milliseconds(25))
        }
        return (result, try String(contentsOfFile: log, encoding: .utf8))
    }

    @Test("the client keeps the granted number of C-STOREs outstanding and matches responses out of order")
    func pipelinedToScriptedAcceptor() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let files = Array(try await Self.corpus(in: dir + "/corpus").prefix(5))
            try #require(files.count == 5)
            // Proposes 8, is granted 2: files 1-2 go out before any answer, then 3-4, then 5.
            let (results, log) = try await Self.withScriptedAcceptor(granted: 2, total: files.count, directory: dir) {
                port in
                try await Self.client(window: 8).store(
                    files: files, to: DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "ASYNC"))
            }
            #expect(log.contains("held=2 early=0 order=2,1,4,3,5"), "\(log)")
            #expect(results.map(\.path) == files)
            #expect(
                results.map(\.status) == [
                    .success, DIMSEStatus(code: 0xB000), .success, DIMSEStatus(code: 0xB000), .success,
                ], "\(results)")
        }
    }

    @Test("without a window the client sends one C-STORE at a time")
    func synchronousToScriptedAcceptor() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let files = Array(try await Self.corpus(in: dir + "/corpus").prefix(3))
            try #require(files.count == 3)
            // Proposes 2 but is granted 1: every response is awaited before the next file.
            let (results, log) = try await Self.withScriptedAcceptor(granted: 1, total: files.count, directory: dir) {
                port in
                try await Self.client(window: 2).store(
                    files: files, to: DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "ASYNC"))
            }
            #expect(log.contains("held=1 early=0 order=1,2,3"), "\(log)")
            #expect(results.map(\.status) == [.success, DIMSEStatus(code: 0xB000), .success], "\(results)")
        }
    }

    @Test("our server grants a window; every instance arrives with an identical data set")
    func pipelinedToOwnServer() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let files = try await Self.corpus(in: dir + "/corpus")
            try #require(files.count > 5)
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let granted = try await TestSupport.withServer(
                directory: received, configure: { $0.maximumOperationsPerformed = 4 }
            ) { server in
                try await Self.client(window: 16).withAssociation(
                    to: DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP"),
                    proposing: StorableFile.presentationContexts(
                        for: try files.map { try StorableFile(readingHeaderOf: $0) })
                ) { association in
                    var statuses: [Int: DIMSEStatus?] = [:]
                    try await association.store(try files.map { try StorableFile(readingHeaderOf: $0) }) {
                        index, result in
                        statuses[index] = result.status
                    }
                    #expect(statuses.count == files.count)
                    #expect(statuses.values.allSatisfy { $0 == .success })
                    return association.negotiated?.maximumOutstandingRequests
                }
            }
            #expect(granted == 4)
            #expect(TestSupport.dicomFiles(in: received).count == files.count)
            try TestSupport.expectIdenticalDataSets(files, receivedIn: received)
        }
    }

    @Test("storescp answers the window proposal with none: synchronous, and every file is stored")
    func storescpIsSynchronous() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let files = try await Self.corpus(in: dir + "/corpus")
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let port = try TestSupport.freePort()
            let storescp = try PeerProcess(
                "storescp", ["-aet", "STORESCP", "-od", received, "--accept-all", "\(port)"],
                logFile: dir + "/storescp.log")
            defer { storescp.kill() }
            try await TestSupport.waitForPort(port)
            let headers = try files.map { try StorableFile(readingHeaderOf: $0) }
            let window = try await Self.client(window: 16).withAssociation(
                to: DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "STORESCP"),
                proposing: StorableFile.presentationContexts(for: headers)
            ) { association in
                var succeeded = 0
                try await association.store(headers) { _, result in succeeded += result.succeeded ? 1 : 0 }
                #expect(succeeded == files.count)
                return association.negotiated?.maximumOutstandingRequests
            }
            #expect(window == 1)
            #expect(TestSupport.dicomFiles(in: received).count == files.count)
        }
    }
}
