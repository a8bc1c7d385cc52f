import ArgumentParser
import PXCommandLine
import PXCommands

public struct PXFind: PXCommand {
    public static let configuration = CommandConfiguration(
        commandName: "px-find",
        abstract: "Query a DICOM peer with C-FIND and print the matches as JSON.",
        discussion: """
            Without --level, px-find does pypx 3.x's two-phase query: a STUDY-level
            C-FIND, then a SERIES-level C-FIND under each study, printed as studies with a
            nested "series" list of {tag, value, label} entries. With --level, one C-FIND
            at that level.

            Keys: Keyword=value after the peer (as dcm writes them), -k Keyword=value,
            -k "(gggg,eeee)=value", -k Keyword (return key only) for any keyword of the
            dictionary; or pypx's flags (--PatientID, --patientID, --StudyDate, ...).
            Wildcards * and ? as the peer allows.

            Formats: pypx (default), dicom-json (PS3.18 datasets), ndjson (one flat
            {Keyword: value} line per response, written as each arrives, then the
            envelope), table, tree (a summary line, "2 patients | 3 studies | 56 series |
            17174 instances", then patient -> study -> series with their counts; with
            --level study, patient -> study).

            Examples:
              px-find QRSCP@127.0.0.1:11112 --PatientName 'Doe*'
              px-find pacs StudyDate=20240101 Modality=MR
              px-find pacs --level image -k StudyInstanceUID=1.2.3 --format ndjson

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Timeouts") var timeouts: TimeoutOptions
    @OptionGroup(title: "Backend") var backend: BackendOptions
    @OptionGroup(title: "Logging") var logging: LoggingOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup var output: FindOutputOptions
    @Argument(help: ArgumentHelp(QueryOptions.positionalKeysHelp, valueName: "Keyword=value"))
    var positionalKeys: [String] = []

    public init() {}

    public mutating func validate() throws {
        var peer = connection.peer
        try query.adopt(positionalKeys, before: &peer)
        connection.peer = peer
        try connection.validate()
    }

    public func run() async throws {
        try await FindCommand.run(
            connection: connection, timeouts: timeouts, backend: backend, logging: logging, query: query, output: output
        )
    }
}
