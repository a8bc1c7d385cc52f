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
        /// Present only with `--commit`: the storage commitment report (``CommitmentOutput``).
        public var commitment: CommitmentOutput?

        public init(_ result: PushResult) {
            self.init(result, files: result.files.map(PushFileOutput.init))
        }

        /// `result`'s counts with `files` for its files: none when they went to a ``JSONArraySpool`` for
        /// `files`, which takes this member's place in the envelope.
        public init(_ result: PushResult, files: [PushFileOutput]) {
            self.files = files
            total = result.files.count
            completed = result.completed
            warning = result.warning
            failed = result.failed
            associations = result.associations
            commitment = result.commitment.map(CommitmentOutput.init)
        }
    }

    /// A storage commitment report (PS3.4 §J.3.3): `{"transactionUID", "requested", "committed": [{"sopClassUID",
    /// "sopInstanceUID"}], "failed": [{"sopClassUID", "sopInstanceUID", "failureReason"}], "sameAssociation"}`;
    /// `failureReason` is the Failure Reason (0008,1197) code as a number (274 is 0x0112, no such object instance).
    public struct CommitmentOutput: Encodable {
        public struct Instance: Encodable {
            public var sopClassUID: String
            public var sopInstanceUID: String
            public var failureReason: UInt16?

            public init(_ instance: CommitmentInstance) {
                sopClassUID = instance.sopClassUID
                sopInstanceUID = instance.sopInstanceUID
                failureReason = instance.failureReason
            }
        }
        public var transactionUID: String
        public var requested: Int
        public var committed: [Instance]
        public var failed: [Instance]
        public var sameAssociation: Bool

        public init(_ result: CommitmentResult) {
            transactionUID = result.transactionUID
            requested = result.requested.count
            committed = result.committed.map(Instance.init)
            failed = result.failed.map(Instance.init)
            sameAssociation = result.sameAssociation
        }
    }

    /// One px-push file (``PushFileOutput``).
    public static func json(_ file: PushFileResult) -> JSONValue { JSONValueEncoder.encode(PushFileOutput(file)) }

    /// px-push's data (``PushOutput``).
    public static func json(_ result: PushResult) -> JSONValue { JSONValueEncoder.encode(PushOutput(result)) }
}
