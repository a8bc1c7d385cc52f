import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore

/// Network measurements (not tests): `px-net-bench echo N HOST PORT AET` runs N sequential C-ECHO
/// associations; `px-net-bench find N HOST PORT AET STUDY SERIES` runs N sequential Study Root C-FIND
/// associations at image level (SOPInstanceUID and InstanceNumber returned), decoding every identifier;
/// `px-net-bench listen PORT DIR [SECONDS]` runs a DICOMServer storing into DIR;
/// `px-net-bench push HOST PORT AET FILES...` stores files on one association.
///
/// echo and find print the median milliseconds of one association in this process (no process start,
/// no command line, no JSON): what px-echo and px-find cost beyond start-up and output
/// (scripts/bench-commands.sh).
@main
struct PXNetBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        var logger = Logger(label: "px-net-bench")
        logger.logLevel = .error
        switch arguments.dropFirst().first {
        case "echo":
            let count = Int(arguments[2]) ?? 50
            let peer = DICOMPeer(host: arguments[3], port: Int(arguments[4]) ?? 104, aeTitle: arguments[5])
            let client = DICOMClient(configuration: .init(callingAETitle: "PXBENCH"), logger: logger)
            let median = try await Self.medianMilliseconds(count) {
                let status = try await client.echo(peer)
                guard status == .success else { throw DICOMNetworkError.operationFailed("C-ECHO", status: status) }
            }
            print("echo associations=\(count) median_ms=\(median)")
        case "find":
            let count = Int(arguments[2]) ?? 50
            let peer = DICOMPeer(host: arguments[3], port: Int(arguments[4]) ?? 104, aeTitle: arguments[5])
            var identifier = DataSet()
            identifier.set(.studyInstanceUID, vr: .UI, string: arguments[6])
            identifier.set(.seriesInstanceUID, vr: .UI, string: arguments[7])
            identifier.set(.sopInstanceUID, vr: .UI, string: "")
            identifier.set(.instanceNumber, vr: .IS, string: "")
            let client = DICOMClient(configuration: .init(callingAETitle: "PXBENCH"), logger: logger)
            let sopClass = QueryRetrieveModel.studyRoot.findSOPClass
            var matches = 0
            let median = try await Self.medianMilliseconds(count) {
                matches = try await Self.find(identifier, sopClass: sopClass, client: client, peer: peer)
            }
            print("find associations=\(count) matches=\(matches) median_ms=\(median)")
        case "listen":
            let port = Int(arguments[2]) ?? 11112
            let configuration = DICOMServer.Configuration(
                host: "127.0.0.1", port: port, aeTitle: "PXSCP", temporaryDirectory: arguments[3])
            let server = try await DICOMServer.bind(
                configuration: configuration, storage: DirectoryStorage(directory: arguments[3]), logger: logger)
            print("listening \(server.localPort)")
            try await server.run()
        case "push":
            let peer = DICOMPeer(host: arguments[2], port: Int(arguments[3]) ?? 104, aeTitle: arguments[4])
            let files = Array(arguments.dropFirst(5))
            let client = DICOMClient(configuration: .init(callingAETitle: "PXBENCH"), logger: logger)
            let clock = ContinuousClock()
            let start = clock.now
            let results = try await client.store(files: files, to: peer)
            let elapsed = clock.now - start
            print("push files=\(files.count) ok=\(results.filter(\.succeeded).count) seconds=\(Self.seconds(elapsed))")
        default:
            print(
                "usage: px-net-bench echo N HOST PORT AET | find N HOST PORT AET STUDY SERIES | listen PORT DIR"
                    + " | push HOST PORT AET FILES...")
        }
    }

    /// One C-FIND association; the number of matches, each identifier decoded.
    nonisolated static func find(_ identifier: DataSet, sopClass: String, client: DICOMClient, peer: DICOMPeer)
        async throws -> Int
    {
        try await client.withAssociation(to: peer, proposing: [.find(sopClass: sopClass)]) { association in
            var found = 0
            for try await response in try await association.find(identifier, model: .studyRoot, level: .image)
            where response.status.isPending && response.identifier != nil {
                found += 1
            }
            return found
        }
    }

    /// Runs `body` `count` times in sequence; the median duration in milliseconds.
    static func medianMilliseconds(
        _ count: Int, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void
    ) async throws -> Double {
        let clock = ContinuousClock()
        var samples: [Double] = []
        for _ in 0..<max(count, 1) {
            let start = clock.now
            try await body()
            samples.append(Self.seconds(clock.now - start) * 1e3)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
