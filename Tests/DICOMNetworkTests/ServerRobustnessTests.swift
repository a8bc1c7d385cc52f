import DICOMNetwork
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// Hostile and silent peers against ``DICOMServer``, driven by raw sockets (python3).
@Suite("DICOMServer robustness", .serialized, .timeLimit(.minutes(10)))
struct ServerRobustnessTests {
    /// Sends `payload` (hex) and prints what comes back (hex) until the server closes, and the elapsed seconds.
    /// Each read waits up to 30 s: the server runs in the test process, and while every suite starts at once on
    /// 2 cores its tasks waited over 10 s for a thread once (the reply, not its latency, is what is asserted).
    static func exchange(port: Int, payloadHex: String) async throws -> (reply: String, seconds: Double) {
        let script = """
            import socket, sys, time
            s = socket.create_connection(("127.0.0.1", \(port)))
            s.settimeout(30)
            t = time.time()
            s.sendall(bytes.fromhex("\(payloadHex)"))
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            print(data.hex(), round(time.time() - t, 3))
            """
        let result = try await TestSupport.run("python3", ["-c", script])
        #expect(result.status == 0, "\(result.output)")
        let parts = result.output.trimmingCharacters(in: .newlines).split(
            separator: " ", omittingEmptySubsequences: false)
        return (String(parts.first ?? ""), Double(parts.last ?? "") ?? -1)
    }

    @Test(
        "an unknown PDU type is answered with an A-ABORT and the connection is closed", .tags(.integration),
        .integrationTier)
    func garbage() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let (reply, _) = try await Self.exchange(port: server.localPort, payloadHex: "0900000000046162636465")
                #expect(reply.hasPrefix("0700000000040000"), "\(reply)")
            }
        }
    }

    @Test(
        "an announced length above the cap ends in an A-ABORT, not an allocation", .tags(.integration), .integrationTier
    )
    func oversized() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let (reply, seconds) = try await Self.exchange(port: server.localPort, payloadHex: "0100fffffff0")
                #expect(reply.hasPrefix("07000000000400"), "\(reply)")
                // Well below the 30 s default timeouts, so the abort is the cap's and not a timer's; the margin
                // is for a test process whose threads wait behind every other suite on 2 cores.
                #expect(seconds < 15, "aborted after \(seconds) s")
            }
        }
    }

    @Test("a silent client is closed after the ARTIM timeout", .tags(.integration), .integrationTier)
    func silent() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir, configure: { $0.artimTimeout = .milliseconds(500) }) {
                server in
                let (reply, seconds) = try await Self.exchange(port: server.localPort, payloadHex: "")
                #expect(reply.isEmpty)
                // Not before the 500 ms timer, and well below the 30 s defaults (so it is this timer that closed
                // it); the upper margin is for a test process that shares 2 cores with every other suite.
                #expect(seconds >= 0.4 && seconds < 15, "closed after \(seconds) s")
            }
        }
    }
}
