import ArgumentParser
import NIOCore
import PXCommandLine
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

/// The multi-call `px` binary, as git and busybox are: `px echo ARGS` runs px-echo, and a link named `px-echo` (or
/// `px-echo` itself) runs px-echo whatever follows. Each command is the same type the thin `px-*` executable runs,
/// so `--help`, the JSON envelope and the exit status are the same whichever name started it.
public enum PXMultiCall {
    /// The ten commands, by the name after `px-`.
    public static let commands: [(name: String, type: any ParsableCommand.Type)] = [
        ("echo", PXEcho.self),
        ("find", PXFind.self),
        ("move", PXMove.self),
        ("get", PXGet.self),
        ("push", PXPush.self),
        ("listen", PXListen.self),
        ("dump", PXDump.self),
        ("sync", PXSyncMain.self),
        ("serve", PXServe.self),
        ("ls", PXLs.self),
    ]

    /// Runs the command named by the program's name (`px-echo`) or, for `px`, by the first argument.
    public static func main() async -> Never {
        let arguments = CommandLine.arguments
        let invokedAs = arguments.first.map(basename) ?? "px"
        if let type = command(named: invokedAs) {
            await run(type, arguments: Array(arguments.dropFirst()))
        }
        guard arguments.count > 1 else {
            CommandOutput.writeStandardError(usage)
            exit(PXExit.usage)
        }
        let name = arguments[1]
        switch name {
        case "-h", "--help", "help":
            CommandOutput.writeStandardOutput(Array(usage.utf8))
            exit(0)
        case "--version":
            CommandOutput.writeStandardOutput(Array("px \(PXVersion.description)\n".utf8))
            exit(0)
        default:
            guard let type = command(named: name) else {
                CommandOutput.writeStandardError("px: '\(name)' is not a px command.\n\n" + usage)
                exit(PXExit.usage)
            }
            await run(type, arguments: Array(arguments.dropFirst(2)))
        }
    }

    /// Runs `type` on the command line's arguments: what each thin `px-*` executable does.
    public static func main(_ type: any ParsableCommand.Type) async -> Never {
        await run(type, arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// The command called `name`: `echo` or `px-echo`.
    static func command(named name: String) -> (any ParsableCommand.Type)? {
        let short = name.hasPrefix("px-") ? String(name.dropFirst(3)) : name
        return commands.first { $0.name == short }?.type
    }

    static func run(_ type: any ParsableCommand.Type, arguments: [String]) async -> Never {
        if let pxCommand = type as? any PXCommand.Type {
            // Only here, before anything touches NIO: the suggestion may be set once per process, and a test
            // that runs a command in process must not set it.
            if let loops = pxCommand.eventLoopCount, getenv("NIO_SINGLETON_GROUP_LOOP_COUNT") == nil {
                NIOSingletons.groupLoopCountSuggestion = loops
            }
            await pxCommand.main(arguments: arguments)
        } else {
            type.main(arguments)
        }
        exit(0)
    }

    static var usage: String {
        let width = commands.map(\.name.count).max() ?? 0
        let lines = commands.map { name, type in
            "  " + name + String(repeating: " ", count: width - name.count + 2) + type.configuration.abstract
        }
        return """
            px \(PXVersion.description): DICOM networking for scripts.

            USAGE: px <command> [<options>]    (or px-<command> [<options>])

            COMMANDS:
            \(lines.joined(separator: "\n"))

              See 'px <command> --help' (or 'px-<command> --help') for a command's options.

            """
    }

    static func basename(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }
}
