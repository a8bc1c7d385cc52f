import DICOMData

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
}
