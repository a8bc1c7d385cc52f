/// The time limits of one operation, in seconds.
///
/// `connect` bounds the TCP connect, `acse` the association negotiation and release (PS3.8 ARTIM),
/// `dimse` the wait for each DIMSE message (PS3.7), and `deadline` the whole operation: when it
/// expires the operation is cancelled (the DCMTK backend kills its child process).
///
/// A DICOMweb request (PS3.18 §8) is held to the same limits: `connect` for the connection, `dimse` for
/// the first byte of the answer and every silence after it, `deadline` for each request as a whole, and
/// `minimumTransferRate` over `transferRateWindow` while its answer streams in (what px-listen's
/// `--min-transfer-rate` is to a DIMSE peer), so a server that sends a byte now and then cannot hold px.
public struct Timeouts: Hashable, Sendable {
    public var connect: Double
    public var acse: Double
    public var dimse: Double
    /// The overall limit; `nil` for none (px-listen).
    public var deadline: Double?
    /// Bytes per second a DICOMweb answer must keep arriving at while px waits for it, averaged over
    /// `transferRateWindow` seconds; 0 disables the check.
    public var minimumTransferRate: Int
    public var transferRateWindow: Double

    public init(
        connect: Double = 10, acse: Double = 30, dimse: Double = 60, deadline: Double? = 600,
        minimumTransferRate: Int = 1024, transferRateWindow: Double = 20
    ) {
        self.connect = connect
        self.acse = acse
        self.dimse = dimse
        self.deadline = deadline
        self.minimumTransferRate = minimumTransferRate
        self.transferRateWindow = transferRateWindow
    }

    /// The defaults: 10 s connect, 30 s ACSE, 60 s DIMSE, 10 minutes overall.
    public static let standard = Timeouts()

    /// `2`, `2.5`: seconds without a trailing `.0`.
    public static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() && abs(seconds) < 1e9 ? String(Int(seconds)) : String(seconds)
    }

    /// Whole seconds for tools that take integers, rounded up and at least 1.
    public static func wholeSeconds(_ seconds: Double) -> Int {
        max(1, Int(seconds.rounded(.up)))
    }
}
