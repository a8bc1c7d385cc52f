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
    /// Errors logged while storescu checks its input files, before the warning that names the file.
    private var checkingErrors: [String] = []
    /// Whether the association went on after the last file reported as not sent (storescu sent the next
    /// file, or released the association): the file was refused on its own, not lost with the association.
    public private(set) var associationWentOn = false
    /// What ended the association, once storescu logged it (`0006:0317 Peer aborted Association`, a DUL
    /// error): with `-nh` storescu still goes through the remaining files, which then fail without being sent.
    public private(set) var associationLost: String?

    public init() {}

    /// Feeds one line; returns the event that completes a file.
    public mutating func feed(_ line: DCMTKLogLine) -> Event? {
        let text = line.text
        // The progress dots and a message share a line: "XMIT: ....W: DIMSE Warning: ...".
        if line.level == nil, text.hasPrefix("XMIT:") || text.hasPrefix("RECV:") {
            for prefix in ["W: ", "E: ", "F: "] {
                if let at = text.ranges(of: prefix).first { return feed(DCMTKLogLine(text[at.lowerBound...])) }
            }
            return nil
        }
        // "W: DIMSE Warning: (STORESCU,ANY-SCP): sendMessage: unable to convert dataset from 'JPEG 2000 ...'
        // transfer syntax to 'Little Endian Explicit'": why the next "Store Failed" happened.
        if line.level == .warning, current != nil, let at = text.ranges(of: "sendMessage: ").first {
            errors.append(String(text[at.upperBound...]))
            return nil
        }
        // "W: missing SOP class (or instance) in file: f.dcm, ignoring file" (after the reader's errors,
        // e.g. "E: DcmElement: PixelData (7fe0,0010) larger (8192) than remaining bytes in file"), and
        // "E: cannot access file: f.dcm": storescu will not send it.
        if current == nil, line.isFailure, !text.hasPrefix("cannot access file: ") {
            checkingErrors.append(text)
            return nil
        }
        for (prefix, suffix) in [
            ("missing SOP class (or instance) in file: ", ", ignoring file"), ("cannot access file: ", ""),
        ]
        where current == nil && text.hasPrefix(prefix) && text.hasSuffix(suffix) {
            let path = String(text.dropFirst(prefix.count).dropLast(suffix.count))
            let reason = (checkingErrors + [text]).joined(separator: " ")
            checkingErrors = []
            associationWentOn = true
            return .notSent(path: path, noContext: false, reason: reason)
        }
        // "W: unknown storage SOP class in file: rej/b.dcm: 1.2.3, ignoring file": storescu will not
        // propose it, so no context can carry it.
        if line.level == .warning, text.hasPrefix("unknown storage SOP class in file: "),
            text.hasSuffix(", ignoring file")
        {
            let body = text.dropFirst("unknown storage SOP class in file: ".count).dropLast(", ignoring file".count)
            if let colon = body.ranges(of: ": ").last {
                return .notSent(path: String(body[..<colon.lowerBound]), noContext: true, reason: String(text))
            }
        }
        if line.level == .info {
            if text.hasPrefix("Sending file: ") {
                let finished = flush(wentOn: true)
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
            } else if text.hasPrefix("Releasing Association") {
                return flush(wentOn: true)
            } else if text.hasPrefix("Aborting Association") {
                return flush(wentOn: false)
            }
            return nil
        }
        if line.isFailure, current != nil {
            errors.append(text)
            if associationLost == nil, Self.associationLost(text), !text.hasPrefix("Store Failed") {
                associationLost = text
            }
        }
        return nil
    }

    /// Whether a ``Event/notSent(path:noContext:reason:)`` reason says the association itself was lost
    /// (`0006:0317 Peer aborted Association`, `0006:020e DIMSE Failed to send message`, DUL errors): the
    /// file was not refused, the association ended under it.
    public static func associationLost(_ reason: String) -> Bool {
        ["0006:0317", "Peer aborted", "0006:0303", "DUL "].contains { reason.contains($0) }
    }

    /// The file in flight at the end of the log, if any.
    public mutating func finish() -> Event? { flush(wentOn: false) }

    private mutating func flush(wentOn: Bool) -> Event? {
        guard let path = current else { return nil }
        associationWentOn = wentOn && associationLost == nil
        defer {
            current = nil
            requestSent = false
            errors = []
        }
        let reason = errors.isEmpty ? "storescu did not send the file" : errors.joined(separator: " ")
        let noContext = errors.contains {
            $0.contains("No presentation context") || $0.contains("no presentation context")
        }
        return .notSent(path: path, noContext: noContext, reason: reason)
    }
}
