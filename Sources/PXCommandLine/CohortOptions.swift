import ArgumentParser

/// px-find's cohort: many queries in one process, read from a file of rows (``QueryRowReader``).
public struct CohortOptions: ParsableArguments {
    @Option(
        name: .customLong("queries"),
        help: ArgumentHelp(
            "Run one query per row of FILE ('-': stdin): CSV with a header row of keywords, or NDJSON objects of "
                + "Keyword: value. Each match is an NDJSON line with its \"row\"; a row that fails is an "
                + "{\"row\", \"error\"} line and the others go on. The options' keys apply to every row.",
            valueName: "file"))
    public var queries: String?

    @Option(
        name: .customLong("parallel"),
        help: "With --queries: rows in flight at once, each lane on its own association (default 1: one association).")
    public var parallel = 1

    public init() {}

    public func validate() throws {
        guard parallel >= 1 else { throw ValidationError("--parallel must be at least 1") }
        if queries == nil && parallel != 1 { throw ValidationError("--parallel goes with --queries") }
    }
}
