import ArgumentParser
import PXCore

/// A px command whose stdout is JSON: a usage error found while parsing or validating the arguments is
/// also reported there, as the envelope with `error.code` `usage` (exit status 64), so a pipeline that
/// reads stdout learns why nothing came. ArgumentParser's own message and usage line still go to
/// stderr; `--help` and `--version` print as usual.
public protocol PXCommand: AsyncParsableCommand {
    /// The event loops the process's NIO singleton group should have when this command is the program, or nil
    /// for NIO's default of one per core. NIO starts every loop's thread when the group is first used, so a
    /// command that holds one association at a time asks for one: on a 64-core host it would otherwise start
    /// 64 threads to use one. The executable applies it (PXTools' `PXMultiCall`); `NIO_SINGLETON_GROUP_LOOP_COUNT`
    /// in the environment still wins.
    static var eventLoopCount: Int? { get }
}

extension PXCommand {
    public static var eventLoopCount: Int? { nil }

    public static func main() async {
        await main(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// Parses `arguments` (the command line without the program's name, pypx's `--JSONargs` expanded, see
    /// ``JSONArguments``) and runs the command: how `px echo ...` runs px-echo inside the multi-call `px`.
    public static func main(arguments: [String]) async {
        let command: any ParsableCommand
        do {
            command = try parseAsRoot(try JSONArguments.expand(arguments))
        } catch {
            if exitCode(for: error).rawValue == PXExit.usage {
                let lines = fullMessage(for: error).split(separator: "\n").map(String.init)
                var message = lines.first ?? "usage error"
                // Past six valid values ArgumentParser lists them one a line ("  - value") after the first.
                let listed = lines.dropFirst().prefix { $0.hasPrefix("  - ") }.map { "'\($0.dropFirst(4))'" }
                if !listed.isEmpty { message += " " + listed.joined(separator: ", ") }
                CommandOutput(pretty: false).finish(
                    backend: reportedBackend(arguments), data: nil,
                    error: .usage(message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message))
            }
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                var syncCommand = command
                try syncCommand.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    /// The `--backend` named on the command line (it could not be parsed with the rest), else `auto`.
    static func reportedBackend(_ arguments: [String]) -> String {
        for (index, argument) in arguments.enumerated() {
            if argument.hasPrefix("--backend=") { return String(argument.dropFirst("--backend=".count)) }
            if argument == "--backend", index + 1 < arguments.count { return arguments[index + 1] }
        }
        return "auto"
    }
}
