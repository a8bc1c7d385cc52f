import DICOMData

/// The one place px's JSON is built, from the typed results, so every backend's output is the same.
///
/// Every command prints one envelope (NDJSON commands print it as their last line):
/// `{"status": "success"|"error", "backend": ..., "command": [argv...], "data": ..., "error": {...}}`
/// with `error` only on failure.
public enum PXOutput {
    /// The envelope's members before `data`: `{"status": "success"|"error", "backend", "command"}`.
    public struct EnvelopeHead: Encodable {
        public var status: String
        public var backend: String
        public var command: Command

        /// The command that ran: its argv, or one command line (pypx's shape, a string).
        public enum Command: Encodable {
            case argv([String])
            case line(String)

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .argv(let argv): try container.encode(argv)
                case .line(let line): try container.encode(line)
                }
            }
        }

        public init(backend: String, command: [String], failed: Bool, commandLine: String? = nil) {
            status = failed ? "error" : "success"
            self.backend = backend
            self.command = commandLine.map(Command.line) ?? .argv(command)
        }
    }

    /// The envelope's members after `data`: `{"error": {...}}` on failure, none on success.
    public struct EnvelopeTail: Encodable {
        public var error: ErrorOutput?

        public init(error: PXError?) { self.error = error.map(ErrorOutput.init) }
    }

    /// The envelope around a command's data. `commandLine`, when given, is the `command` instead of the argv:
    /// pypx's shape, a string (px-find's pypx format, ``findscuCommandLine(_:level:model:address:)``).
    public static func envelope(
        backend: String, command: [String], data: JSONValue?, error: PXError? = nil, commandLine: String? = nil
    ) -> JSONValue {
        let head = EnvelopeHead(backend: backend, command: command, failed: error != nil, commandLine: commandLine)
        // `data` is JSON already (a command's typed data encoded, or DICOM JSON): it goes in as it is.
        return .object(
            members(of: head) + [JSONMember("data", data ?? .null)] + members(of: EnvelopeTail(error: error)))
    }

    /// The members of the object `value` encodes to, in its order.
    static func members(of value: some Encodable) -> [JSONMember] {
        guard case .object(let members) = JSONValueEncoder.encode(value) else {
            preconditionFailure("PXOutput: \(type(of: value)) does not encode to an object")
        }
        return members
    }

    /// `{"code": ..., "message": ..., "details": {...}}`, details only when there are some (``ErrorOutput``).
    public static func json(_ error: PXError) -> JSONValue { JSONValueEncoder.encode(ErrorOutput(error)) }

    /// `{"code": "0xa801", "name": "Refused: MoveDestinationUnknown", "category": "failure"}` (``StatusOutput``).
    public static func json(_ status: DIMSEStatus) -> JSONValue { JSONValueEncoder.encode(StatusOutput(status)) }
}
