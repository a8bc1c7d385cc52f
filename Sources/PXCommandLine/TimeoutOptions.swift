import ArgumentParser
import PXCore

/// Connect, ACSE and DIMSE timeouts, the overall deadline, and the transfer rate a DICOMweb answer must
/// keep (px-listen's `--min-transfer-rate`, for the answers px waits for), in seconds and bytes/s.
public struct TimeoutOptions: ParsableArguments {
    @Option(name: .customLong("connect-timeout"), help: "TCP connect timeout (s).")
    public var connect: Double = Timeouts.standard.connect

    @Option(name: .customLong("acse-timeout"), help: "Association negotiation timeout (s).")
    public var acse: Double = Timeouts.standard.acse

    @Option(
        name: .customLong("dimse-timeout"),
        help: "Timeout for each DIMSE message, and for each silence of a DICOMweb answer (s).")
    public var dimse: Double = Timeouts.standard.dimse

    @Option(
        name: .customLong("timeout"),
        help: "Overall deadline for the whole command, and for each DICOMweb request (s); 0 for none.")
    public var deadline: Double = Timeouts.standard.deadline ?? 0

    @Option(
        name: .customLong("min-transfer-rate"),
        help:
            "Bytes/s a DICOMweb answer must keep arriving at, over --transfer-rate-window; a slower server is a timeout (0: off)."
    )
    public var minTransferRate: Int = Timeouts.standard.minimumTransferRate

    @Option(
        name: .customLong("transfer-rate-window"), help: "Seconds over which --min-transfer-rate is measured.")
    public var transferRateWindow: Double = Timeouts.standard.transferRateWindow

    public init() {}

    public func validate() throws {
        for (name, v) in [
            ("--connect-timeout", connect), ("--acse-timeout", acse), ("--dimse-timeout", dimse),
            ("--transfer-rate-window", transferRateWindow),
        ]
        where !(v > 0) {
            throw ValidationError("\(name) must be positive")
        }
        if deadline < 0 { throw ValidationError("--timeout must not be negative") }
        if minTransferRate < 0 { throw ValidationError("--min-transfer-rate must not be negative") }
    }

    public var timeouts: Timeouts {
        Timeouts(
            connect: connect, acse: acse, dimse: dimse, deadline: deadline > 0 ? deadline : nil,
            minimumTransferRate: minTransferRate, transferRateWindow: transferRateWindow)
    }
}
