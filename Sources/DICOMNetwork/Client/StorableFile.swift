import DICOMData
import DICOMProtocol

/// A Part 10 file ready for C-STORE: its SOP class and instance, transfer syntax, and where the data set
/// starts (PS3.10 §7.1), read from the file meta information only.
public struct StorableFile: Sendable, Hashable {
    public var path: String
    public var sopClassUID: String
    public var sopInstanceUID: String
    public var transferSyntaxUID: String
    /// The largest data set a deflated file may inflate to when it is sent uncompressed (PS3.5 §A.5).
    public var maximumInflatedSize: Int = StorableFile.defaultMaximumInflatedSize
    /// The default ``maximumInflatedSize``: 256 MiB.
    public static let defaultMaximumInflatedSize = 256 << 20
    /// Where the file sits in a place and what the place's index recorded of it: when set, the file is opened
    /// below the place's root without following links and must still be that file before a byte goes out
    /// (``open()``); when `nil` (a file named by the user) ``path`` is opened as given.
    public var indexed: IndexedFile?

    /// Reads the meta information of a file.
    ///
    /// - Throws: ``DICOMNetworkError/invalidArgument(_:)`` when it is not a Part 10 file with the needed
    ///   meta elements; DICOMData's error when it cannot be read.
    public init(readingHeaderOf path: String) throws {
        let file = try Part10File.readHeader(contentsOf: path, stopBefore: Tag(0x0008, 0x0000))
        guard
            let sopClass = file.meta.string(.mediaStorageSOPClassUID),
            let sopInstance = file.meta.string(.mediaStorageSOPInstanceUID)
        else {
            throw DICOMNetworkError.invalidArgument("\(path): no Media Storage SOP Class/Instance UID")
        }
        self.path = path
        self.sopClassUID = sopClass
        self.sopInstanceUID = sopInstance
        self.transferSyntaxUID = file.transferSyntax.uid
    }

    /// A file whose header was already read (px-push plans with DICOMData before opening an association).
    public init(
        path: String, sopClassUID: String, sopInstanceUID: String, transferSyntaxUID: String,
        maximumInflatedSize: Int = StorableFile.defaultMaximumInflatedSize, indexed: IndexedFile? = nil
    ) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
        self.maximumInflatedSize = maximumInflatedSize
        self.indexed = indexed
    }

    /// The transfer syntaxes this file can be sent in without losing anything, best first: its own (the data
    /// set goes out byte for byte, streamed from disk), then the lossless conversions
    /// (``DICOMData/TransferSyntax/losslessSendingSyntaxes``); none for a compressed file.
    public var sendableTransferSyntaxes: [String] {
        TransferSyntax(uid: self.transferSyntaxUID).losslessSendingSyntaxes.map(\.uid)
    }

    /// The transfer syntax lists to propose for this file (``DICOMData/TransferSyntax/sendingProposals``): its
    /// own syntax alone, then the lossless fallbacks.
    var proposals: [[String]] {
        TransferSyntax(uid: self.transferSyntaxUID).sendingProposals.map { $0.map(\.uid) }
    }

    /// The accepted context to send this file on with C-STORE: one for its SOP class where the sender has
    /// the SCU role of C-STORE (the requestor when `requestorSends`; for C-GET sub-operations the acceptor
    /// sends, to a requestor accepted as SCP, PS3.7 §D.3.3.4), in the first of ``sendableTransferSyntaxes``
    /// that such a context has: the file's own syntax whenever the peer accepted it, else a lossless
    /// conversion. A compressed file without a context in its own syntax has none.
    func context(in negotiated: NegotiatedAssociation, requestorSends: Bool) -> NegotiatedAssociation.Context? {
        let candidates = negotiated.acceptedContexts.filter {
            $0.abstractSyntax == self.sopClassUID && (requestorSends ? $0.requestorIsSCU : $0.requestorIsSCP)
        }
        for syntax in self.sendableTransferSyntaxes {
            if let context = candidates.first(where: { $0.transferSyntax == syntax }) { return context }
        }
        return nil
    }

    /// The contexts a set of files needs: one per distinct (SOP class, transfer syntax list).
    public static func presentationContexts(for files: some Sequence<StorableFile>) -> [ProposedPresentationContext] {
        var seen = Set<[String]>()
        var contexts: [ProposedPresentationContext] = []
        for file in files {
            for syntaxes in file.proposals {
                guard seen.insert([file.sopClassUID] + syntaxes).inserted else { continue }
                contexts.append(
                    ProposedPresentationContext(abstractSyntax: file.sopClassUID, transferSyntaxes: syntaxes))
            }
        }
        return Array(contexts.prefix(AssociationRequestParameters.maximumPresentationContexts))
    }
}

/// The outcome of storing one file.
public struct StoreResult: Sendable, Hashable {
    public var path: String
    public var sopClassUID: String?
    public var sopInstanceUID: String?
    /// The C-STORE-RSP status, or `nil` when the file was not sent.
    public var status: DIMSEStatus?
    /// Why the file was not sent, or the peer's error comment.
    public var error: String?
    /// Why the file was not sent, as a code (``DICOMNetworkError/Code/notTheIndexedFile`` for a file of a place
    /// that is no longer the one indexed); `nil` when it was sent.
    public var notSentCode: DICOMNetworkError.Code?

    /// Whether the peer stored the instance (success or warning).
    public var succeeded: Bool { self.status?.isSuccessOrWarning ?? false }

    public init(path: String, sopClassUID: String?, sopInstanceUID: String?, status: DIMSEStatus?, error: String?) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.status = status
        self.error = error
    }
}

/// The outcome of a C-MOVE or C-GET (PS3.4 §C.4.2, §C.4.3).
public struct RetrieveResult: Sendable, Hashable {
    /// The final status.
    public var status: DIMSEStatus
    /// The final sub-operation counts.
    public var subOperations: SubOperationCounts
    /// Error Comment of the final response.
    public var errorComment: String?
    /// Failed SOP Instance UID List (0008,0058) of the final response, when the peer sent one.
    public var failedSOPInstanceUIDs: [String]

    public init(
        status: DIMSEStatus, subOperations: SubOperationCounts, errorComment: String?, failedSOPInstanceUIDs: [String]
    ) {
        self.status = status
        self.subOperations = subOperations
        self.errorComment = errorComment
        self.failedSOPInstanceUIDs = failedSOPInstanceUIDs
    }
}
