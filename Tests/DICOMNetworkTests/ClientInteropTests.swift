import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

/// ``DICOMClient`` against DCMTK's storescp and dcmqrscp on 127.0.0.1.
@Suite(
    "DICOMClient with DCMTK servers", .tags(.integration), .integrationTier, .serialized,
    // make-corpus.sh needs the DCMTK tools after the peer itself, and python3 (also the silent peer below).
    .requires("echoscu", "storescp", "dump2dcm", "dcmodify", "dcmcjpeg", "dcmcrle", "dcmftest", "dcmdump", "python3"),
    .timeLimit(.minutes(10))
)
struct ClientInteropTests {
    static func client(_ aet: String = "PXSCU", dimseTimeout: TimeAmount = .seconds(20)) -> DICOMClient {
        DICOMClient(
            configuration: .init(
                callingAETitle: aet, connectTimeout: .seconds(3), acseTimeout: .seconds(5), dimseTimeout: dimseTimeout),
            logger: TestSupport.logger("px.test.client")
        )
    }

    /// Runs storescp on a free port for the duration of `body`.
    static func withStorescp<R>(directory: String, _ body: (Int) async throws -> R) async throws -> R {
        let port = try TestSupport.freePort()
        let storescp = try PeerProcess(
            "storescp", ["-aet", "STORESCP", "-od", directory, "--accept-all", "+B", "\(port)"],
            logFile: directory + "/../storescp.log")
        defer { storescp.kill() }
        try await TestSupport.waitForPort(port)
        return try await body(port)
    }

    @Test("C-ECHO against storescp")
    func echo() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await Self.withStorescp(directory: dir) { port in
                let status = try await Self.client().echo(DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "STORESCP"))
                #expect(status == .success)
            }
        }
    }

    @Test("C-STORE to storescp: every file arrives with an identical data set")
    func store() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let corpus = dir + "/corpus"
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            let files = try await TestSupport.makeCorpus(in: corpus).filter {
                $0.hasSuffix("-explicit-le.dcm") || $0.hasSuffix("-implicit-le.dcm") || $0.contains("-jpeg-")
            }
            try #require(files.count > 10)
            let results = try await Self.withStorescp(directory: received) { port in
                try await Self.client().store(
                    files: files, to: DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "STORESCP"))
            }
            #expect(results.count == files.count)
            for result in results {
                #expect(result.status == .success, "\(result.path): \(result.error ?? "")")
            }
            try TestSupport.expectIdenticalDataSets(files, receivedIn: received)
        }
    }

    @Test("connection refused is a typed error")
    func refused() async throws {
        let held = try TestSupport.holdPort()
        defer { held.release() }
        let port = held.port
        await #expect {
            _ = try await Self.client().echo(DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "NOBODY"))
        } throws: { ($0 as? DICOMNetworkError)?.code == .connectionRefused }
    }

    @Test("a rejected association carries result, source and reason")
    func rejected() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                await #expect {
                    _ = try await Self.client().echo(
                        DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "WRONG"))
                } throws: { error in
                    guard let error = error as? DICOMNetworkError, error.code == .associationRejected else {
                        return false
                    }
                    return error.rejection?.reason == .calledAETitleNotRecognized
                        && error.rejection?.source == .serviceUser
                        && error.rejection?.result == .rejectedPermanent
                }
            }
        }
    }

    @Test("a peer that never answers the A-ASSOCIATE-RQ ends in an ACSE timeout")
    func acseTimeout() async throws {
        // A listening socket that accepts but never reads: nc -l.
        let port = try TestSupport.freePort()
        let silent = try PeerProcess(
            "python3",
            [
                "-c",
                "import socket,time\ns=socket.socket()\ns.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\ns.bind(('127.0.0.1', \(port)))\ns.listen()\nc=s.accept()\ntime.sleep(30)",
            ], logFile: NSTemporaryDirectory() + "/px-silent-\(port).log")
        defer { silent.kill() }
        try await TestSupport.waitForPort(port)
        let client = DICOMClient(
            configuration: .init(callingAETitle: "PXSCU", connectTimeout: .seconds(3), acseTimeout: .milliseconds(500)),
            logger: TestSupport.logger()
        )
        await #expect {
            _ = try await client.echo(DICOMPeer(host: "127.0.0.1", port: port, aeTitle: "SILENT"))
        } throws: { ($0 as? DICOMNetworkError)?.code == .acseTimeout }
    }

    @Test("a compressed file is not sent on an uncompressed context another file of its SOP class got accepted")
    func compressedFileNeedsItsOwnSyntax() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let corpus = try await TestSupport.makeCorpus(in: dir + "/corpus")
            let native = try #require(corpus.first { $0.hasSuffix("/image-mono16-explicit-le.dcm") })
            let jpeg = try #require(corpus.first { $0.hasSuffix("/image-mono16-jpeg-lossless-sv1.dcm") })
            let ct = try StorableFile(readingHeaderOf: native).sopClassUID
            let received = dir + "/received"
            try FileManager.default.createDirectory(atPath: received, withIntermediateDirectories: true)
            // The acceptor takes CT in Explicit VR Little Endian only: the JPEG file's own context is refused.
            let results = try await TestSupport.withServer(
                directory: received,
                configure: { $0.supportedAbstractSyntaxes = [ct: [WellKnownUID.explicitVRLittleEndian]] }
            ) { server in
                try await Self.client().store(
                    files: [native, jpeg], to: DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP"))
            }
            #expect(results[0].status == .success)
            #expect(results[1].status == nil)
            #expect(results[1].error?.hasPrefix("no accepted presentation context") == true, "\(results[1])")
            #expect(TestSupport.dicomFiles(in: received).count == 1)
        }
    }

    @Test("echo against our own server")
    func echoOwnServer() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let status = try await Self.client().echo(
                    DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP"))
                #expect(status == .success)
            }
        }
    }
}
