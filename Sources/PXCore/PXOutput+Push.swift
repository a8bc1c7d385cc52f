import DICOMData

extension PXOutput {
    /// One px-push file: `{"path", "SOPClassUID", "SOPInstanceUID", "transferSyntaxUID", "status",
    /// "dimseStatus", "error", "warning", "attempts"}`; `status` is `success`, `warning` or `failed`;
    /// `warning` notes a file sent despite a disagreement (its meta and data set UIDs), `attempts` counts
    /// the associations the file was sent on.
    public static func json(_ file: PushFileResult) -> JSONValue {
        func opt(_ s: String) -> JSONValue { s.isEmpty ? .null : .string(s) }
        let outcome = file.succeeded ? (file.status?.category == .warning ? "warning" : "success") : "failed"
        return .object([
            JSONMember("path", .string(file.file.path)),
            JSONMember("SOPClassUID", opt(file.file.sopClassUID)),
            JSONMember("SOPInstanceUID", opt(file.file.sopInstanceUID)),
            JSONMember("transferSyntaxUID", opt(file.file.transferSyntaxUID)),
            JSONMember("status", .string(outcome)),
            JSONMember("dimseStatus", file.status.map { json($0) } ?? .null),
            JSONMember("error", file.error.map { json($0) } ?? .null),
            JSONMember("warning", file.file.warning.map { .string($0) } ?? .null),
            JSONMember("attempts", .integer(file.attempts)),
        ])
    }

    /// px-push's data: the files in order and the counts.
    public static func json(_ result: PushResult) -> JSONValue {
        .object([
            JSONMember("files", .array(result.files.map { json($0) })),
            JSONMember("total", .integer(result.files.count)),
            JSONMember("completed", .integer(result.completed)),
            JSONMember("warning", .integer(result.warning)),
            JSONMember("failed", .integer(result.failed)),
            JSONMember("associations", .integer(result.associations)),
        ])
    }
}
