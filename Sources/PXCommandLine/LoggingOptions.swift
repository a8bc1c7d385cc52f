import ArgumentParser
import Logging
import Synchronization

// swift-format-ignore: AvoidRetroactiveConformances
// swift-log's levels parsed from `--log-level`: neither package declares this conformance.
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `--log-level`; logs go to stderr, stdout carries JSON only.
public struct LoggingOptions: ParsableArguments {
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    public var level: Logger.Level = .warning

    public init() {}

    /// Bootstraps swift-log to stderr once per process, and returns a logger for `label`.
    public func makeLogger(label: String) -> Logger {
        let level = self.level
        if LoggingOptions.bootstrapped.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        }
        var logger = Logger(label: label)
        logger.logLevel = level
        return logger
    }

    private static let bootstrapped = Atomic<Bool>(false)
}
