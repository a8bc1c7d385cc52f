import DICOMData
import PXStorage

extension PXOutput {
    /// One px-listen event, one NDJSON line: `{"event": "instanceReceived", ...}`, `event` first, then the
    /// event's members (a value px does not know, `null`).
    public enum ListenEventOutput: Encodable {
        case listening(Listening)
        case associationOpened(AssociationOpened)
        case associationClosed(AssociationClosed)
        case associationRejected(AssociationRejected)
        case instanceReceived(InstanceReceived)
        case seriesComplete(SeriesComplete)
        case storeFailed(StoreFailed)
        case storageCommitment(StorageCommitment)
        case storageCommitmentReported(StorageCommitmentReported)

        public init(_ event: ListenEvent) {
            switch event {
            case .listening(let port, let aeTitle):
                self = .listening(Listening(port: port, aeTitle: aeTitle))
            case .associationOpened(let host, let calling, let called, let association, let identity):
                self = .associationOpened(
                    AssociationOpened(
                        peerHost: Nullable(host), callingAETitle: Nullable(calling), calledAETitle: Nullable(called),
                        association: Nullable(association),
                        userIdentity: identity.map {
                            UserIdentityOutput(type: $0.type, username: Nullable($0.username))
                        }
                    ))
            case .associationClosed(let host, let calling, let aborted, let association):
                self = .associationClosed(
                    AssociationClosed(
                        peerHost: Nullable(host), callingAETitle: Nullable(calling), aborted: aborted,
                        association: Nullable(association)))
            case .associationRejected(let host, let calling, let called, let result, let source, let reason):
                self = .associationRejected(
                    AssociationRejected(
                        peerHost: Nullable(host), callingAETitle: Nullable(calling), calledAETitle: Nullable(called),
                        result: result, source: source, reason: reason))
            case .instanceReceived(let instance):
                self = .instanceReceived(InstanceReceived(instance))
            case .seriesComplete(let completion):
                self = .seriesComplete(SeriesComplete(completion))
            case .storeFailed(let path, let uid, let error, let status):
                self = .storeFailed(
                    StoreFailed(
                        path: Nullable(path), sopInstanceUID: Nullable(uid),
                        dimseStatus: Nullable(status.map(StatusOutput.init)),
                        error: ErrorOutput(error)))
            case .storageCommitment(let calling, let transaction, let committed, let failed, let association):
                self = .storageCommitment(
                    StorageCommitment(
                        callingAETitle: calling, transactionUID: transaction,
                        committed: committed.map { CommitmentOutput.Instance($0) },
                        failed: failed.map { CommitmentOutput.Instance($0) }, association: association))
            case .storageCommitmentReported(let calling, let transaction, let destination, let status, let error):
                self = .storageCommitmentReported(
                    StorageCommitmentReported(
                        callingAETitle: calling, transactionUID: transaction, destination: Nullable(destination),
                        dimseStatus: Nullable(status.map(StatusOutput.init)),
                        error: Nullable(error.map(ErrorOutput.init))))
            }
        }

        /// `{"event": "storageCommitment", "callingAETitle", "transactionUID", "committed": [{"sopClassUID",
        /// "sopInstanceUID"}], "failed": [{..., "failureReason"}], "association"}`: an N-ACTION answered
        /// (PS3.4 §J.3.2).
        public struct StorageCommitment: Encodable {
            public let event = "storageCommitment"
            public var callingAETitle: String
            public var transactionUID: String
            public var committed: [CommitmentOutput.Instance]
            public var failed: [CommitmentOutput.Instance]
            public var association: UInt64
        }

        /// `{"event": "storageCommitmentReported", "callingAETitle", "transactionUID", "destination", "dimseStatus",
        /// "error"}`: the report sent on a new association (PS3.4 §J.3.3), or why it could not be.
        public struct StorageCommitmentReported: Encodable {
            public let event = "storageCommitmentReported"
            public var callingAETitle: String
            public var transactionUID: String
            public var destination: Nullable<String>
            public var dimseStatus: Nullable<StatusOutput>
            public var error: Nullable<ErrorOutput>
        }

        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .listening(let event): try event.encode(to: encoder)
            case .associationOpened(let event): try event.encode(to: encoder)
            case .associationClosed(let event): try event.encode(to: encoder)
            case .associationRejected(let event): try event.encode(to: encoder)
            case .instanceReceived(let event): try event.encode(to: encoder)
            case .seriesComplete(let event): try event.encode(to: encoder)
            case .storeFailed(let event): try event.encode(to: encoder)
            case .storageCommitment(let event): try event.encode(to: encoder)
            case .storageCommitmentReported(let event): try event.encode(to: encoder)
            }
        }

        /// `{"event": "listening", "port", "aeTitle"}`: the receiver is ready.
        public struct Listening: Encodable {
            public let event = "listening"
            public var port: Int
            public var aeTitle: String
        }

        /// `{"event": "associationOpened", "peerHost", "callingAETitle", "calledAETitle", "association"}`, and
        /// `"userIdentity": {"type", "username"}` when the receiver requires an identity (`--require-user`, PS3.7
        /// §D.3.3.7): what the requestor presented (never the password).
        public struct AssociationOpened: Encodable {
            public let event = "associationOpened"
            public var peerHost: Nullable<String>
            public var callingAETitle: Nullable<String>
            public var calledAETitle: Nullable<String>
            public var association: Nullable<UInt64>
            public var userIdentity: UserIdentityOutput?
        }

        /// An association's user identity: `{"type", "username"}` (``UserIdentity/typeName(code:)``).
        public struct UserIdentityOutput: Encodable {
            public var type: String
            public var username: Nullable<String>
        }

        /// `{"event": "associationClosed", "peerHost", "callingAETitle", "aborted", "association"}`.
        public struct AssociationClosed: Encodable {
            public let event = "associationClosed"
            public var peerHost: Nullable<String>
            public var callingAETitle: Nullable<String>
            public var aborted: Bool
            public var association: Nullable<UInt64>
        }

        /// `{"event": "associationRejected", "peerHost", "callingAETitle", "calledAETitle", "result", "source",
        /// "reason"}`: px-listen refused an association (A-ASSOCIATE-RJ, PS3.8 §9.3.4), in the words of the
        /// `associationRejected` error ("Rejected Permanent", "Service User", "Called AE Title Not Recognized").
        public struct AssociationRejected: Encodable {
            public let event = "associationRejected"
            public var peerHost: Nullable<String>
            public var callingAETitle: Nullable<String>
            public var calledAETitle: Nullable<String>
            public var result: String
            public var source: String
            public var reason: String
        }

        /// `{"event": "instanceReceived", "path", "SOPClassUID", "SOPInstanceUID", "StudyInstanceUID",
        /// "SeriesInstanceUID", "callingAETitle", "bytes", "transferSyntaxUID", "duplicate", "association"}`.
        public struct InstanceReceived: Encodable {
            public let event = "instanceReceived"
            public var path: String
            public var sopClassUID: String
            public var sopInstanceUID: String
            public var studyInstanceUID: String
            public var seriesInstanceUID: String
            public var callingAETitle: Nullable<String>
            public var bytes: Int
            public var transferSyntaxUID: String
            /// What the duplicate policy did, when the instance was already stored.
            public var duplicate: Nullable<String>
            public var association: Nullable<UInt64>

            enum CodingKeys: String, CodingKey {
                case event, path
                case sopClassUID = "SOPClassUID"
                case sopInstanceUID = "SOPInstanceUID"
                case studyInstanceUID = "StudyInstanceUID"
                case seriesInstanceUID = "SeriesInstanceUID"
                case callingAETitle, bytes, transferSyntaxUID, duplicate, association
            }

            public init(_ instance: ReceivedInstance) {
                path = instance.path
                sopClassUID = instance.sopClassUID
                sopInstanceUID = instance.sopInstanceUID
                studyInstanceUID = instance.studyInstanceUID
                seriesInstanceUID = instance.seriesInstanceUID
                callingAETitle = Nullable(instance.callingAETitle)
                bytes = instance.bytes
                transferSyntaxUID = instance.transferSyntaxUID
                duplicate = Nullable(instance.duplicate?.rawValue)
                association = Nullable(instance.association)
            }
        }

        /// `{"event": "seriesComplete", "directory", "SeriesInstanceUID", "StudyInstanceUID", "PatientID",
        /// "instances", "reason"}`.
        public struct SeriesComplete: Encodable {
            public let event = "seriesComplete"
            public var completion: SeriesCompletion

            enum CodingKeys: String, CodingKey {
                case event, directory
                case seriesInstanceUID = "SeriesInstanceUID"
                case studyInstanceUID = "StudyInstanceUID"
                case patientID = "PatientID"
                case instances, reason
            }

            public init(_ completion: SeriesCompletion) { self.completion = completion }

            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(event, forKey: .event)
                try container.encode(completion.directory, forKey: .directory)
                try container.encode(completion.seriesInstanceUID, forKey: .seriesInstanceUID)
                try container.encode(completion.studyInstanceUID, forKey: .studyInstanceUID)
                try container.encode(completion.patientID, forKey: .patientID)
                try container.encode(completion.instances, forKey: .instances)
                try container.encode(completion.reason, forKey: .reason)
            }
        }

        /// `{"event": "storeFailed", "path", "SOPInstanceUID", "dimseStatus", "error"}`: `dimseStatus` is the
        /// failure status px answered the C-STORE with (``ListenEvent/storeFailed(path:sopInstanceUID:error:status:)``),
        /// `null` when the sender was not told; `error` says why, in px's words.
        public struct StoreFailed: Encodable {
            public let event = "storeFailed"
            public var path: Nullable<String>
            public var sopInstanceUID: Nullable<String>
            public var dimseStatus: Nullable<StatusOutput>
            public var error: ErrorOutput

            enum CodingKeys: String, CodingKey {
                case event, path
                case sopInstanceUID = "SOPInstanceUID"
                case dimseStatus, error
            }
        }
    }

    /// One px-listen event (``ListenEventOutput``).
    public static func json(_ event: ListenEvent) -> JSONValue { JSONValueEncoder.encode(ListenEventOutput(event)) }
}
