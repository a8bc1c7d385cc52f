import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import Logging
import NIOCore
import Testing

/// Helpers for the interop tests: loggers, temporary directories, DCMTK processes, servers on port 0.
enum TestSupport {
    /// A logger at the level of `PX_TEST_LOG` (default: error).
    static func logger(_ label: String = "px.test") -> Logger {
        var logger = Logger(label: label)
        let level = ProcessInfo.processInfo.environment["PX_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
        logger.logLevel = level
        return logger
    }

    /// A new empty directory, removed by `body`'s end.
    @discardableResult
    static func withTemporaryDirectory<R>(_ body: (String) async throws -> R) async throws -> R {
        let path = NSTemporaryDirectory() + "px-net-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer {
            do { try FileManager.default.removeItem(atPath: path) } catch { Issue.record("cannot remove \(path): \(error)") }
        }
        return try await body(path)
    }

    /// The result of a finished process.
    struct ProcessResult: Sendable {
        var status: Int32
        /// Stdout and stderr together, or stdout alone when stderr was kept apart.
        var output: String
        /// Stderr, when it was kept apart from stdout.
        var errorOutput: String = ""
    }

    /// Runs a tool to completion with `TCP_NODELAY=1`; output is stdout and stderr together, unless
    /// `separateErrorOutput` keeps stderr apart (for tools that print JSON on stdout).
    ///
    /// Never blocks a thread of the cooperative pool (it has as many threads as cores, and the server under
    /// test needs them): output goes to a file and the exit is awaited by polling `waitpid`.
    static func run(
        _ tool: String, _ arguments: [String], environment: [String: String] = [:], separateErrorOutput: Bool = false
    ) async throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [tool] + arguments
        var env = ProcessInfo.processInfo.environment
        env["TCP_NODELAY"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let logPath = NSTemporaryDirectory() + "px-run-" + UUID().uuidString + ".log"
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        defer {
            do { try FileManager.default.removeItem(atPath: logPath) } catch { Issue.record("cannot remove \(logPath)") }
        }
        let errorPath = logPath + ".err"
        if separateErrorOutput { _ = FileManager.default.createFile(atPath: errorPath, contents: nil) }
        defer {
            if separateErrorOutput {
                do { try FileManager.default.removeItem(atPath: errorPath) } catch { Issue.record("cannot remove \(errorPath)") }
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let errorHandle = separateErrorOutput ? try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath)) : handle
        process.standardOutput = handle
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Poll with waitpid(WNOHANG): Foundation's own child monitor did not always notice the exit of a
        // script that leaves a daemon behind (dcmqrscp-start.sh), leaving a zombie and a hung test.
        let pid = process.processIdentifier
        var status: Int32 = -1
        while true {
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
                break
            }
            if reaped < 0 && !process.isRunning {
                status = process.terminationStatus  // Foundation reaped it first.
                break
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        try handle.close()
        let output = try String(contentsOfFile: logPath, encoding: .utf8)
        guard separateErrorOutput else { return ProcessResult(status: status, output: output) }
        try errorHandle.close()
        return ProcessResult(status: status, output: output, errorOutput: try String(contentsOfFile: errorPath, encoding: .utf8))
    }

    /// A background process, terminated by `stop()`.
    final class Background: Sendable {
        let process: Process
        init(_ tool: String, _ arguments: [String], logFile: String) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [tool] + arguments
            var env = ProcessInfo.processInfo.environment
            env["TCP_NODELAY"] = "1"
            process.environment = env
            _ = FileManager.default.createFile(atPath: logFile, contents: nil)
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: logFile))
            process.standardOutput = handle
            process.standardError = handle
            try process.run()
            self.process = process
        }
        func stop() {
            // SIGKILL: storescp ignores SIGTERM while it waits in accept().
            if self.process.isRunning {
                kill(self.process.processIdentifier, SIGKILL)
                self.process.waitUntilExit()
            }
        }
    }

    /// A free TCP port on 127.0.0.1 (bind to 0, read, close).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        #expect(bound == 0)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts TCP connections on the port (max ~10 s).
    static func waitForPort(_ port: Int) async throws {
        for _ in 0..<200 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            close(fd)
            if result == 0 { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("nothing listens on port \(port)")
    }

    /// Runs a ``DICOMServer`` on 127.0.0.1, port 0, for the duration of `body`.
    static func withServer<R: Sendable>(
        aeTitle: String = "PXSCP",
        storage: (any StorageDelegate)? = nil,
        directory: String,
        configure: (inout DICOMServer.Configuration) -> Void = { _ in },
        _ body: @Sendable (DICOMServer) async throws -> R
    ) async throws -> R {
        var configuration = DICOMServer.Configuration(host: "127.0.0.1", port: 0, aeTitle: aeTitle, temporaryDirectory: directory)
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

    /// The repository root (for scripts/).
    static var repositoryRoot: String {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }

    /// The test venv made by scripts/setup-test-env.sh: `$PX_VENV`, else `.venv` in this checkout.
    static var venv: String {
        ProcessInfo.processInfo.environment["PX_VENV"] ?? repositoryRoot + "/.venv"
    }

    /// Python with pydicom and pynetdicom, for the corpus scripts and the pynetdicom peers.
    static var python: String { venv + "/bin/python" }

    /// Generates the small test corpus (scripts/make-corpus.sh) into `directory`; returns the .dcm paths.
    static func makeCorpus(in directory: String) async throws -> [String] {
        let result = try await run("bash", [repositoryRoot + "/scripts/make-corpus.sh", directory], environment: ["PX_VENV": venv])
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
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
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
