import DICOMData
import Foundation
import PXTestSupport
import Testing

/// The refusals px-listen reports the same on both backends (issue 36: "every refusal is an event and a log
/// line"): the dcmtk backend reads them from storescp's log. The same peer against each backend gives the same
/// `associationRejected` event, the peer's address included (storescp runs with -dhl), and a warning on stderr.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct ListenerRefusalTests {
    static let tools = ["storescu", "echoscu", "findscu", "dcmdump"]

    /// The members of an `associationRejected` event both backends must agree on.
    static func facts(_ event: JSONValue?) -> [String: String] {
        var out: [String: String] = [:]
        for key in ["callingAETitle", "calledAETitle", "result", "source", "reason"] {
            out[key] = event?[key]?.stringValue ?? "(missing)"
        }
        out["peerHost"] = event?["peerHost"]?.stringValue ?? "(missing)"
        return out
    }

    /// Runs `peer` against a fresh px-listen on `backend`; returns its `associationRejected` events (waiting for
    /// `expected` of them), the peer's run, and px-listen's stderr.
    static func refusals(
        backend: String, expected: Int = 1, _ peer: (Int) async throws -> PeerHarness.Run
    ) async throws -> (events: [JSONValue], peer: PeerHarness.Run, stderr: String) {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(backend: backend, root: work + "/root", work: work)
        let run = try await peer(listener.port)
        let arrived = await listener.waitFor(seconds: 20) {
            $0.filter { $0["event"]?.stringValue == "associationRejected" }.count >= expected
        }
        // The association that was refused ends (its associationClosed, if it was accepted) before px-listen stops.
        _ = await listener.waitFor(seconds: 5) { events in
            let names = events.compactMap { $0["event"]?.stringValue }
            return names.filter { $0 == "associationOpened" }.count == names.filter { $0 == "associationClosed" }.count
        }
        #expect(arrived, "\(backend): \(listener.events()) \(listener.stderr())")
        _ = await listener.stop()
        return (listener.events("associationRejected"), run, listener.stderr())
    }

    /// findscu proposes only Study Root C-FIND, which px-listen does not serve: both backends accept the
    /// association with no presentation context (as DCMTK does; findscu then says "No Acceptable Presentation
    /// Contexts") and report it as a refusal, between the association's opened and closed events.
    /// Before: neither backend reported anything but the association opening and closing.
    @Test func noPresentationContextIsARefusalOnBothBackends() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        var seen: [String: [String: String]] = [:]
        for backend in ["native", "dcmtk"] {
            let (events, run, stderr) = try await Self.refusals(backend: backend) { port in
                try await PeerHarness.runAsync(
                    "/usr/bin/findscu",
                    [
                        "-S", "-aet", "FINDER", "-aec", "PXLISTEN", "-k", "QueryRetrieveLevel=STUDY", "127.0.0.1",
                        String(port),
                    ])
            }
            #expect(run.exitCode != 0, "\(backend): \(run.stderr)")
            #expect(run.stderr.contains("No Acceptable Presentation Contexts"), "\(backend): \(run.stderr)")
            #expect(events.count == 1, "\(backend): \(events)")
            let facts = Self.facts(events.first)
            #expect(
                facts == [
                    "callingAETitle": "FINDER", "calledAETitle": "PXLISTEN", "result": "Accepted",
                    "source": "Service User", "reason": "No Presentation Context Accepted", "peerHost": "127.0.0.1",
                ], "\(backend): \(events)")
            #expect(
                stderr.contains("no presentation context") || stderr.contains("association rejected"),
                "\(backend): \(stderr)")
            seen[backend] = facts
        }
        #expect(seen["native"] == seen["dcmtk"], "\(seen)")
    }

    /// pynetdicom proposing an application context other than DICOM's (PS3.7 Annex A.2.1): both backends send an
    /// A-ASSOCIATE-RJ (rejected permanent, service user, application context name not supported) and report the
    /// same event. Before: the dcmtk backend reported nothing.
    @Test func foreignApplicationContextIsRejectedOnBothBackends() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let script = """
            import sys
            from pynetdicom import AE, acse
            acse.APPLICATION_CONTEXT_NAME = "1.2.3.4.5.6"
            ae = AE(ae_title="OTHERCTX")
            ae.add_requested_context("1.2.840.10008.1.1")
            assoc = ae.associate("127.0.0.1", int(sys.argv[1]), ae_title="PXLISTEN")
            print("rejected" if assoc.is_rejected else "accepted" if assoc.is_established else "aborted")
            if assoc.is_established:
                assoc.release()
            """
        var seen: [String: [String: String]] = [:]
        for backend in ["native", "dcmtk"] {
            let (events, run, _) = try await Self.refusals(backend: backend) { port in
                try await PeerHarness.runAsync(TestSupport.python, ["-c", script, String(port)])
            }
            // storescp closes the connection as soon as its A-ASSOCIATE-RJ is written; pynetdicom, loaded, can
            // take the closed transport before the RJ and call it aborted (1 of 3 fresh-clone CI runs). What px
            // owes is the event below, equal on both backends; the native receiver waits for the requestor to
            // close (PS3.8 Sta13), so there the requestor always reads the RJ.
            let sawRefusal = backend == "native" ? ["rejected"] : ["rejected", "aborted"]
            #expect(
                sawRefusal.contains(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)),
                "\(backend): \(run.stdout) \(run.stderr)")
            #expect(events.count == 1, "\(backend): \(events)")
            let facts = Self.facts(events.first)
            #expect(
                facts == [
                    "callingAETitle": "OTHERCTX", "calledAETitle": "PXLISTEN", "result": "Rejected Permanent",
                    "source": "Service User", "reason": "App Context Name Not Supported", "peerHost": "127.0.0.1",
                ], "\(backend): \(events)")
            seen[backend] = facts
        }
        #expect(seen["native"] == seen["dcmtk"], "\(seen)")
    }

    /// An A-ASSOCIATE-RQ of protocol version 2 (raw bytes): DCMTK's DUL and the native receiver both answer
    /// A-ASSOCIATE-RJ (rejected permanent, ACSE provider, protocol version not supported, PS3.8 §9.3.4) and report
    /// it with the same result, source and reason; storescp does not log the request's AE titles, so the dcmtk
    /// event has them null. Before: the dcmtk backend reported nothing.
    @Test func foreignProtocolVersionIsRejectedOnBothBackends() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let script = """
            import socket, struct, sys
            def ae(t): return t.encode().ljust(16, b" ")
            def item(kind, body): return struct.pack(">BBH", kind, 0, len(body)) + body
            app = item(0x10, b"1.2.840.10008.3.1.1.1")
            pc = item(0x20, bytes([1, 0, 0, 0]) + item(0x30, b"1.2.840.10008.1.1") + item(0x40, b"1.2.840.10008.1.2"))
            ui = item(0x50, item(0x51, struct.pack(">I", 16384)) + item(0x52, b"1.2.3.4"))
            body = struct.pack(">HH", 2, 0) + ae("PXLISTEN") + ae("BADVER") + bytes(32) + app + pc + ui
            s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
            s.sendall(struct.pack(">BBI", 1, 0, len(body)) + body)
            print(s.recv(10).hex())
            """
        var seen: [String: [String: String]] = [:]
        for backend in ["native", "dcmtk"] {
            let (events, run, _) = try await Self.refusals(backend: backend) { port in
                try await PeerHarness.runAsync(TestSupport.python, ["-c", script, String(port)])
            }
            // A-ASSOCIATE-RJ: type 3, length 4, result 1, source 2, reason 2.
            #expect(run.stdout.hasPrefix("03000000000400010202"), "\(backend): \(run.stdout) \(run.stderr)")
            #expect(events.count == 1, "\(backend): \(events)")
            var facts = Self.facts(events.first)
            #expect(
                facts["result"] == "Rejected Permanent" && facts["source"] == "Service Provider (ACSE Related)"
                    && facts["reason"] == "Protocol Version Not Supported", "\(backend): \(events)")
            facts["callingAETitle"] = nil
            facts["calledAETitle"] = nil
            seen[backend] = facts
        }
        #expect(seen["native"] == seen["dcmtk"], "\(seen)")
    }

    /// storescp's debug dump of an A-ASSOCIATE-RQ shows a username and password identity's password; px-listen's
    /// trace log (which carries storescp's lines) shows it redacted. Before, the password was in px's log twice.
    @Test func storescpDumpDoesNotLeakAPassword() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-it-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "dcmtk", root: work + "/root", work: work, extra: ["--log-level", "trace"])
        let corpus = try await ListenerFiles.makeCorpus(["many", "1", "1", work + "/corpus"])
        let run = try await ListenerFiles.storescu(
            listener.port, Array(corpus.prefix(1)), extra: ["--user", "alice", "--password", "s3cretPXpw"])
        #expect(run.exitCode == 0, "\(run.stderr)")
        #expect(await listener.waitFor(seconds: 20) { $0.contains { $0["event"]?.stringValue == "instanceReceived" } })
        _ = await listener.stop()
        let stderr = listener.stderr()
        #expect(stderr.contains("Password: [(redacted)]"), "\(stderr.suffix(2000))")
        #expect(!stderr.contains("s3cretPXpw"))
    }
}
