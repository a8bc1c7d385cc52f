import Foundation
import PXTestSupport

/// Runs the external programs the data-layer tests compare against (DCMTK, pydicom in the project's venv).
///
/// A missing program is a test failure that says how to install it, never a skip: CI installs every
/// one through `scripts/setup-test-env.sh`.
enum ExternalTool {
    struct Output {
        var status: Int32
        var stdout: Data
        var stderr: String
        var text: String { String(decoding: stdout, as: UTF8.self) }
    }

    struct Missing: Error, CustomStringConvertible {
        var tool: String
        var description: String {
            "\(tool) is not installed; run scripts/setup-test-env.sh (DCMTK, Orthanc and the Python venv)"
        }
    }

    /// The full path of a program (a path, or a name on PATH).
    static func locate(_ tool: String) throws -> String {
        guard let path = TestSupport.locate(tool) else { throw Missing(tool: tool) }
        return path
    }

    /// Runs a program to completion and collects its output.
    ///
    /// The blocking reads and the wait happen on a thread of their own: the test process shares a
    /// cooperative pool as wide as the machine (two threads in CI) with the network tests, whose peers
    /// time out when it is blocked.
    static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
        let path = try locate(tool)
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(path, arguments, environment: environment) })
            }.start()
        }
    }

    private static func runBlocking(_ path: String, _ arguments: [String], environment: [String: String]) throws
        -> Output
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["LC_ALL"] = "C"
        env["TCP_NODELAY"] = "1"
        for (k, v) in environment { env[k] = v }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a large output cannot block the child.
        let errData = Locked(Data())
        let errDone = DispatchSemaphore(value: 0)
        Thread {
            errData.set(err.fileHandleForReading.readDataToEndOfFile())
            errDone.signal()
        }.start()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errDone.wait()
        return Output(
            status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData.get(), as: UTF8.self))
    }
}

/// A value shared between threads under a lock.
final class Locked<T>: @unchecked Sendable {
    private var value: T
    private let lock = NSLock()
    init(_ value: T) { self.value = value }
    func get() -> T { lock.withLock { value } }
    func set(_ v: T) { lock.withLock { value = v } }
}
