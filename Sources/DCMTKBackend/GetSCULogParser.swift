import DICOMData
import PXCore

/// Reads `getscu -v`'s log (DcmSCU wording): C-GET-RSPs, C-STORE sub-operations answered, and the
/// final sub-operation counts (PS3.7 §9.1.3).
///
/// ```
/// I: Received C-STORE Request (MsgID 1)
/// I: Sending C-STORE Response (Success)
/// I: Received C-GET Response (Pending)
/// I: Received C-GET Response (Success)
/// I: Final status report from last C-GET message:
/// I:   Number of Remaining Suboperations : 0
/// I:   Number of Completed Suboperations : 2
/// ```
public struct GetSCULogParser: Sendable {
    /// How many C-GET-RSPs arrived.
    public private(set) var responses = 0
    /// The final response's status.
    public private(set) var finalStatus: DIMSEStatus?
    /// C-STORE-RSPs getscu sent with success or warning, and with a failure.
    public private(set) var storesAnswered = 0
    public private(set) var storesRefused = 0
    public private(set) var remaining: Int?
    public private(set) var completed: Int?
    public private(set) var failed: Int?
    public private(set) var warning: Int?

    public init() {}

    /// Feeds one line; returns progress for each pending C-GET-RSP (counts as getscu answered them:
    /// its `-v` log prints the peer's counts only at the end).
    public mutating func feed(_ line: DCMTKLogLine) -> MoveProgress? {
        guard line.level == .info else { return nil }
        var text = Substring(line.text)
        while text.first == " " { text = text.dropFirst() }
        if text.hasPrefix("Sending C-STORE Response") {
            let status = FindLogParser.status(in: String(text), service: .store, default: .success)
            if status.isFailure { storesRefused += 1 } else { storesAnswered += 1 }
        } else if text.hasPrefix("Received C-GET Response") {
            responses += 1
            let status = FindLogParser.status(in: String(text), service: .get, default: .success)
            if status.isPending {
                return MoveProgress(
                    remaining: nil, completed: storesAnswered, failed: storesRefused, warning: 0, status: status)
            }
            finalStatus = status
        } else if text.hasPrefix("Number of ") {
            let parts = text.split(separator: ":")
            guard parts.count == 2, let value = Int(parts[1].trimmingCharacters(in: " ")) else { return nil }
            if text.contains("Remaining") {
                remaining = value
            } else if text.contains("Completed") {
                completed = value
            } else if text.contains("Failed") {
                failed = value
            } else if text.contains("Warning") {
                warning = value
            }
        }
        return nil
    }
}
