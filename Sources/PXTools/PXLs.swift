import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

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
            ranges, UID lists), with px-find's --level, --model, -k, --PatientID-style
            and Keyword=value keys (px-ls PLACE StudyDate=20240101); without --level,
            studies then the series of each (pypx 3.x), printed in --format pypx
            (default; px's keys for each level, pypx's values), pypx-clean, dicom-json,
            ndjson, csv, table or tree (see px-find --help and docs/commands.rst,
            "Formats"). The envelope's backend is "place". A zip place (zip:PATH) is read
            from its archives' manifests and central directories (no DICOM header), with
            the same keys and formats; another tool's zips from their entries' headers.

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var list: ListOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup(title: "Output") var output: FindOutputOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @Argument(help: ArgumentHelp(QueryOptions.positionalKeysHelp, valueName: "Keyword=value"))
    var positionalKeys: [String] = []

    public init() {}

    public mutating func validate() throws {
        var place: String? = list.place
        try query.adopt(positionalKeys, before: &place)
        guard let place else { throw ValidationError("give the place to list (a folder, zip:PATH or a config place)") }
        list.place = place
    }

    public func run() async throws {
        try await ListCommand.run(list: list, query: query, output: output, logging: logging)
    }
}
