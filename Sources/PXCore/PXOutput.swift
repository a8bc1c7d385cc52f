import DICOMData
import PXStorage

/// The one place px's JSON is built, from the typed results, so every backend's output is the same.
///
/// Every command prints one envelope (NDJSON commands print it as their last line):
/// `{"status": "success"|"error", "backend": ..., "command": [argv...], "data": ..., "error": {...}}`
/// with `error` only on failure.
public enum PXOutput {
    /// The envelope around a command's data. `commandLine`, when given, is the `command` instead of the argv:
    /// pypx's shape, a string (px-find's pypx format, ``findscuCommandLine(_:level:model:connection:)``).
    public static func envelope(
        backend: String, command: [String], data: JSONValue?, error: PXError? = nil, commandLine: String? = nil
    ) -> JSONValue {
        let (leading, trailing) = envelopeMembers(
            backend: backend, command: command, error: error, commandLine: commandLine)
        return .object(leading + [JSONMember("data", data ?? .null)] + trailing)
    }

    /// The envelope's members before `data` and after it, for a writer that streams `data` between them
    /// (``JSONStreamWriter``).
    public static func envelopeMembers(
        backend: String, command: [String], error: PXError? = nil, commandLine: String? = nil
    ) -> (leading: [JSONMember], trailing: [JSONMember]) {
        let leading = [
            JSONMember("status", .string(error == nil ? "success" : "error")),
            JSONMember("backend", .string(backend)),
            JSONMember("command", commandLine.map(JSONValue.string) ?? .array(command.map(JSONValue.string))),
        ]
        return (leading, error.map { [JSONMember("error", json($0))] } ?? [])
    }

    /// `{"code": ..., "message": ..., "details": {...}}`, details only when there are some (``ErrorOutput``).
    public static func json(_ error: PXError) -> JSONValue { JSONValueEncoder.encode(ErrorOutput(error)) }

    /// `{"code": "0xa801", "name": "Refused: MoveDestinationUnknown", "category": "failure"}` (``StatusOutput``).
    public static func json(_ status: DIMSEStatus) -> JSONValue { JSONValueEncoder.encode(StatusOutput(status)) }

    /// px-echo's data.
    public static func json(_ result: EchoResult) -> JSONValue {
        .object([
            JSONMember("host", .string(result.node.host)),
            JSONMember("port", .integer(result.node.port)),
            JSONMember("calledAETitle", .string(result.node.calledAETitle)),
            JSONMember("callingAETitle", .string(result.callingAETitle)),
            JSONMember("dimseStatus", json(result.status)),
        ])
    }

    /// A move's data.
    public static func json(_ result: MoveResult) -> JSONValue {
        var members = [
            JSONMember("destination", .string(result.request.destination)),
            JSONMember("level", .string(result.request.level.dicomValue)),
            JSONMember("model", .string(result.request.model.rawValue)),
        ]
        // A whole patient (PS3.4 §C.6.1.1.2) is named by its PatientID; it has no StudyInstanceUID.
        members.append(
            result.request.level == .patient
                ? JSONMember("PatientID", .string(result.request.patientID ?? ""))
                : JSONMember("StudyInstanceUID", .string(result.request.studyInstanceUID)))
        if let series = result.request.seriesInstanceUID {
            members.append(JSONMember("SeriesInstanceUID", .string(series)))
        }
        if !result.request.sopInstanceUIDs.isEmpty {
            members.append(JSONMember("SOPInstanceUIDs", .array(result.request.sopInstanceUIDs.map(JSONValue.string))))
        }
        members += [
            JSONMember("dimseStatus", json(result.status)),
            JSONMember("completed", .integer(result.completed)),
            JSONMember("failed", .integer(result.failed)),
            JSONMember("warning", .integer(result.warning)),
            JSONMember("responses", .integer(result.responses)),
        ]
        if !result.failedSOPInstanceUIDs.isEmpty {
            // PS3.4 §C.4.2.1.3.2: the instances the peer could not send, when it names them.
            members.append(
                JSONMember("failedSOPInstanceUIDs", .array(result.failedSOPInstanceUIDs.map(JSONValue.string))))
        }
        return .object(members)
    }

    /// A progress line for stderr or NDJSON.
    public static func json(_ progress: MoveProgress) -> JSONValue {
        .object([
            JSONMember("remaining", progress.remaining.map { .integer($0) } ?? .null),
            JSONMember("completed", .integer(progress.completed)),
            JSONMember("failed", .integer(progress.failed)),
            JSONMember("warning", .integer(progress.warning)),
            JSONMember("dimseStatus", json(progress.status)),
        ])
    }

    /// One px-listen event, `{"event": "instanceReceived", ...}`.
    public static func json(_ event: ListenEvent) -> JSONValue {
        func opt(_ s: String?) -> JSONValue { s.map(JSONValue.string) ?? .null }
        switch event {
        case .listening(let port, let ae):
            return .object([
                JSONMember("event", .string("listening")), JSONMember("port", .integer(port)),
                JSONMember("aeTitle", .string(ae)),
            ])
        case .associationOpened(let host, let calling, let called, let id):
            return .object([
                JSONMember("event", .string("associationOpened")), JSONMember("peerHost", opt(host)),
                JSONMember("callingAETitle", opt(calling)), JSONMember("calledAETitle", opt(called)),
                JSONMember("association", id.map { .integer(Int($0)) } ?? .null),
            ])
        case .associationClosed(let host, let calling, let aborted, let id):
            return .object([
                JSONMember("event", .string("associationClosed")), JSONMember("peerHost", opt(host)),
                JSONMember("callingAETitle", opt(calling)), JSONMember("aborted", .bool(aborted)),
                JSONMember("association", id.map { .integer(Int($0)) } ?? .null),
            ])
        case .instanceReceived(let i):
            return .object([
                JSONMember("event", .string("instanceReceived")),
                JSONMember("path", .string(i.path)),
                JSONMember("SOPClassUID", .string(i.sopClassUID)),
                JSONMember("SOPInstanceUID", .string(i.sopInstanceUID)),
                JSONMember("StudyInstanceUID", .string(i.studyInstanceUID)),
                JSONMember("SeriesInstanceUID", .string(i.seriesInstanceUID)),
                JSONMember("callingAETitle", opt(i.callingAETitle)),
                JSONMember("bytes", .integer(i.bytes)),
                JSONMember("transferSyntaxUID", .string(i.transferSyntaxUID)),
                JSONMember("duplicate", opt(i.duplicate?.rawValue)),
                JSONMember("association", i.association.map { .integer(Int($0)) } ?? .null),
            ])
        case .seriesComplete(let c):
            return .object([
                JSONMember("event", .string("seriesComplete")), JSONMember("directory", .string(c.directory)),
                JSONMember("SeriesInstanceUID", .string(c.seriesInstanceUID)),
                JSONMember("StudyInstanceUID", .string(c.studyInstanceUID)),
                JSONMember("PatientID", .string(c.patientID)),
                JSONMember("instances", .integer(c.instances)), JSONMember("reason", .string(c.reason)),
            ])
        case .storeFailed(let path, let uid, let error):
            return .object([
                JSONMember("event", .string("storeFailed")), JSONMember("path", opt(path)),
                JSONMember("SOPInstanceUID", opt(uid)), JSONMember("error", json(error)),
            ])
        }
    }
}
