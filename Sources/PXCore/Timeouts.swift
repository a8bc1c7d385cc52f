/// The time limits of one operation, in seconds.
///
/// `connect` bounds the TCP connect, `acse` the association negotiation and release (PS3.8 ARTIM),
/// `dimse` the wait for each DIMSE message (PS3.7), and `deadline` the whole operation: when it
/// expires the operation is cancelled (the DCMTK backend kills its child process).
public struct Timeouts: Hashable, Sendable {
    public var connect: Double
    public var acse: Double
    public var dimse: Double
    /// The overall limit; `nil` for none (px-listen).
    public var deadline: Double?

    public init(connect: Double = 10, acse: Double = 30, dimse: Double = 60, deadline: Double? = 600) {
        self.connect = connect
        self.acse = acse
        self.dimse = dimse
        self.deadline = deadline
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
