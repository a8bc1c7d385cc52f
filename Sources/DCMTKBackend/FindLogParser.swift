import DICOMData
import PXCore

/// Reads findscu's `-v -X` log: each response's status and the file it was written to.
///
/// ```
/// I: Received Find Response 1 (Pending)
/// I: Writing response dataset to file: x/rsp0001.dcm
/// I: Received Final Find Response (Success)
/// ```
public enum FindLogParser {
    public enum Event: Hashable, Sendable {
        /// A pending response, numbered from 1.
        case response(number: Int, status: DIMSEStatus)
        /// The response dataset's file.
        case wroteFile(path: String)
        /// The final response.
        case final(status: DIMSEStatus)
    }

    /// The event on a line, if any.
    public static func parse(_ line: DCMTKLogLine) -> Event? {
        guard line.level == .info else { return nil }
        let text = line.text
        if text.hasPrefix("Received Final Find Response") {
            return .final(status: status(in: text, service: .find, default: .success))
        }
        if text.hasPrefix("Received Find Response ") {
            let rest = text.dropFirst("Received Find Response ".count)
            let number = Int(rest.prefix { $0.isNumber }) ?? 0
            return .response(number: number, status: status(in: text, service: .find, default: .pending))
        }
        if text.hasPrefix("Writing response dataset to file: ") {
            return .wroteFile(path: String(text.dropFirst("Writing response dataset to file: ".count)))
        }
        return nil
    }

    /// The status named in the last `(…)` of a line, e.g. `(Refused: MoveDestinationUnknown)`.
    static func status(in text: String, service: DIMSEStatus.Service, default fallback: DIMSEStatus) -> DIMSEStatus {
        guard text.hasSuffix(")"), let open = text.lastIndex(of: "(") else { return fallback }
        let name = String(text[text.index(after: open)..<text.index(before: text.endIndex)])
        if let status = DIMSEStatus(dcmtkName: name, service: service) { return status }
        // A name the table lacks: keep DCMTK's text, with the category from its prefix.
        return DIMSEStatus(reportedName: name, service: service)
    }
}
