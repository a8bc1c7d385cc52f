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

/// Reads findscu's `-d -X` log: each C-FIND-RSP's status and Affected SOP Class UID from findscu's dump of
/// it, and the file its identifier was written to. findscu 3.6.7 neither checks a response's SOP class nor
/// names it below its debug level; at `-d` each response is dumped before its file is written:
///
/// ```
/// I: Received Find Response 1
/// D: ===================== INCOMING DIMSE MESSAGE ====================
/// D: Message Type                  : C-FIND RSP
/// D: Message ID Being Responded To : 1
/// D: Affected SOP Class UID        : FINDModalityWorklistInformationModel
/// D: Data Set                      : present
/// D: DIMSE Status                  : 0xff00: Pending: Matches are continuing
/// D: ======================= END DIMSE MESSAGE =======================
/// I: Writing response dataset to file: /tmp/x/rsp0001.dcm
/// I: Received Final Find Response
/// ```
///
/// findscu names a SOP class it knows by DCMTK's name (`FINDStudyRootQueryRetrieveInformationModel`), one it
/// does not by its UID.
public struct FindDebugLogParser: Sendable {
    public enum Event: Hashable, Sendable {
        /// A pending response, numbered from 1.
        case response(number: Int, status: DIMSEStatus)
        /// The response dataset's file.
        case wroteFile(path: String)
        /// The final response.
        case final(status: DIMSEStatus)
        /// A response named `answered` (a UID, or DCMTK's name of a class px does not know) as its Affected
        /// SOP Class UID, not the request's (PS3.7 §9.1.2.1).
        case foreignSOPClass(answered: String)
    }

    /// The request's C-FIND SOP class UID.
    let askedSOPClassUID: String
    /// The response whose dump is awaited: its number (`nil` for the final one).
    private var awaited: (number: Int?, final: Bool)?
    private var inResponseDump = false
    private var answered: String?
    private var status: DIMSEStatus?

    public init(askedSOPClassUID: String) {
        self.askedSOPClassUID = askedSOPClassUID
    }

    /// DCMTK 3.6.7's names of the C-FIND SOP classes (dcuid.h), and their UIDs.
    static let findClassNames: [String: String] = [
        "FINDPatientRootQueryRetrieveInformationModel": "1.2.840.10008.5.1.4.1.2.1.1",
        "FINDStudyRootQueryRetrieveInformationModel": "1.2.840.10008.5.1.4.1.2.2.1",
        "RETIRED_FINDPatientStudyOnlyQueryRetrieveInformationModel": "1.2.840.10008.5.1.4.1.2.3.1",
        "FINDModalityWorklistInformationModel": "1.2.840.10008.5.1.4.31",
    ]

    /// Feeds one line; returns the events it completes.
    public mutating func feed(_ line: DCMTKLogLine) -> [Event] {
        let text = line.text
        switch line.level {
        case .info:
            if text.hasPrefix("Writing response dataset to file: ") {
                return [.wroteFile(path: String(text.dropFirst("Writing response dataset to file: ".count)))]
            }
            if text.hasPrefix("Received Final Find Response") {
                awaited = (nil, true)
            } else if text.hasPrefix("Received Find Response ") {
                let rest = text.dropFirst("Received Find Response ".count)
                awaited = (Int(rest.prefix { $0.isNumber }) ?? 0, false)
            }
            return []
        case .debug:
            guard awaited != nil else { return [] }
            if text.hasPrefix("Message Type") {
                inResponseDump = text.hasSuffix(": C-FIND RSP")
                (answered, status) = (nil, nil)
            } else if inResponseDump, text.hasPrefix("Affected SOP Class UID") {
                answered = text.split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: " ") }
            } else if inResponseDump, text.hasPrefix("DIMSE Status") {
                // "DIMSE Status                  : 0xff00: Pending: Matches are continuing"
                if let range = text.firstRange(of: "0x") {
                    let hex = text[range.upperBound...].prefix { $0.isHexDigit }
                    if let code = UInt16(hex, radix: 16) { status = DIMSEStatus(code: code, service: .find) }
                }
            } else if inResponseDump, text.hasPrefix("="), text.contains("END DIMSE MESSAGE") {
                inResponseDump = false
                guard let response = awaited else { return [] }
                awaited = nil
                // An absent class (findscu prints "none" or nothing) is not checked, as on the native backend.
                if let answered, !answered.isEmpty, answered != "none",
                    (Self.findClassNames[answered] ?? answered) != askedSOPClassUID
                {
                    return [.foreignSOPClass(answered: Self.findClassNames[answered] ?? answered)]
                }
                if response.final { return [.final(status: status ?? .success)] }
                return [
                    .response(
                        number: response.number ?? 0, status: status ?? DIMSEStatus(code: 0xFF00, service: .find))
                ]
            }
            return []
        default:
            return []
        }
    }
}
