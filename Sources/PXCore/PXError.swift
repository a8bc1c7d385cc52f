import DICOMData
import PXStorage

/// An error from a px operation, whichever backend ran it.
///
/// Errors are built only through the named static factories, so every error carries a stable
/// ``Code`` (rendered as `error.code` in the JSON envelope) and a message for people. Exit codes are
/// chosen by the executables from the code; this library never exits.
public struct PXError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable, machine-readable error category.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        enum Kind: String, Hashable, Sendable {
            case connectionRefused, unknownHost, timeout, associationRejected
            case noAcceptablePresentationContext, dimseFailure, toolMissing, backendUnavailable
            case invalidResponse, aborted, io, usage, notDICOM, partialFailure, malformedFile, tooManyResponses,
                httpFailure, placeBusy, contentMismatch, interrupted
            case tlsUntrustedCertificate, tlsHostnameMismatch, tlsExpiredCertificate, tlsPeerNotTLS, tlsPeerExpectsTLS
            case tlsCertificateRequired, tlsHandshakeFailed, tlsConfiguration, tlsUnsupported
        }
        let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The peer refused the TCP connection.
        public static let connectionRefused = Code(.connectionRefused)
        /// A signal (SIGINT, SIGTERM) stopped the command.
        public static let interrupted = Code(.interrupted)
        /// The peer's host name could not be resolved.
        public static let unknownHost = Code(.unknownHost)
        /// A connect, ACSE or DIMSE timeout, or the overall deadline, expired.
        public static let timeout = Code(.timeout)
        /// The peer answered A-ASSOCIATE-RJ (PS3.8 §9.3.4).
        public static let associationRejected = Code(.associationRejected)
        /// The association was accepted but no presentation context was (PS3.8 §9.3.3.2).
        public static let noAcceptablePresentationContext = Code(.noAcceptablePresentationContext)
        /// The peer answered with a DIMSE failure status (PS3.7 Annex C).
        public static let dimseFailure = Code(.dimseFailure)
        /// A DCMTK tool is not installed.
        public static let toolMissing = Code(.toolMissing)
        /// The requested backend is not available in this build.
        public static let backendUnavailable = Code(.backendUnavailable)
        /// The peer or tool answered something px cannot interpret.
        public static let invalidResponse = Code(.invalidResponse)
        /// The association was aborted (A-ABORT or A-P-ABORT).
        public static let aborted = Code(.aborted)
        /// A local file-system operation failed.
        public static let io = Code(.io)
        /// The request itself is invalid.
        public static let usage = Code(.usage)
        /// An input file is not a DICOM Part 10 file (px-push skips it).
        public static let notDICOM = Code(.notDICOM)
        /// An input file is DICOM but its element structure is broken (px-push refuses to send it).
        public static let malformedFile = Code(.malformedFile)
        /// The peer sent more responses than the bound allows (px-find --max-responses); the query was cancelled.
        public static let tooManyResponses = Code(.tooManyResponses)
        /// Some items of a batch failed (px-push: files not stored); the data lists which.
        public static let partialFailure = Code(.partialFailure)
        /// A DICOMweb service (PS3.18) answered an HTTP error status.
        public static let httpFailure = Code(.httpFailure)
        /// Another px is writing the place (it holds the place's lock) and did not finish within
        /// `--lock-timeout`.
        public static let placeBusy = Code(.placeBusy)
        /// Two places hold one SOP Instance UID with different bytes (`px-sync --verify`).
        public static let contentMismatch = Code(.contentMismatch)

        /// DICOM TLS (PS3.15 Annex B.9) failures, one code each (see ``TLSFailure``).
        public static func tls(_ failure: TLSFailure) -> Code {
            switch failure {
            case .untrustedCertificate: return Code(.tlsUntrustedCertificate)
            case .hostnameMismatch: return Code(.tlsHostnameMismatch)
            case .expiredCertificate: return Code(.tlsExpiredCertificate)
            case .peerNotTLS: return Code(.tlsPeerNotTLS)
            case .peerExpectsTLS: return Code(.tlsPeerExpectsTLS)
            case .certificateRequired: return Code(.tlsCertificateRequired)
            case .handshakeFailed: return Code(.tlsHandshakeFailed)
            case .configuration: return Code(.tlsConfiguration)
            case .unsupported: return Code(.tlsUnsupported)
            }
        }

        public var description: String { kind.rawValue }
    }

    /// What went wrong with DICOM TLS; each is its own ``Code`` (`tlsUntrustedCertificate`, ...). A TLS
    /// handshake that does not finish in time is a ``Code/timeout`` with `details.timeout = "TLS handshake"`.
    public enum TLSFailure: String, Hashable, Sendable, CaseIterable {
        /// The peer's certificate is not signed by a trusted CA, or the peer does not trust ours.
        case untrustedCertificate
        /// The server's certificate does not name the host or IP address dialled.
        case hostnameMismatch
        /// A certificate is outside its validity dates.
        case expiredCertificate
        /// TLS was asked for but the peer speaks plain DICOM (or not TLS).
        case peerNotTLS
        /// Plain DICOM was used but the peer expects TLS.
        case peerExpectsTLS
        /// The peer requires a client certificate and none was given.
        case certificateRequired
        /// Another handshake failure (an alert, no common version or cipher suite).
        case handshakeFailed
        /// A TLS file cannot be read or the settings are incomplete.
        case configuration
        /// The backend's tool cannot do what was asked over TLS (DCMTK 3.6.7's movescu and getscu).
        case unsupported
    }

    /// The error category.
    public let code: Code
    /// A one-line explanation for people.
    public let message: String
    /// Extra structured facts (e.g. `result`, `source`, `reason` for a rejection, `status` for a
    /// DIMSE failure), rendered as `error.details` in the JSON envelope.
    public let details: [String: String]
    /// The DIMSE status for ``Code/dimseFailure``.
    public let status: DIMSEStatus?

    private init(_ code: Code, _ message: String, details: [String: String] = [:], status: DIMSEStatus? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.status = status
    }

    public var description: String { "\(code): \(message)" }

    /// The peer at `host:port` refused the connection.
    public static func connectionRefused(host: String, port: Int, detail: String? = nil) -> PXError {
        PXError(
            .connectionRefused, "connection refused by \(host):\(port)", details: detail.map { ["detail": $0] } ?? [:])
    }

    /// `host` could not be resolved.
    public static func unknownHost(_ host: String) -> PXError {
        PXError(.unknownHost, "unknown host: \(host)")
    }

    /// A timeout; `what` names it (`"connect"`, `"ACSE"`, `"DIMSE"`, `"deadline"`).
    public static func timeout(_ what: String, seconds: Double? = nil, detail: String? = nil) -> PXError {
        var text = "\(what) timeout"
        if let seconds { text += " after \(Timeouts.format(seconds)) s" }
        if let detail { text += " (\(detail))" }
        return PXError(.timeout, text, details: ["timeout": what])
    }

    /// The association was rejected; texts as DCMTK prints them (PS3.8 §9.3.4 Table 9-21).
    public static func associationRejected(result: String, source: String, reason: String) -> PXError {
        PXError(
            .associationRejected, "association rejected: \(reason) (\(result), \(source))",
            details: ["result": result, "source": source, "reason": reason])
    }

    /// No proposed presentation context was accepted.
    public static func noAcceptablePresentationContext(_ detail: String? = nil) -> PXError {
        PXError(.noAcceptablePresentationContext, detail ?? "no acceptable presentation contexts")
    }

    /// The operation ended with a failure status.
    public static func dimseFailure(_ status: DIMSEStatus, operation: String) -> PXError {
        PXError(
            .dimseFailure, "\(operation) failed: \(status.name) (\(status.hexCode))",
            details: ["status": status.hexCode, "statusName": status.name], status: status)
    }

    /// A DCMTK tool is missing.
    public static func toolMissing(_ tool: String) -> PXError {
        PXError(
            .toolMissing,
            "\(tool) not found: install DCMTK (apt-get install dcmtk) or use --backend native",
            details: ["tool": tool])
    }

    /// A backend is not available.
    public static func backendUnavailable(_ name: String, reason: String) -> PXError {
        PXError(.backendUnavailable, "backend \(name) is not available: \(reason)", details: ["backend": name])
    }

    /// Output px cannot interpret.
    public static func invalidResponse(_ message: String) -> PXError {
        PXError(.invalidResponse, message)
    }

    /// The association was aborted.
    public static func aborted(_ message: String = "association aborted") -> PXError {
        PXError(.aborted, message)
    }

    /// A signal stopped the command (px-move, px-get: after C-CANCEL, PS3.7 §9.3.2.3, §9.3.3.3); `detail` says
    /// what became of the operation in progress.
    public static func interrupted(signal: Int32, detail: String) -> PXError {
        let name = signal == 2 ? "SIGINT" : signal == 15 ? "SIGTERM" : "signal \(signal)"
        return PXError(
            .interrupted, "interrupted by \(name): \(detail)", details: ["signal": name, "signalNumber": "\(signal)"])
    }

    /// The signal number of an ``Code/interrupted`` error.
    public var signal: Int32? { code == .interrupted ? details["signalNumber"].flatMap { Int32($0) } : nil }

    /// A file-system failure.
    public static func io(_ message: String, path: String? = nil) -> PXError {
        PXError(.io, path.map { "\(message): \($0)" } ?? message, details: path.map { ["path": $0] } ?? [:])
    }

    /// A DICOM TLS failure (PS3.15 Annex B.9), named by its own code.
    public static func tls(_ failure: TLSFailure, _ message: String) -> PXError {
        PXError(Code.tls(failure), message, details: ["tls": failure.rawValue])
    }

    /// An invalid request.
    public static func usage(_ message: String) -> PXError {
        PXError(.usage, message)
    }

    /// `path` is not a DICOM Part 10 file (PS3.10 §7.1), or lacks the SOP Class/Instance UIDs.
    public static func notDICOM(path: String, reason: String) -> PXError {
        PXError(.notDICOM, "not a DICOM file: \(path): \(reason)", details: ["path": path])
    }

    /// `path` is a Part 10 file whose element structure is broken (a length past the end, an odd length,
    /// unclosed encapsulated Pixel Data, PS3.5 §7.1, §A.4): sending it would put a broken data set on the wire.
    public static func malformedFile(path: String, reason: String) -> PXError {
        PXError(.malformedFile, "malformed DICOM file: \(path): \(reason)", details: ["path": path])
    }

    /// More than `limit` C-FIND responses arrived: the query was cancelled (PS3.7 §9.3.2.3) and its answer is
    /// incomplete.
    public static func tooManyResponses(limit: Int) -> PXError {
        PXError(
            .tooManyResponses,
            "more than \(limit) responses: the query was cancelled (raise --max-responses, 0 for no bound)",
            details: ["limit": String(limit)])
    }

    /// `failed` of `total` items failed.
    public static func partialFailure(failed: Int, total: Int, what: String) -> PXError {
        PXError(
            .partialFailure, "\(failed) of \(total) \(what) failed",
            details: ["failed": String(failed), "total": String(total)])
    }

    /// Sub-operations of a C-GET or C-MOVE that failed or ended with a warning (final status 0xB000, or a
    /// failure with some completed, PS3.4 §C.4.2.1.5, §C.4.3.1.5): the run is a partial failure, never a
    /// success. `failedSOPInstanceUIDs` are those the peer named (Failed SOP Instance UID List (0008,0058)).
    /// `limitation`: a limit of the backend that may explain it (`details.limitation`). `notStored`: each
    /// instance that arrived and px did not store, with the status px answered and why (`details.notStored`).
    public static func subOperationsFailed(
        operation: String, failed: Int, warning: Int, total: Int, failedSOPInstanceUIDs: [String],
        limitation: String? = nil, notStored: [String] = []
    ) -> PXError {
        var message = "\(operation): \(failed) of \(total) sub-operations failed"
        if warning > 0 { message += ", \(warning) ended with a warning" }
        if !failedSOPInstanceUIDs.isEmpty {
            message += " (the peer names \(failedSOPInstanceUIDs.count) in its Failed SOP Instance UID List)"
        }
        var details = ["failed": String(failed), "warning": String(warning), "total": String(total)]
        if !failedSOPInstanceUIDs.isEmpty {
            details["failedSOPInstanceUIDs"] = failedSOPInstanceUIDs.joined(separator: "\\")
        }
        if !notStored.isEmpty {
            // Each names the instance, the status px answered and why: not only in an info-level log line.
            let text = notStored.joined(separator: "; ")
            message += "; px did not store \(notStored.count): \(text)"
            details["notStored"] = text
        }
        if let limitation {
            message += "; \(limitation)"
            details["limitation"] = limitation
        }
        return PXError(.partialFailure, message, details: details)
    }

    /// A DICOMweb service answered HTTP `status` (PS3.18 §8.7.3) to `method` `url`; `message` is the
    /// archive's own explanation when it gave one. `url` must carry no credentials.
    public static func httpFailure(status: Int, method: String, url: String, message: String?) -> PXError {
        var details = ["httpStatus": String(status), "url": url]
        if let message { details["archiveMessage"] = message }
        return PXError(
            .httpFailure, "\(method) \(url) answered HTTP \(status)" + (message.map { ": \($0)" } ?? ""),
            details: details)
    }
}

extension PXError {
    /// A received C-STORE whose data set holds another SOP Instance UID than the request's Affected SOP
    /// Instance UID (PS3.7 §9.1.1.1): answered 0xA900 (Error: Data Set does not match SOP Class, PS3.4
    /// §B.2.3) and not stored.
    public static func sopInstanceMismatch(request: String, dataSet: String) -> PXError {
        .invalidResponse(
            "C-STORE refused (0xA900): the data set's SOP Instance UID \(dataSet) is not the request's "
                + "Affected SOP Instance UID \(request)")
    }

    /// A storage-engine error: `usage` for an invalid layout, `io` for a file-system failure or a path
    /// placement refuses (a symbolic link where a folder or file goes).
    public static func storage(_ error: StorageError) -> PXError {
        if error.code == .busy { return .placeBusy(error.message, path: error.path ?? "") }
        return error.code == .layout ? .usage(error.message) : .io(error.message, path: error.path)
    }

    /// Instances both places hold under the same SOP Instance UID whose bytes differ (`differences`: each
    /// UID with what each side holds), found by `px-sync --verify`.
    public static func contentMismatch(_ differences: [(uid: String, source: String, destination: String)])
        -> PXError
    {
        let listed = differences.prefix(10).map { "\($0.uid) (source \($0.source), destination \($0.destination))" }
        return PXError(
            .contentMismatch,
            "\(differences.count) instance(s) differ between source and destination: "
                + listed.joined(separator: "; ") + (differences.count > 10 ? "; ..." : ""),
            details: ["differing": String(differences.count), "first": differences.first?.uid ?? ""])
    }

    /// Another px holds the lock of the place (`lock` is its lock file) for longer than the wait allowed.
    public static func placeBusy(_ message: String, path lock: String) -> PXError {
        PXError(.placeBusy, "\(message): \(lock)", details: ["lock": lock])
    }

    /// `error` as a ``PXError``: itself when it is one, otherwise an I/O error that names it (an error no
    /// layer below explained: cancellation, a failed read of a temporary file, ...).
    public static func from(_ error: any Error) -> PXError {
        if let storage = error as? StorageError { return .storage(storage) }
        return error as? PXError ?? .io("\(error)")
    }

    /// Runs `body`, reporting what it throws with ``from(_:)``: the edge where untyped errors (task groups,
    /// streams, subprocesses) become the typed errors of the backends (``PeerBackend``).
    public static func catching<T>(_ body: () async throws -> T) async throws(PXError) -> T {
        do {
            return try await body()
        } catch {
            throw from(error)
        }
    }

    /// ``catching(_:)`` for a receiver that runs until its task is cancelled: the cancellation is its
    /// normal end, not an error.
    public static func catchingUntilCancelled(_ body: () async throws -> Void) async throws(PXError) {
        do {
            try await body()
        } catch is CancellationError {
            return
        } catch {
            throw from(error)
        }
    }
}
