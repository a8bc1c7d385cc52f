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

    @OptionGroup public var common: OutputOptions

    public init() {}

    public var output: CommandOutput { common.output }
}
