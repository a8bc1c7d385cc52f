import ArgumentParser
import PXCommandLine
import PXCommands
import PXCore

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
            Wildcards * and ? as the peer allows. A key of group 0000 (command), 0002
            (file meta) or FFFE (items), or a sequence keyword with a value, is a usage
            error (a sequence keyword alone is a return key).

            --model worklist: a Modality Worklist query (PS3.4 Annex K) for scheduled
            procedure steps, no levels; the step's keys (ScheduledStationAETitle,
            ScheduledProcedureStepStartDate, Modality, ...) match inside its sequence.

            Formats (docs/commands.rst, "Formats"):
              pypx        (default) pypx 3.12.6's JSON key for key: the two-phase query
                          asks pypx's 25 keys at both levels; an empty value is "no value
                          provided for gggg,eeee", several values one "A\\B" string,
                          "command" the query as a findscu command line (pypx's px-report
                          reads it)
              pypx-clean  the same entries with empty values "", several values an
                          array, "command" px's argv
              dicom-json  PS3.18 Annex F data sets in "data"; the two-phase answer is
                          one data set per study with its series as the items of
                          Referenced Series Sequence (0008,1115)
              ndjson      one flat {Keyword: value} line per response, written as each
                          arrives, then the envelope
              csv         RFC 4180: a header row of the keywords asked, one row per
                          match (per series in the two-phase query), CRLF line ends; a
                          cell starting with =, +, -, @, TAB or CR gets a ' before it
                          (no spreadsheet formula runs; --csv-raw: as sent), NUL left out
              table       columns aligned by display width (CJK characters count 2)
              tree        a summary line, "2 patients | 3 studies | 56 series | 17174
                          instances", then patient -> study -> series with their counts;
                          with --level study, patient -> study
            csv, table and tree print the JSON envelope only when the command fails.
            table and tree escape control and bidi characters in values (\\x1b,
            \\u202e; a backslash \\\\): no value acts on the terminal.

            --then retrieve (pypx 3.x) retrieves what was found and prints px-move's
            (px-get's, with --datadir) JSON instead of the matches.

            --queries FILE: a cohort, one query per row (a CSV header row of keywords,
            e.g. AccessionNumber,StudyDate; or NDJSON objects), all over one
            association (--parallel N: N associations). Each match is an NDJSON line
            with "row" (1 for the first row after the header); a failed row is a
            {"row": N, "error": {...}} line; the envelope's data counts rows, failed
            rows and matches, and exit 1 (partialFailure) says some row failed.

            Examples:
              px-find QRSCP@127.0.0.1:11112 --PatientName 'Doe*'
              px-find pacs StudyDate=20240101 Modality=MR
              px-find pacs --level image -k StudyInstanceUID=1.2.3 --format ndjson
              px-find pacs --queries cohort.csv --level study | px-sync ./cohort

            \(PXExit.helpTable)
            """,
        version: PXVersion.description
    )

    @OptionGroup var common: PeerCommandOptions
    @OptionGroup(title: "Query") var query: QueryOptions
    @OptionGroup var output: FindOutputOptions
    @OptionGroup(title: "Cohort") var cohort: CohortOptions
    @OptionGroup(title: "Then (pypx 3.x)") var then: ThenOptions
    @Argument(help: ArgumentHelp(QueryOptions.positionalKeysHelp, valueName: "Keyword=value"))
    var positionalKeys: [String] = []

    /// One association at a time: one event loop (see ``PXCommand/eventLoopCount``).
    public static let eventLoopCount: Int? = 1

    public init() {}

    public mutating func validate() throws {
        var peer = common.connection.peer
        try query.adopt(positionalKeys, before: &peer)
        common.connection.peer = peer
        try common.connection.validate()
        try common.connection.requirePeer()
        if cohort.queries != nil {
            if then.retrieves {
                throw ValidationError(
                    "--then retrieve takes one query: pipe px-find --queries into px-sync, px-move or px-get")
            }
            if output.format != .pypx && output.format != .ndjson {
                throw ValidationError("--queries writes NDJSON lines tagged with their row: use --format ndjson")
            }
        }
    }

    public func run() async throws {
        if then.retrieves {
            try await FindThenRetrieve.run(
                connection: common.connection, timeouts: common.timeouts, backend: common.backend,
                logging: common.logging, query: query,
                then: then, output: output.output)
            return
        }
        if let queries = cohort.queries {
            try await FindCommand.run(
                queries: queries, parallel: cohort.parallel, connection: common.connection, timeouts: common.timeouts,
                backend: common.backend, logging: common.logging, query: query, output: output.output)
            return
        }
        try await FindCommand.run(
            connection: common.connection, timeouts: common.timeouts, backend: common.backend, logging: common.logging,
            query: query, output: output
        )
    }
}
