import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore

/// Network measurements (not tests): `px-net-bench echo N HOST PORT AET` runs N sequential C-ECHO
/// associations; `px-net-bench listen PORT DIR [SECONDS]` runs a DICOMServer storing into DIR;
/// `px-net-bench push HOST PORT AET FILES...` stores files on one association.
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
            let clock = ContinuousClock()
            let start = clock.now
            for _ in 0..<count {
                let status = try await client.echo(peer)
                guard status == .success else { throw DICOMNetworkError.operationFailed("C-ECHO", status: status) }
            }
            let elapsed = clock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("echo associations=\(count) seconds=\(seconds) rate=\(Double(count) / seconds)/s")
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
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            print("push files=\(files.count) ok=\(results.filter(\.succeeded).count) seconds=\(seconds)")
        default:
            print("usage: px-net-bench echo N HOST PORT AET | listen PORT DIR | push HOST PORT AET FILES...")
        }
    }
}
