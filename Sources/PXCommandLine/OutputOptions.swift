import ArgumentParser
import PXCore

/// `--pretty`, for every command that prints the JSON envelope.
public struct OutputOptions: ParsableArguments {
    @Flag(name: .long, help: "Indent the JSON.")
    public var pretty = false

    public init() {}

    /// The writer for the envelope and the command's other JSON.
    public var output: CommandOutput { CommandOutput(pretty: pretty) }
}

/// px-find's output: `--format` and `--pretty`.
public struct FindOutputOptions: ParsableArguments {
    @Option(name: .long, help: "Output format (see Formats above).")
    public var format: PXOutput.FindFormat = .pypx

    @Flag(
        name: .customLong("csv-raw"),
        help:
            "With --format csv, write cells as the peer sent them: by default a cell starting with =, +, -, @, TAB or CR gets a ' before it, so that a spreadsheet does not run it as a formula."
    )
    public var csvRaw = false

    @OptionGroup public var common: OutputOptions

    public init() {}

    public var output: CommandOutput { common.output }
}
