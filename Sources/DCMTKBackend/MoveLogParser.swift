import DICOMData
import PXCore

/// Reads movescu's `-d` log: each C-MOVE-RSP's sub-operation counts and status (PS3.7 §9.1.4).
///
/// ```
/// I: Received Move Response 1
/// D: Message Type                  : C-MOVE RSP
/// D: Remaining Suboperations       : 0
/// D: Completed Suboperations       : 1
/// D: Failed Suboperations          : 0
/// D: Warning Suboperations         : 0
/// D: DIMSE Status                  : 0xff00: Pending: Sub-operations are continuing
/// D: ======================= END DIMSE MESSAGE =======================
/// I: Received Final Move Response
/// ```
public struct MoveLogParser: Sendable {
    private var inResponse = false
    private var remaining: Int?
    private var completed = 0
    private var failed = 0
    private var warning = 0
    private var status: DIMSEStatus?
    /// Whether the last response was the final one.
    public private(set) var sawFinal = false
    private var finalPending = false
    /// The status named by a `-v` line (`Received Final Move Response (…)`), when counts are absent.
    public private(set) var finalStatusFromInfo: DIMSEStatus?

    public init() {}

    /// Feeds one line; returns the progress when a response is complete.
    public mutating func feed(_ line: DCMTKLogLine) -> MoveProgress? {
        let text = line.text
        if line.level == .info {
            if text.hasPrefix("Received Final Move Response") {
                finalPending = true
                if text.hasSuffix(")") {
                    finalStatusFromInfo = FindLogParser.status(in: text, service: .move, default: .success)
                }
            } else if text.hasPrefix("Received Move Response") {
                finalPending = false
            }
            return nil
        }
        guard line.level == .debug else { return nil }
        if text.hasPrefix("Message Type") {
            inResponse = text.hasSuffix("C-MOVE RSP")
            if inResponse { (remaining, status) = (nil, nil) }
            return nil
        }
        guard inResponse else { return nil }
        func number() -> Int? {
            guard let colon = text.firstIndex(of: ":") else { return nil }
            return Int(text[text.index(after: colon)...].trimmingCharacters(in: " "))
        }
        if text.hasPrefix("Remaining Suboperations") {
            remaining = number()
        } else if text.hasPrefix("Completed Suboperations") {
            completed = number() ?? completed
        } else if text.hasPrefix("Failed Suboperations") {
            failed = number() ?? failed
        } else if text.hasPrefix("Warning Suboperations") {
            warning = number() ?? warning
        } else if text.hasPrefix("DIMSE Status") {
            // "DIMSE Status                  : 0xff00: Pending: Sub-operations are continuing"
            if let range = text.firstRange(of: "0x") {
                let hex = text[range.upperBound...].prefix { $0.isHexDigit }
                if let code = UInt16(hex, radix: 16) { status = DIMSEStatus(code: code, service: .move) }
            }
        } else if text.hasPrefix("=") && text.contains("END DIMSE MESSAGE") {
            inResponse = false
            guard let status else { return nil }
            if finalPending { sawFinal = true }
            return MoveProgress(
                remaining: remaining, completed: completed, failed: failed, warning: warning, status: status)
        }
        return nil
    }
}

extension StringProtocol {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s = s.dropFirst() }
        while s.last == set { s = s.dropLast() }
        return String(s)
    }
}
