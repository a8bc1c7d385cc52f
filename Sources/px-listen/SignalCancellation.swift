import Dispatch

#if canImport(Glibc)
import Glibc
#endif

/// Runs `body` until it ends or SIGINT/SIGTERM arrives, which cancels it (the receiver's child
/// process is then killed and its staging directory removed).
func withSignalCancellation(_ body: @escaping @Sendable () async throws -> Void) async throws {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let task = Task { try await body() }
    let sources = [SIGINT, SIGTERM].map { sig in
        let source = DispatchSource.makeSignalSource(signal: sig)
        source.setEventHandler { task.cancel() }
        source.resume()
        return source
    }
    defer { sources.forEach { $0.cancel() } }
    try await task.value
}
