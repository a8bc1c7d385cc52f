import DICOMData

/// The outcome of a successful C-ECHO (PS3.7 §9.1.5).
public struct EchoResult: Hashable, Sendable {
    public var node: DICOMNode
    public var callingAETitle: String
    /// The C-ECHO-RSP status.
    public var status: DIMSEStatus
    /// Wall time from start to release, in seconds.
    public var elapsed: Double

    public init(node: DICOMNode, callingAETitle: String, status: DIMSEStatus, elapsed: Double) {
        self.node = node
        self.callingAETitle = callingAETitle
        self.status = status
        self.elapsed = elapsed
    }
}
