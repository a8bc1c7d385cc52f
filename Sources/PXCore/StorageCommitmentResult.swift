/// How px-push asks for storage commitment (PS3.4 Annex J, Push Model SCU).
public struct CommitmentSettings: Hashable, Sendable {
    /// How long to wait for the N-EVENT-REPORT after the N-ACTION-RSP, in seconds.
    public var timeout: Double
    /// The port px listens on meanwhile for a report the archive sends on a new association (PS3.4 §J.3.3), with
    /// the calling AE title as its called AE title; `nil`: only on the requesting association.
    public var listenPort: Int?
    /// The address the listener binds.
    public var listenHost: String

    public init(
        timeout: Double = CommitmentSettings.defaultTimeout, listenPort: Int? = nil, listenHost: String = "0.0.0.0"
    ) {
        self.timeout = timeout
        self.listenPort = listenPort
        self.listenHost = listenHost
    }

    /// 60 seconds.
    public static let defaultTimeout = 60.0
}

/// One instance in a storage commitment report.
public struct CommitmentInstance: Hashable, Sendable, Codable {
    public var sopClassUID: String
    public var sopInstanceUID: String
    /// Failure Reason (0008,1197) of a failed instance (PS3.4 Table J.3-2: 0x0112 no such object instance,
    /// 0x0110 processing failure...); `nil` for a committed one.
    public var failureReason: UInt16?

    public init(sopClassUID: String, sopInstanceUID: String, failureReason: UInt16? = nil) {
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.failureReason = failureReason
    }

    /// A file px stored, as an instance to commit.
    public init(_ file: PushFile) {
        self.init(sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID)
    }
}

/// What a storage commitment transaction came to (PS3.4 §J.3.3).
public struct CommitmentResult: Hashable, Sendable {
    /// Transaction UID (0008,1195).
    public var transactionUID: String
    /// The instances px asked to commit.
    public var requested: [CommitmentInstance]
    /// The instances the archive committed.
    public var committed: [CommitmentInstance]
    /// The instances it did not, with their failure reasons; an instance asked for and in neither list is
    /// reported here with 0x0110 (processing failure).
    public var failed: [CommitmentInstance]
    /// Whether the report came on the requesting association (else on one the archive opened to px).
    public var sameAssociation: Bool

    public init(
        transactionUID: String, requested: [CommitmentInstance], committed: [CommitmentInstance],
        failed: [CommitmentInstance], sameAssociation: Bool
    ) {
        self.transactionUID = transactionUID
        self.requested = requested
        self.committed = committed
        self.failed = failed
        self.sameAssociation = sameAssociation
    }

    /// Whether every instance asked for is committed.
    public var allCommitted: Bool {
        let done = Set(committed.map(\.sopInstanceUID))
        return failed.isEmpty && requested.allSatisfy { done.contains($0.sopInstanceUID) }
    }
}
