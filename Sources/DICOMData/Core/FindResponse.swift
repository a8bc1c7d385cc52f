/// One C-FIND-RSP (PS3.7 §9.1.2.1): its status and, for a pending response, the matching identifier. The DIMSE
/// client yields it, and every backend's C-FIND (and QIDO-RS, one per match) reports it.
public struct FindResponse: Sendable {
    public var status: DIMSEStatus
    /// The matching identifier of a pending response.
    public var identifier: DataSet?
    /// The response's Error Comment (0000,0902), when the peer sent one.
    public var errorComment: String?

    public init(status: DIMSEStatus, identifier: DataSet?, errorComment: String? = nil) {
        self.status = status
        self.identifier = identifier
        self.errorComment = errorComment
    }
}
