import DICOMData
import PXCore

/// Reads `storescu -v -nh`'s log: which file is being sent and its C-STORE-RSP status (PS3.4 §B.2.3).
///
/// ```
/// I: Sending file: src/p1_s1_i1.dcm
/// I: Converting transfer syntax: Little Endian Explicit -> Little Endian Explicit
/// I: Sending Store Request (MsgID 1, CT)
/// I: Received Store Response (Success)
/// ```
/// storescu names the status only; the code is looked up from DCMTK's name in the storage table
/// (a code in a range, 0xA7xx, reads back as the range's first code).
public struct StoreSCULogParser: Sendable {
    /// What happened to a file.
    public enum Event: Hashable, Sendable {
        /// The peer answered the C-STORE.
        case status(path: String, DIMSEStatus)
        /// storescu could not send the file: no presentation context, or a read error.
        case notSent(path: String, noContext: Bool, reason: String)
    }

    private var current: String?
    private var requestSent = false
    private var errors: [String] = []

    public init() {}

    /// Feeds one line; returns the event that completes a file.
    public mutating func feed(_ line: DCMTKLogLine) -> Event? {
        let text = line.text
        // "W: unknown storage SOP class in file: rej/b.dcm: 1.2.3, ignoring file": storescu will not
        // propose it, so no context can carry it.
        if line.level == .warning, text.hasPrefix("unknown storage SOP class in file: "), text.hasSuffix(", ignoring file") {
            let body = text.dropFirst("unknown storage SOP class in file: ".count).dropLast(", ignoring file".count)
            if let colon = body.ranges(of: ": ").last {
                return .notSent(path: String(body[..<colon.lowerBound]), noContext: true, reason: String(text))
            }
        }
        if line.level == .info {
            if text.hasPrefix("Sending file: ") {
                let finished = flush()
                current = String(text.dropFirst("Sending file: ".count))
                return finished
            }
            if text.hasPrefix("Sending Store Request") {
                requestSent = true
            } else if text.hasPrefix("Received Store Response"), let path = current {
                current = nil
                requestSent = false
                errors = []
                return .status(path: path, FindLogParser.status(in: text, service: .store, default: .success))
            } else if text.hasPrefix("Releasing Association") || text.hasPrefix("Aborting Association") {
                return flush()
            }
            return nil
        }
        if line.isFailure, current != nil { errors.append(text) }
        return nil
    }

    /// Whether a ``Event/notSent(path:noContext:reason:)`` reason says the association itself was lost
    /// (`0006:0317 Peer aborted Association`, `0006:020e DIMSE Failed to send message`, DUL errors): the
    /// file was not refused, the association ended under it.
    public static func associationLost(_ reason: String) -> Bool {
        ["0006:0317", "Peer aborted", "0006:020e", "0006:0303", "DUL "].contains { reason.contains($0) }
    }

    /// The file in flight at the end of the log, if any.
    public mutating func finish() -> Event? { flush() }

    private mutating func flush() -> Event? {
        guard let path = current else { return nil }
        defer {
            current = nil
            requestSent = false
            errors = []
        }
        let reason = errors.isEmpty ? "storescu did not send the file" : errors.joined(separator: " ")
        let noContext = errors.contains { $0.contains("No presentation context") || $0.contains("no presentation context") }
        return .notSent(path: path, noContext: noContext, reason: reason)
    }
}
