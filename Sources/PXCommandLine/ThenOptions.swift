import ArgumentParser

/// pypx 3.x's `px-find --then ACTION`: what px-find does with what it found, in the same command. px does
/// `retrieve` (pypx's retrieve: the matches moved with C-MOVE, PS3.4 §C.4.2, or with `--datadir` fetched with
/// C-GET, §C.4.3); pypx's other actions serve ChRIS (its database and CUBE) and are refused as not supported.
public struct ThenOptions: ParsableArguments {
    @Option(
        name: .customLong("then"),
        help: ArgumentHelp(
            "After the find, retrieve what was found (pypx 3.x): C-MOVE to --aetl/--destination (else --aet), "
                + "or with --datadir C-GET into that folder; prints px-move's or px-get's JSON instead of the matches. "
                + "pypx's ChRIS actions (status, push, register, report) are not supported.",
            valueName: "retrieve"))
    public var then: String?

    @Option(
        name: [.customLong("aetl"), .customLong("destination")],
        help: "--then retrieve: the C-MOVE destination AE title (pypx 0.8: --aetl; pypx 3.x: --aet).")
    public var destination: String?

    @Option(name: .customLong("datadir"), help: "--then retrieve: C-GET into this storage root (as px-get -d).")
    public var datadir: String?

    @Flag(
        name: .customLong("move"), help: "--then retrieve with C-MOVE (pypx 3.x's flag; the default without --datadir)."
    )
    public var move = false

    public init() {}

    /// pypx's post-find actions px does not do, and why.
    static let unsupported: [String: String] = [
        "status": "pypx's ChRIS database status", "push": "pypx's push to ChRIS storage",
        "register": "pypx's ChRIS CUBE registration", "report": "pypx's px-report on the result",
    ]

    /// Whether `--then retrieve` was given.
    public var retrieves: Bool { then != nil }

    public func validate() throws {
        guard let then else {
            if destination != nil || datadir != nil || move {
                throw ValidationError("--aetl, --destination, --datadir and --move go with --then retrieve")
            }
            return
        }
        let actions = then.split(separator: ",").map { $0.filter { !$0.isWhitespace }.lowercased() }
        for action in actions where action != "retrieve" {
            if let what = Self.unsupported[action] {
                throw ValidationError(
                    "--then \(action) (\(what)) is not supported: px-find does --then retrieve only; "
                        + "pipe px-find's JSON into other tools for the rest")
            }
            throw ValidationError("--then takes retrieve (pypx's status, push, register, report are not supported)")
        }
        guard actions.contains("retrieve") else { throw ValidationError("--then takes retrieve") }
        if (destination != nil || move) && datadir != nil {
            throw ValidationError("--then retrieve moves (--aetl/--destination) or gets (--datadir), not both")
        }
    }
}
