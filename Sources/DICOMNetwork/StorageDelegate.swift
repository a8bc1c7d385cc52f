import DICOMProtocol

/// A SOP instance received by a C-STORE SCP (``DICOMServer``, or the C-GET sub-operations of
/// ``DICOMAssociation/get(_:model:level:storage:directory:progress:)``), already on disk as a Part 10 file.
public struct ReceivedInstance: Sendable, Hashable {
    /// The temporary Part 10 file; the delegate moves or deletes it.
    public var path: String
    /// Affected SOP Class UID of the C-STORE-RQ.
    public var sopClassUID: String
    /// Affected SOP Instance UID of the C-STORE-RQ.
    public var sopInstanceUID: String
    /// The transfer syntax of the presentation context: the data set's encoding.
    public var transferSyntaxUID: String
    /// The peer's AE title (the calling AE title when the peer requested the association).
    public var callingAETitle: String
    /// The AE title the peer called.
    public var calledAETitle: String
    /// The size of the data set in bytes, as received.
    public var dataSetLength: Int
    /// The size of the whole file (preamble, meta information and data set).
    public var fileLength: Int
    /// Move Originator AE Title and Message ID, for C-STOREs that are sub-operations of a C-MOVE.
    public var moveOriginatorAETitle: String?

    public init(
        path: String,
        sopClassUID: String,
        sopInstanceUID: String,
        transferSyntaxUID: String,
        callingAETitle: String,
        calledAETitle: String,
        dataSetLength: Int,
        fileLength: Int,
        moveOriginatorAETitle: String? = nil
    ) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
        self.callingAETitle = callingAETitle
        self.calledAETitle = calledAETitle
        self.dataSetLength = dataSetLength
        self.fileLength = fileLength
        self.moveOriginatorAETitle = moveOriginatorAETitle
    }
}

/// Places received instances and decides the C-STORE-RSP status (PS3.4 §B.2.3).
///
/// Called once per complete instance, after its file has been written and closed. The C-STORE-RSP is sent
/// only when this returns, so returning ``DIMSEStatus/success`` promises the instance is safely stored.
/// A thrown error is answered with ``DIMSEStatus/outOfResources`` (0xA700); the temporary file is then removed
/// if it still exists.
public protocol StorageDelegate: Sendable {
    /// Places the file of a received instance.
    func didReceive(_ instance: ReceivedInstance) async throws -> DIMSEStatus
}
