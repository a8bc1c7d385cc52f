import DICOMData

/// The Storage Commitment Push Model (PS3.4 Annex J): the SOP class, its well-known instance, the N-ACTION's
/// and N-EVENT-REPORT's type IDs, and the data sets they carry.
public enum StorageCommitment {
    /// Storage Commitment Push Model SOP Class (PS3.4 §J.3).
    public static let sopClassUID = WellKnownUID.storageCommitmentPushModel
    /// Storage Commitment Push Model SOP Instance, the well-known instance N-ACTION and N-EVENT-REPORT name
    /// (PS3.4 §J.3.5).
    public static let sopInstanceUID = "1.2.840.10008.1.20.1.1"
    /// Action Type ID 1, Request Storage Commitment (PS3.4 §J.3.2, Table J.3-1).
    public static let requestActionTypeID: UInt16 = 1
    /// Event Type ID 1, Storage Commitment Request Successful (PS3.4 §J.3.3, Table J.3-2).
    public static let allCommittedEventTypeID: UInt16 = 1
    /// Event Type ID 2, Storage Commitment Request Complete - Failures Exist (PS3.4 §J.3.3).
    public static let failuresExistEventTypeID: UInt16 = 2
    /// The most SOP references accepted in one request or report: the data set is already bounded by the
    /// assembler's ``DIMSEMessageAssembler/maximumDataSetLength``, this bounds what decoding it builds.
    public static let maximumReferences = 100_000

    /// Failure Reason (0008,1197) values (PS3.3 §C.14.1.1), as the Failed SOP Sequence of PS3.4 §J.3.3 carries them.
    public enum FailureReason {
        /// 0x0110 Processing failure.
        public static let processingFailure: UInt16 = 0x0110
        /// 0x0112 No such object instance.
        public static let noSuchObjectInstance: UInt16 = 0x0112
        /// 0x0119 Class-instance conflict.
        public static let classInstanceConflict: UInt16 = 0x0119
        /// 0x0122 Referenced SOP Class not supported.
        public static let sopClassNotSupported: UInt16 = 0x0122
        /// 0x0131 Duplicate transaction UID.
        public static let duplicateTransactionUID: UInt16 = 0x0131
    }

    /// The attributes the Push Model's data sets use (PS3.4 Table J.3-1, J.3-2).
    public enum Tags {
        /// Transaction UID (0008,1195), UI.
        public static let transactionUID = Tag(0x0008, 0x1195)
        /// Referenced SOP Sequence (0008,1199), SQ.
        public static let referencedSOPSequence = Tag(0x0008, 0x1199)
        /// Failed SOP Sequence (0008,1198), SQ.
        public static let failedSOPSequence = Tag(0x0008, 0x1198)
        /// Referenced SOP Class UID (0008,1150), UI.
        public static let referencedSOPClassUID = Tag(0x0008, 0x1150)
        /// Referenced SOP Instance UID (0008,1155), UI.
        public static let referencedSOPInstanceUID = Tag(0x0008, 0x1155)
        /// Failure Reason (0008,1197), US.
        public static let failureReason = Tag(0x0008, 0x1197)
    }

    /// One SOP instance referenced in a request or report.
    public struct Reference: Sendable, Hashable, Codable {
        /// Referenced SOP Class UID (0008,1150).
        public var sopClassUID: String
        /// Referenced SOP Instance UID (0008,1155).
        public var sopInstanceUID: String

        public init(sopClassUID: String, sopInstanceUID: String) {
            self.sopClassUID = sopClassUID
            self.sopInstanceUID = sopInstanceUID
        }
    }

    /// One SOP instance the SCP could not commit, with its Failure Reason (0008,1197).
    public struct Failure: Sendable, Hashable, Codable {
        public var sopClassUID: String
        public var sopInstanceUID: String
        /// Failure Reason (0008,1197), a code of PS3.4 Table J.3-2 (``FailureReason``).
        public var failureReason: UInt16

        public init(sopClassUID: String, sopInstanceUID: String, failureReason: UInt16) {
            self.sopClassUID = sopClassUID
            self.sopInstanceUID = sopInstanceUID
            self.failureReason = failureReason
        }

        /// The instance it is about.
        public var reference: Reference {
            Reference(sopClassUID: self.sopClassUID, sopInstanceUID: self.sopInstanceUID)
        }
    }

    /// The N-ACTION-RQ's Action Information (PS3.4 §J.3.2, Table J.3-1).
    public struct Request: Sendable, Hashable {
        /// Transaction UID (0008,1195): pairs the report with this request.
        public var transactionUID: String
        /// Referenced SOP Sequence (0008,1199): the instances to commit.
        public var references: [Reference]

        public init(transactionUID: String, references: [Reference]) {
            self.transactionUID = transactionUID
            self.references = references
        }

        /// The data set.
        public var dataSet: DataSet {
            var set = DataSet()
            set.set(Tags.transactionUID, vr: .UI, string: self.transactionUID)
            set.set(StorageCommitment.sequence(Tags.referencedSOPSequence, self.references.map { ($0, nil) }))
            return set
        }

        /// Reads the Action Information.
        ///
        /// - Throws: ``DIMSEError`` when the Transaction UID is missing, an item lacks a UID, or there are more
        ///   than ``maximumReferences`` items.
        public init(dataSet: DataSet) throws {
            guard let transaction = dataSet.string(Tags.transactionUID), !transaction.isEmpty else {
                throw DIMSEError.missingElement("Transaction UID (0008,1195)", in: "N-ACTION-RQ data set")
            }
            self.transactionUID = transaction
            self.references = try StorageCommitment.references(
                dataSet, Tags.referencedSOPSequence, in: "N-ACTION-RQ data set"
            ).map(\.0)
        }
    }

    /// The N-EVENT-REPORT-RQ's Event Information (PS3.4 §J.3.3, Table J.3-2): what was committed and what failed.
    public struct Report: Sendable, Hashable {
        /// Transaction UID (0008,1195) of the request this answers.
        public var transactionUID: String
        /// Referenced SOP Sequence (0008,1199): the instances committed.
        public var committed: [Reference]
        /// Failed SOP Sequence (0008,1198): the instances not committed, each with its reason.
        public var failed: [Failure]

        public init(transactionUID: String, committed: [Reference], failed: [Failure]) {
            self.transactionUID = transactionUID
            self.committed = committed
            self.failed = failed
        }

        /// Event Type ID: 1 when nothing failed, 2 otherwise (PS3.4 §J.3.3).
        public var eventTypeID: UInt16 {
            self.failed.isEmpty ? StorageCommitment.allCommittedEventTypeID : StorageCommitment.failuresExistEventTypeID
        }

        /// The data set; a sequence with no item is left out (PS3.4 Table J.3-2: each is present only when it
        /// has items).
        public var dataSet: DataSet {
            var set = DataSet()
            set.set(Tags.transactionUID, vr: .UI, string: self.transactionUID)
            if !self.committed.isEmpty {
                set.set(StorageCommitment.sequence(Tags.referencedSOPSequence, self.committed.map { ($0, nil) }))
            }
            if !self.failed.isEmpty {
                set.set(
                    StorageCommitment.sequence(
                        Tags.failedSOPSequence, self.failed.map { ($0.reference, $0.failureReason) }))
            }
            return set
        }

        /// Reads the Event Information; a failed item without a Failure Reason is read as 0x0110 (processing
        /// failure).
        ///
        /// - Throws: ``DIMSEError`` when the Transaction UID is missing, an item lacks a UID, or there are more
        ///   than ``maximumReferences`` items.
        public init(dataSet: DataSet) throws {
            guard let transaction = dataSet.string(Tags.transactionUID), !transaction.isEmpty else {
                throw DIMSEError.missingElement("Transaction UID (0008,1195)", in: "N-EVENT-REPORT-RQ data set")
            }
            self.transactionUID = transaction
            self.committed = try StorageCommitment.references(
                dataSet, Tags.referencedSOPSequence, in: "N-EVENT-REPORT-RQ data set"
            ).map(\.0)
            self.failed = try StorageCommitment.references(
                dataSet, Tags.failedSOPSequence, in: "N-EVENT-REPORT-RQ data set"
            ).map {
                Failure(
                    sopClassUID: $0.0.sopClassUID, sopInstanceUID: $0.0.sopInstanceUID,
                    failureReason: $0.1 ?? FailureReason.processingFailure)
            }
            guard self.committed.count + self.failed.count <= StorageCommitment.maximumReferences else {
                throw DIMSEError.malformedCommandSet(
                    "N-EVENT-REPORT-RQ data set: more than \(StorageCommitment.maximumReferences) references")
            }
        }
    }

    /// A sequence of reference items, each with a Failure Reason when one is given.
    static func sequence(_ tag: Tag, _ references: [(Reference, UInt16?)]) -> DataElement {
        let items = references.map { reference, reason in
            var item = DataSet()
            item.set(Tags.referencedSOPClassUID, vr: .UI, string: reference.sopClassUID)
            item.set(Tags.referencedSOPInstanceUID, vr: .UI, string: reference.sopInstanceUID)
            if let reason {
                item.set(
                    DataElement(
                        tag: Tags.failureReason, vr: .US,
                        bytes: [UInt8(truncatingIfNeeded: reason), UInt8(reason >> 8)]))
            }
            return Item(dataSet: item)
        }
        return DataElement(tag: tag, vr: .SQ, value: .sequence(items))
    }

    /// The items of a reference sequence, bounded by ``maximumReferences``.
    static func references(_ dataSet: DataSet, _ tag: Tag, in what: String) throws -> [(Reference, UInt16?)] {
        let items = dataSet.items(tag) ?? []
        guard items.count <= Self.maximumReferences else {
            throw DIMSEError.malformedCommandSet("\(what): \(items.count) items, more than \(Self.maximumReferences)")
        }
        return try items.map { item in
            guard let sopClass = item.dataSet.string(Tags.referencedSOPClassUID),
                let sopInstance = item.dataSet.string(Tags.referencedSOPInstanceUID), !sopInstance.isEmpty
            else {
                throw DIMSEError.missingElement("Referenced SOP Class/Instance UID (0008,1150)/(0008,1155)", in: what)
            }
            let reason = item.dataSet.integer(Tags.failureReason).map { UInt16(truncatingIfNeeded: $0) }
            return (Reference(sopClassUID: sopClass, sopInstanceUID: sopInstance), reason)
        }
    }
}
