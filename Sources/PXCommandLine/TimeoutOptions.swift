import ArgumentParser
import PXCore

/// Connect, ACSE and DIMSE timeouts and the overall deadline, in seconds.
public struct TimeoutOptions: ParsableArguments {
    @Option(name: .customLong("connect-timeout"), help: "TCP connect timeout (s).")
    public var connect: Double = Timeouts.standard.connect

    @Option(name: .customLong("acse-timeout"), help: "Association negotiation timeout (s).")
    public var acse: Double = Timeouts.standard.acse

    @Option(name: .customLong("dimse-timeout"), help: "Timeout for each DIMSE message (s).")
    public var dimse: Double = Timeouts.standard.dimse

    @Option(name: .customLong("timeout"), help: "Overall deadline for the whole command (s); 0 for none.")
    public var deadline: Double = Timeouts.standard.deadline ?? 0

    public init() {}

    public func validate() throws {
        for (name, v) in [("--connect-timeout", connect), ("--acse-timeout", acse), ("--dimse-timeout", dimse)]
        where !(v > 0) {
            throw ValidationError("\(name) must be positive")
        }
        if deadline < 0 { throw ValidationError("--timeout must not be negative") }
    }

    public var timeouts: Timeouts {
        Timeouts(connect: connect, acse: acse, dimse: dimse, deadline: deadline > 0 ? deadline : nil)
    }
}
