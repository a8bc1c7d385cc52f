import ArgumentParser
import PXCommandLine
import PXCommands

public struct PXLs: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-ls",
        abstract: "List what a folder place holds, with px-find's keys, levels and formats.",
        discussion: """
            PLACE is a folder of DICOM files. Its index (PLACE/.px/index.sqlite) is made on
            first use and brought up to date before each listing: only new or changed
            files (size, modification time) are read, removed ones are dropped, so a
            second run costs a walk and a query. --no-refresh answers from the index as
            it is.

            Queries match as a C-FIND would on a node (PS3.4 C.2.2.2: wild cards, date
            ranges, UID lists), with px-find's --level, --model, -k and --PatientID-style
            keys; without --level, studies then the series of each (pypx 3.x), printed
            in --format pypx (default; px's keys for each level, pypx's values),
            pypx-clean, dicom-json, ndjson, csv, table or tree (see px-find --help and
            docs/commands.rst, "Formats"). The envelope's backend is "place". A zip
            place (zip:PATH) is read from its archives' manifests and central
            directories (no DICOM header), with the same keys and formats.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var list: ListOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup(title: "Output") var output: FindOutputOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions

    public init() {}

    public func run() async throws {
        try await ListCommand.run(list: list, query: query, output: output, logging: logging)
    }
}
