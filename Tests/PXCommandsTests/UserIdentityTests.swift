import DICOMData
import Foundation
import PXTestSupport
import Testing

/// User Identity Negotiation (PS3.7 §D.3.3.7, issue 35) against real peers: px's SCU commands presenting an
/// identity to a pynetdicom SCP that checks it (scripts/pynetdicom-scp.py --require-user, pynetdicom's
/// EVT_USER_ID), px-listen --require-user checked by DCMTK's storescu (the DCMTK 3.6.7 SCU that can present
/// one), and C-CANCEL on SIGINT/SIGTERM during px-move and px-get against a peer that sends its
/// sub-operations slowly (scripts/pynetdicom-qr-scp.py --sub-operation-delay).
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct UserIdentityTests {
    static let sample = PushHostileFilesTests.pydicomFiles + "/CT_small.dcm"

    /// scripts/pynetdicom-scp.py accepting alice/s3cret and the token `tok123` (answered with
    /// `px-test-server-response`).
    static func startCheckingPeer(_ work: String) async throws -> (PeerProcess, Int) {
        try await PushHostileFilesTests.startPynetdicom(
            work + "/received", log: work + "/scp.log",
            extra: ["--require-user", "alice:s3cret", "--accept-token", "tok123"])
    }

    /// A DCMTK tool (found on the peers' PATH), stdout and stderr apart.
    static func dcmtk(_ tool: String, _ arguments: [String]) async throws -> PeerHarness.Run {
        PeerHarness.Run(try await TestSupport.run(tool, arguments, separateErrorOutput: true))
    }

    static func identityEvents(_ peer: PeerProcess) -> [JSONValue] {
        peer.events.filter { $0["event"]?.stringValue == "userIdentity" }
    }

    @Test(arguments: ["native", "auto"]) func echoPresentsUsernameAndPassword(backend: String) async throws {
        guard PeerHarness.requireTools(["echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-identity-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (peer, port) = try await Self.startCheckingPeer(work)
        defer { peer.kill() }

        let echo = try await PeerHarness.run(
            "px-echo", ["PYSCP@127.0.0.1:\(port)", "--user", "alice", "--password", "s3cret", "--backend", backend])
        #expect(echo.exitCode == 0, "\(echo.stdout) \(echo.stderr)")
        // auto: echoscu 3.6.7 cannot present an identity, so the native backend runs it.
        #expect(echo.json?["backend"]?.stringValue == "native")
        #expect(echo.json?["data"]?["userIdentity"]?["type"]?.stringValue == "usernameAndPasscode")
        #expect(echo.json?["data"]?["userIdentity"]?["username"]?.stringValue == "alice")
        // The password is never echoed.
        #expect(!echo.stdout.contains("s3cret") && !echo.stderr.contains("s3cret"))
        #expect(echo.json?["command"]?.arrayValue?.contains(.string("***")) == true)
        let seen = Self.identityEvents(peer)
        #expect(seen.count == 1 && seen.first?["accepted"] == .bool(true), "\(peer.log)")
        #expect(seen.first?["username"]?.stringValue == "alice")

        let wrong = try await PeerHarness.run(
            "px-echo", ["PYSCP@127.0.0.1:\(port)", "--user", "alice", "--password=nope", "--backend", backend])
        #expect(wrong.exitCode == 1, "\(wrong.stdout)")
        #expect(wrong.json?["error"]?["code"]?.stringValue == "associationRejected")
        // pynetdicom rejects an identity it does not verify as rejected-transient, ACSE provider, no reason.
        #expect(wrong.json?["error"]?["details"]?["result"]?.stringValue == "Rejected Transient")
        #expect(wrong.json?["command"]?.arrayValue?.contains(.string("--password=***")) == true)
        #expect(!wrong.stdout.contains("nope"))
        #expect(Self.identityEvents(peer).last?["accepted"] == .bool(false))
    }

    /// `--backend dcmtk` with a tool that has no identity options is refused by name, never run without it.
    @Test func dcmtkEchoCannotPresentAnIdentity() async throws {
        let echo = try await PeerHarness.run(
            "px-echo", ["127.0.0.1:9", "--user", "alice", "--password", "s3cret", "--backend", "dcmtk"])
        #expect(echo.exitCode == 69, "\(echo.stdout)")
        #expect(echo.json?["error"]?["code"]?.stringValue == "backendUnavailable")
        #expect(echo.json?["error"]?["message"]?.stringValue?.contains("echoscu") == true)
    }

    /// The password from $PX_PASSWORD, and a JWT from a file with a positive response asked for and reported.
    @Test func passwordFromEnvironmentAndTokenWithPositiveResponse() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-identity-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (peer, port) = try await Self.startCheckingPeer(work)
        defer { peer.kill() }

        let fromEnvironment = try await PeerHarness.run(
            "px-echo", ["PYSCP@127.0.0.1:\(port)", "--user", "alice", "--pos-response"],
            environment: ["PX_PASSWORD": "s3cret"])
        #expect(fromEnvironment.exitCode == 0, "\(fromEnvironment.stdout)")
        let identity = fromEnvironment.json?["data"]?["userIdentity"]
        #expect(identity?["positiveResponseRequested"] == .bool(true))
        // pynetdicom answers username types without the 0x59 sub-item: reported as not received.
        #expect(identity?["positiveResponseReceived"] == .bool(false))

        let token = work + "/token.jwt"
        try "tok123".write(toFile: token, atomically: true, encoding: .utf8)
        let jwt = try await PeerHarness.run("px-echo", ["PYSCP@127.0.0.1:\(port)", "--jwt", token, "--pos-response"])
        #expect(jwt.exitCode == 0, "\(jwt.stdout)")
        #expect(jwt.json?["data"]?["userIdentity"]?["type"]?.stringValue == "jwt")
        #expect(jwt.json?["data"]?["userIdentity"]?["positiveResponseReceived"] == .bool(true))
        #expect(jwt.json?["data"]?["userIdentity"]?["serverResponse"]?.stringValue == "px-test-server-response")
        #expect(Self.identityEvents(peer).last?["type"] == .number("5"))
    }

    /// px-push on both backends: storescu gets -usr/-pwd, the native backend sends the sub-item itself.
    @Test(arguments: ["dcmtk", "native"]) func pushPresentsTheIdentity(backend: String) async throws {
        guard PeerHarness.requireTools(["storescu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-identity-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (peer, port) = try await Self.startCheckingPeer(work)
        defer { peer.kill() }

        let push = try await PeerHarness.run(
            "px-push",
            [
                "PYSCP@127.0.0.1:\(port)", Self.sample, "--user", "alice", "--password", "s3cret", "--backend", backend,
                "--log-level", "debug",
            ])
        #expect(push.exitCode == 0, "\(push.stdout) \(push.stderr)")
        #expect(push.json?["backend"]?.stringValue == backend)
        #expect(peer.events.contains { $0["event"]?.stringValue == "stored" }, "\(peer.log)")
        // Not in the envelope, not in the debug log (storescu's arguments are logged redacted).
        #expect(!push.stdout.contains("s3cret") && !push.stderr.contains("s3cret"))

        let wrong = try await PeerHarness.run(
            "px-push",
            ["PYSCP@127.0.0.1:\(port)", Self.sample, "--user", "alice", "--password", "bad", "--backend", backend])
        #expect(wrong.exitCode == 1, "\(wrong.stdout)")
        #expect(wrong.json?["error"]?["code"]?.stringValue == "associationRejected", "\(wrong.stdout)")
        #expect(Self.identityEvents(peer).map { $0["accepted"] } == [.bool(true), .bool(false)], "\(peer.log)")
    }

    /// px-listen --require-user with a file made by --hash-password: storescu presenting alice/s3cret is
    /// accepted and named in associationOpened, a wrong password and no identity are rejected (permanent,
    /// service user), and an accepted identity that asks for a positive response gets one.
    @Test func listenerRequiresUser() async throws {
        guard PeerHarness.requireTools(["storescu", "echoscu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-identity-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let hashed = try await PeerHarness.run(
            "px-listen", ["--hash-password", "alice"], environment: ["PX_PASSWORD": "s3cret"])
        #expect(hashed.exitCode == 0, "\(hashed.stdout) \(hashed.stderr)")
        let line = hashed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(line.hasPrefix("alice:sha256:") && !line.contains("s3cret"))
        let users = work + "/users.txt"
        try (line + "\n").write(toFile: users, atomically: true, encoding: .utf8)

        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work, extra: ["--require-user", users])
        defer { listener.process.kill() }
        let peer = ["-aec", "PXLISTEN", "127.0.0.1", String(listener.port)]

        let accepted = try await Self.dcmtk(
            "storescu", ["--user", "alice", "--password", "s3cret"] + peer + [Self.sample])
        #expect(accepted.exitCode == 0, "\(accepted.stderr)")
        let opened = try await listener.process.waitForEvent { $0["event"]?.stringValue == "associationOpened" }
        #expect(opened["userIdentity"]?["username"]?.stringValue == "alice")
        #expect(opened["userIdentity"]?["type"]?.stringValue == "usernameAndPasscode")
        _ = try await listener.process.waitForEvent { $0["event"]?.stringValue == "instanceReceived" }

        let wrong = try await Self.dcmtk(
            "storescu", ["--user", "alice", "--password", "wrong"] + peer + [Self.sample])
        #expect(wrong.exitCode != 0)
        #expect(wrong.stderr.contains("Rejected Permanent, Source: Service User"), "\(wrong.stderr)")
        let anonymous = try await Self.dcmtk("echoscu", peer)
        #expect(anonymous.exitCode != 0)
        #expect(anonymous.stderr.contains("Rejected Permanent"), "\(anonymous.stderr)")

        let echo = try await PeerHarness.run(
            "px-echo", ["PXLISTEN@127.0.0.1:\(listener.port)", "--user", "alice", "--pos-response"],
            environment: ["PX_PASSWORD": "s3cret"])
        #expect(echo.exitCode == 0, "\(echo.stdout)")
        #expect(echo.json?["data"]?["userIdentity"]?["positiveResponseReceived"] == .bool(true))
        // Only the two accepted associations were opened.
        let openedCount = await listener.process.waitFor {
            listener.process.events.filter { $0["event"]?.stringValue == "associationOpened" }.count == 2
        }
        #expect(openedCount, "\(listener.process.log)")
    }
}

/// SIGINT or SIGTERM during a retrieve: C-CANCEL-RQ on the association (PS3.7 §9.3.2.3, §9.3.3.3), the final
/// response awaited, what completed reported, exit 128+signal.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct RetrieveCancelTests {
    /// 8 instances of one study (make-qr-corpus.py --ct-bench 8) and its StudyInstanceUID.
    static func corpus(_ work: String) async throws -> (folder: String, study: String) {
        let folder = work + "/corpus"
        let made = try await PeerHarness.run(
            TestSupport.python, [TestSupport.repositoryRoot + "/scripts/make-qr-corpus.py", "--ct-bench", "8", folder])
        try #require(made.exitCode == 0, "make-qr-corpus.py failed: \(made.stderr)")
        let first = try #require(
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted().first { $0.hasSuffix(".dcm") })
        let study = try #require(try Part10File(contentsOf: folder + "/" + first).dataSet.string(.studyInstanceUID))
        return (folder, study)
    }

    /// Runs `command` against a peer that waits 1 s before each sub-operation, sends `signal` once the peer has
    /// started its third, and returns px's exit status, its envelope and the peer.
    static func interrupt(
        _ command: String, _ arguments: [String], signal: Int32, work: String, peerExtra: [String]
    ) async throws -> (status: Int32, envelope: JSONValue?, peer: PeerProcess) {
        let (folder, study) = try await corpus(work)
        let (peer, port) = try await PeerHarness.startPythonPeer(
            "pynetdicom-qr-scp.py", [folder, "--sub-operation-delay", "1"] + peerExtra, log: work + "/qr.log")
        let px = try PeerProcess(
            TestSupport.binDirectory + "/" + command,
            ["PYQR@127.0.0.1:\(port)", "--StudyInstanceUID", study] + arguments,
            logFile: work + "/px.out", errorFile: work + "/px.err")
        defer { px.kill() }
        _ = try await peer.waitForEvent(timeout: 60) {
            $0["event"]?.stringValue == "subOperation" && ($0["index"]?.intValue ?? 0) >= 2
        }
        #expect(px.send(signal: signal))
        let status = await px.waitForExit()
        let out = String(decoding: FileManager.default.contents(atPath: work + "/px.out") ?? Data(), as: UTF8.self)
        let envelope = try? JSONParser.parse(out.split(separator: "\n").last.map(String.init) ?? "")
        return (status, envelope, peer)
    }

    @Test(arguments: [SIGINT, SIGTERM]) func moveSendsCancel(signal: Int32) async throws {
        guard PeerHarness.requireTools(["storescp"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cancel-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let storePort = try TestSupport.freePort()
        try FileManager.default.createDirectory(atPath: work + "/moved", withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", "DEST", "-od", work + "/moved", String(storePort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: storePort, aeTitle: "DEST")

        let (status, envelope, peer) = try await Self.interrupt(
            "px-move", ["--destination", "DEST", "--backend", "native"], signal: signal, work: work,
            peerExtra: ["--dest", "DEST=127.0.0.1:\(storePort)"])
        defer { peer.kill() }
        #expect(status == 128 + signal, "\(String(describing: envelope))")
        // The peer saw the C-CANCEL-RQ and stopped sending.
        let cancelled = peer.events.first { $0["event"]?.stringValue == "cancelled" }
        #expect(cancelled != nil, "\(peer.log)")
        let sent = cancelled?["sent"]?.intValue ?? -1
        #expect((2..<8).contains(sent), "\(peer.log)")
        #expect(envelope?["error"]?["code"]?.stringValue == "interrupted")
        #expect(envelope?["data"]?["completed"]?.intValue == sent, "\(String(describing: envelope))")
        #expect(envelope?["data"]?["moves"]?.arrayValue?.first?["dimseStatus"]?["name"]?.stringValue == "Cancel")
    }

    @Test func getSendsCancel() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cancel-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (status, envelope, peer) = try await Self.interrupt(
            "px-get", ["-d", work + "/got", "--backend", "native"], signal: SIGINT, work: work, peerExtra: [])
        defer { peer.kill() }
        #expect(status == 130, "\(String(describing: envelope))")
        let sent = peer.events.first { $0["event"]?.stringValue == "cancelled" }?["sent"]?.intValue ?? -1
        #expect((2..<8).contains(sent), "\(peer.log)")
        #expect(envelope?["error"]?["code"]?.stringValue == "interrupted")
        #expect(envelope?["data"]?["completed"]?.intValue == sent, "\(String(describing: envelope))")
        #expect(try RetrieveSessionTests.stored(work + "/got").count == sent)
    }

    /// The DCMTK backend forwards the signal to movescu (3.6.7 ends on it without a C-CANCEL) and still
    /// reports the run as interrupted, with the exit status of the signal.
    @Test func dcmtkMoveForwardsTheSignal() async throws {
        guard PeerHarness.requireTools(["storescp", "movescu"]) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-cancel-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let storePort = try TestSupport.freePort()
        try FileManager.default.createDirectory(atPath: work + "/moved", withIntermediateDirectories: true)
        let storescp = try PeerProcess(
            "storescp", ["-aet", "DEST", "-od", work + "/moved", String(storePort)], logFile: work + "/storescp.log")
        defer { storescp.kill() }
        try await PushGetCommandTests.waitForEcho(port: storePort, aeTitle: "DEST")
        let (status, envelope, peer) = try await Self.interrupt(
            "px-move", ["--destination", "DEST", "--backend", "dcmtk"], signal: SIGINT, work: work,
            peerExtra: ["--dest", "DEST=127.0.0.1:\(storePort)"])
        defer { peer.kill() }
        #expect(status == 130, "\(String(describing: envelope))")
        #expect(envelope?["backend"]?.stringValue == "dcmtk")
        #expect(envelope?["error"]?["code"]?.stringValue == "interrupted")
        #expect(
            envelope?["data"]?["targets"]?.arrayValue?.first?["error"]?["message"]?.stringValue?.contains("movescu")
                == true)
    }
}
