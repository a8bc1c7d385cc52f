/// Reads storescp's `-d` log in single-process mode: association boundaries, the peer, and each
/// stored file.
///
/// ```
/// D: Association Received: localhost
/// D: Calling Application Name:    STORESCU
/// D: Called Application Name:     STORESCP2
/// I: storing DICOM file: recv/CT.1.2.826….dcm
/// I: Association Release
/// ```
public struct StoreSCPLogParser: Sendable {
    public enum Event: Hashable, Sendable {
        /// The association is negotiated (after the A-ASSOCIATE-RQ dump).
        case associationOpened(peerHost: String?, callingAETitle: String?, calledAETitle: String?)
        /// storescp is writing `path` for the C-STORE-RQ whose Affected SOP Instance UID is
        /// `affectedSOPInstanceUID` (from the request's dump; `nil` when it was not logged).
        case fileStored(path: String, affectedSOPInstanceUID: String?)
        case associationClosed(aborted: Bool)
        /// An `E:`/`F:` line.
        case failure(String)
        /// storescp refused the association with an A-ASSOCIATE-RJ (`result`, `source`, `reason` in px's words,
        /// as the native receiver reports them), or accepted it with no presentation context
        /// (``PXCore/ListenEvent/noPresentationContextAccepted(peerHost:callingAETitle:calledAETitle:)``).
        case associationRejected(
            peerHost: String?, callingAETitle: String?, calledAETitle: String?, result: String, source: String,
            reason: String)
        /// A C-STORE-RQ (its Affected SOP Instance UID) whose data set storescp never got to store: the
        /// association ended, or the next request came, before storescp logged a file for it (a data set it
        /// could not receive or parse, a sender gone mid-instance).
        case storeUnconfirmed(affectedSOPInstanceUID: String)
    }

    private var host: String?
    private var calling: String?
    private var called: String?
    private var inRequestDump = false
    private var open = false
    /// Inside the dump of an incoming C-STORE-RQ.
    private var inStoreRequestDump = false
    private var affectedSOPInstanceUID: String?
    /// The Affected SOP Instance UID of the last C-STORE-RQ, until storescp logs its file.
    private var unconfirmed: String?

    public init() {}

    /// ``Event/storeUnconfirmed(affectedSOPInstanceUID:)`` for the request still waiting for its file.
    private mutating func takeUnconfirmed() -> [Event] {
        defer { unconfirmed = nil }
        return unconfirmed.map { [.storeUnconfirmed(affectedSOPInstanceUID: $0)] } ?? []
    }

    /// Feeds one line; returns the events it completes.
    public mutating func feed(_ line: DCMTKLogLine) -> [Event] {
        let text = line.text
        switch line.level {
        case .debug:
            if text.hasPrefix("Association Received") {
                let rest = text.dropFirst("Association Received".count)
                host = rest.hasPrefix(": ") ? String(rest.dropFirst(2)) : nil
                calling = nil
                called = nil
            } else if text.contains("BEGIN A-ASSOCIATE-RQ") {
                inRequestDump = true
            } else if text.contains("END A-ASSOCIATE-RQ") {
                inRequestDump = false
            } else if inRequestDump, text.hasPrefix("Calling Application Name:") {
                calling = value(after: "Calling Application Name:", in: text)
            } else if inRequestDump, text.hasPrefix("Called Application Name:") {
                called = value(after: "Called Application Name:", in: text)
            } else if text.hasPrefix("Message Type") {
                inStoreRequestDump = text.hasSuffix(": C-STORE RQ")
                if inStoreRequestDump {
                    affectedSOPInstanceUID = nil
                    return takeUnconfirmed()
                }
            } else if inStoreRequestDump, text.hasPrefix("Affected SOP Instance UID") {
                affectedSOPInstanceUID = text.split(separator: ":", maxSplits: 1).last.map {
                    $0.trimmingCharacters(in: " ")
                }
                unconfirmed = affectedSOPInstanceUID
            } else if text.contains("END DIMSE MESSAGE") {
                inStoreRequestDump = false
            }
            return []
        case .info:
            if text.hasPrefix("Association Acknowledged") {
                // A previous association whose end was not logged as such ends here at the latest.
                let missedClose: [Event] = open ? takeUnconfirmed() + [.associationClosed(aborted: true)] : []
                open = true
                return missedClose + [
                    .associationOpened(peerHost: host, callingAETitle: calling, calledAETitle: called)
                ]
            }
            if let reason = Self.rejectionReason(text) {
                // storescp 3.6.7's rejections (storescp.cc, acceptAssociation): all permanent, by the service user.
                return [
                    .associationRejected(
                        peerHost: host, callingAETitle: calling, calledAETitle: called, result: "Rejected Permanent",
                        source: "Service User", reason: reason)
                ]
            }
            if open, text.trimmingCharacters(in: " ") == "(but no valid presentation contexts)" {
                return [
                    .associationRejected(
                        peerHost: host, callingAETitle: calling, calledAETitle: called, result: "Accepted",
                        source: "Service User", reason: "No Presentation Context Accepted")
                ]
            }
            if text.hasPrefix("storing DICOM file: ") {
                unconfirmed = nil
                defer { affectedSOPInstanceUID = nil }
                return [
                    .fileStored(
                        path: String(text.dropFirst("storing DICOM file: ".count)),
                        affectedSOPInstanceUID: affectedSOPInstanceUID)
                ]
            }
            if text.hasPrefix("Association Release") || text.hasPrefix("Association Aborted")
                || text.hasPrefix("Peer aborted Association") || text.hasPrefix("Association Terminated")
            {
                guard open else { return takeUnconfirmed() }
                open = false
                return takeUnconfirmed() + [.associationClosed(aborted: !text.hasPrefix("Association Release"))]
            }
            return []
        case .error, .fatal:
            // DCMTK's DUL answers an A-ASSOCIATE-RQ of another protocol version with an A-ASSOCIATE-RJ itself
            // (PS3.8 §9.3.4: ACSE provider, reason 2); storescp logs only this, without the request's AE titles.
            if text.hasPrefix("Receiving Association failed"), text.contains("Unsupported peer protocol") {
                return [
                    .failure(text),
                    .associationRejected(
                        peerHost: host, callingAETitle: nil, calledAETitle: nil, result: "Rejected Permanent",
                        source: "Service Provider (ACSE Related)", reason: "Protocol Version Not Supported"),
                ]
            }
            // A broken or timed-out connection (socket timeout, peer gone mid-data set) is logged only as
            // "DIMSE failure (aborting association)", with no "Association Aborted" after it.
            if text.hasPrefix("DIMSE failure (aborting association)"), open {
                open = false
                return [.failure(text)] + takeUnconfirmed() + [.associationClosed(aborted: true)]
            }
            return [.failure(text)]
        default:
            return []
        }
    }

    /// The reason of an A-ASSOCIATE-RJ storescp logs (in the words of ``PXError/associationRejected(result:source:reason:)``),
    /// `nil` for another line.
    static func rejectionReason(_ text: String) -> String? {
        if text.hasPrefix("Association Rejected: Bad Application Context Name") {
            return "App Context Name Not Supported"
        }
        if text.hasPrefix("Association Rejected: No Implementation Class UID") { return "No Reason" }
        if text.hasPrefix("Refusing Association") { return "No Reason" }
        return nil
    }

    /// The calling AE title of the current association.
    public var callingAETitle: String? { calling }

    private func value(after label: String, in text: String) -> String? {
        let v = text.dropFirst(label.count).trimmingCharacters(in: " ")
        return v.isEmpty ? nil : v
    }
}
