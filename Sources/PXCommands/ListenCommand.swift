import ArgumentParser
import Logging
import PXCommandLine
import PXCore
import ServiceLifecycle
import UnixSignals

/// px-listen: the C-STORE receiver until SIGTERM/SIGINT, one NDJSON event per line on stdout, the
/// series-complete hook, then the envelope.
public enum ListenCommand {
    /// `px-listen --hash-password USER`: prints the `--require-user` line (``UserIdentityOptions/accountLine(username:)``);
    /// a usage error as the envelope.
    /// - Throws: `ExitCode` when it fails.
    public static func printAccountLine(username: String) throws {
        let output = CommandOutput(pretty: false)
        do {
            output.writeText(try UserIdentityOptions.accountLine(username: username) + "\n")
        } catch {
            throw ExitCode(output.finish(backend: "native", data: nil, error: error))
        }
    }

    public static func run(listen: ListenOptions, backend: BackendOptions, logging: LoggingOptions) async throws {
        MallocTuning.keepFreedBuffers()
        let logger = logging.makeLogger(label: "px-listen")
        let output = CommandOutput(pretty: false)
        let hooks = SeriesHookRunner(command: listen.onSeriesComplete, logger: logger)
        try await CommandRunner.run(
            output: output, backend: backend, executables: listen.executables,
            // Checking identities or the called AE title is the native receiver's: `auto` then runs it.
            // So is storage commitment (--commit-destination): storescp has none.
            userIdentity: listen.server.requireUser != nil || listen.strictCalledAET
                || !listen.server.commitDestinations.isEmpty, need: .receive
        ) { dicomBackend, _ in
            if !listen.server.commitDestinations.isEmpty && dicomBackend.name != "native" {
                return PXError.backendUnavailable(
                    dicomBackend.name,
                    reason: "storescp has no storage commitment: --commit-destination needs the native backend")
            }
            var failure: PXError?
            do {
                let service = ListenService(
                    backend: dicomBackend, configuration: try listen.configuration(), logger: logger
                ) {
                    event in
                    output.write(PXOutput.json(event), pretty: false)
                    if case .seriesComplete(let completion) = event { hooks.run(for: completion) }
                }
                let group = ServiceGroup(
                    configuration: ServiceGroupConfiguration(
                        services: [.init(service: service)], gracefulShutdownSignals: [.sigterm, .sigint],
                        logger: logger))
                try await group.run()
            } catch is CancellationError {
                failure = nil
            } catch {
                failure = error.asPXError
            }
            await hooks.waitForAll(upTo: max(listen.server.shutdownGrace, 1))
            return failure
        }
    }
}

/// px-listen's receiver as a swift-service-lifecycle `Service`: the `ServiceGroup` turns SIGTERM/SIGINT
/// into a graceful shutdown, which cancels the backend's `listen` (stop accepting, grace, abort).
struct ListenService: Service {
    let backend: any Receiving
    let configuration: ListenConfiguration
    let logger: Logger
    let onEvent: @Sendable (ListenEvent) -> Void

    func run() async throws {
        do {
            try await cancelWhenGracefulShutdown {
                try await backend.listen(configuration, logger: logger) { event in onEvent(event) }
            }
        } catch is CancellationError {
            // The graceful shutdown we asked for: a normal end.
        }
    }
}

/// glibc malloc settings for a receiver that allocates and frees PDU-sized buffers (64 KiB to 1 MiB)
/// all day: serve them from the heap (not one mmap/munmap each) and do not trim freed memory back to
/// the kernel at once, so buffers are reused instead of being faulted in page by page again (its effect
/// on px-listen's CPU time is in docs/benchmarks.rst). The heap keeps at most what the back-pressured
/// buffers needed at their peak.
enum MallocTuning {
    @_silgen_name("mallopt") private static func mallopt(_ parameter: Int32, _ value: Int32) -> Int32

    static func keepFreedBuffers() {
        #if os(Linux)
            let trimThreshold: Int32 = -1  // M_TRIM_THRESHOLD
            let mmapThreshold: Int32 = -3  // M_MMAP_THRESHOLD
            _ = mallopt(mmapThreshold, 32 << 20)
            _ = mallopt(trimThreshold, 256 << 20)
        #endif
    }
}
