import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore
import PXTestSupport
import Testing

/// Helpers of the network tests: loggers, servers on port 0, the corpus, data set comparisons.
extension TestSupport {
    /// A logger at the level of `PX_TEST_LOG` (default: error).
    static func logger(_ label: String = "px.test") -> Logger {
        var logger = Logger(label: label)
        let level = ProcessInfo.processInfo.environment["PX_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        logger.logLevel = level
        return logger
    }

    /// Runs a ``DICOMServer`` on 127.0.0.1, port 0, for the duration of `body`.
    static func withServer<R: Sendable>(
        aeTitle: String = "PXSCP",
        storage: (any StorageDelegate)? = nil,
        directory: String,
        configure: (inout DICOMServer.Configuration) -> Void = { _ in },
        _ body: @Sendable (DICOMServer) async throws -> R
    ) async throws -> R {
        var configuration = DICOMServer.Configuration(
            host: "127.0.0.1", port: 0, aeTitle: aeTitle, temporaryDirectory: directory)
        configure(&configuration)
        let server = try await DICOMServer.bind(
            configuration: configuration,
            storage: storage ?? DirectoryStorage(directory: directory),
            logger: logger("px.test.server")
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await server.run() }
            defer { group.cancelAll() }
            return try await body(server)
        }
    }

    /// Generates the small test corpus (scripts/make-corpus.sh) into `directory`; returns the .dcm paths.
    static func makeCorpus(in directory: String) async throws -> [String] {
        let result = try await run(
            "bash", [repositoryRoot + "/scripts/make-corpus.sh", directory], environment: ["PX_VENV": venv])
        #expect(result.status == 0, "make-corpus.sh: \(result.output)")
        return dicomFiles(in: directory)
    }

    /// Every regular file below `directory` that reads as Part 10.
    static func dicomFiles(in directory: String) -> [String] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var files: [String] = []
        for case let relative as String in enumerator {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            do {
                _ = try Part10File.readHeader(contentsOf: path)
                files.append(path)
            } catch {
                continue
            }
        }
        return files.sorted()
    }

    /// Expects every one of `files` among the Part 10 files below `directory` (matched by SOP Instance UID)
    /// with a byte-identical data set.
    static func expectIdenticalDataSets(_ files: [String], receivedIn directory: String) throws {
        var receivedByUID: [String: String] = [:]
        for path in dicomFiles(in: directory) {
            receivedByUID[try Part10File(contentsOf: path).dataSet.string(.sopInstanceUID) ?? ""] = path
        }
        for file in files {
            let uid = try Part10File(contentsOf: file).dataSet.string(.sopInstanceUID) ?? ""
            let copy = try #require(receivedByUID[uid], "\(file) not received")
            #expect(try dataSetBytes(copy) == dataSetBytes(file), "\(file)")
        }
    }

    /// The data set of a Part 10 file as DICOM JSON, for byte-identity comparisons.
    static func dataSetJSON(_ path: String) throws -> String {
        let file = try Part10File(contentsOf: path)
        return file.dataSet.dicomJSON().serialized()
    }

    /// The bytes of a Part 10 file after its meta information group (the data set as encoded).
    static func dataSetBytes(_ path: String) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // Preamble (128) + "DICM" + (0002,0000) UL element (12 bytes) whose value is the rest of the group.
        let groupLength = Int(bytes[140]) | Int(bytes[141]) << 8 | Int(bytes[142]) << 16 | Int(bytes[143]) << 24
        return Array(bytes[(144 + groupLength)...])
    }
}
