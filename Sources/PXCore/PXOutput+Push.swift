import DICOMData

extension PXOutput {
    /// One px-push file: `{"path", "SOPClassUID", "SOPInstanceUID", "transferSyntaxUID", "status",
    /// "dimseStatus", "error", "warning", "attempts"}`; `status` is `success`, `warning` or `failed`;
    /// `warning` notes a file sent despite a disagreement (its meta and data set UIDs), `attempts` counts
    /// the associations the file was sent on.
    public struct PushFileOutput: Encodable {
        public var path: String
        public var sopClassUID: Nullable<String>
        public var sopInstanceUID: Nullable<String>
        public var transferSyntaxUID: Nullable<String>
        public var status: String
        public var dimseStatus: Nullable<StatusOutput>
        public var error: Nullable<ErrorOutput>
        public var warning: Nullable<String>
        public var attempts: Int

        enum CodingKeys: String, CodingKey {
            case path
            case sopClassUID = "SOPClassUID"
            case sopInstanceUID = "SOPInstanceUID"
            case transferSyntaxUID
            case status
            case dimseStatus
            case error
            case warning
            case attempts
        }

        public init(_ file: PushFileResult) {
            func opt(_ s: String) -> Nullable<String> { Nullable(s.isEmpty ? nil : s) }
            path = file.file.path
            sopClassUID = opt(file.file.sopClassUID)
            sopInstanceUID = opt(file.file.sopInstanceUID)
            transferSyntaxUID = opt(file.file.transferSyntaxUID)
            status = file.succeeded ? (file.status?.category == .warning ? "warning" : "success") : "failed"
            dimseStatus = Nullable(file.status.map(StatusOutput.init))
            error = Nullable(file.error.map(ErrorOutput.init))
            warning = Nullable(file.file.warning)
            attempts = file.attempts
        }
    }

    /// px-push's data: the files in order and the counts.
    public struct PushOutput: Encodable {
        public var files: [PushFileOutput]
        public var total: Int
        public var completed: Int
        public var warning: Int
        public var failed: Int
        public var associations: Int

        public init(_ result: PushResult) {
            files = result.files.map(PushFileOutput.init)
            total = result.files.count
            completed = result.completed
            warning = result.warning
            failed = result.failed
            associations = result.associations
        }
    }

    /// One px-push file (``PushFileOutput``).
    public static func json(_ file: PushFileResult) -> JSONValue { JSONValueEncoder.encode(PushFileOutput(file)) }

    /// px-push's data (``PushOutput``).
    public static func json(_ result: PushResult) -> JSONValue { JSONValueEncoder.encode(PushOutput(result)) }
}
