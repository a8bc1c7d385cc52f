import DICOMData
import Logging
import PXCore
import PXIndex
import PXStorage
import Synchronization

/// Moves the units of a plan from a source place to the destination, one path for every pair: the source
/// delivers the unit's instances (``InstanceSource``) into the destination's own tree when it is a folder, else
/// into a temporary tree, and the destination takes them (``InstanceSink``).
///
/// Two DIMSE shortcuts stay: node → node is a C-MOVE (PS3.4 §C.4.2) with the destination's AE title (through
/// px when the source refuses it before any sub-operation, as for an AE it does not know); node → folder may be
/// a C-MOVE to
/// px-sync's own receiver when the node refuses C-GET or ``Retrieve/move`` asks for it.
public struct SyncTransfer: Sendable {
    public enum Retrieve: String, Sendable, CaseIterable {
        /// C-GET, C-MOVE to the receiver when the node refuses C-GET.
        case auto
        case get
        case move
    }

    public var retrieve: Retrieve = .auto
    /// The AE title of px-sync's receiver (the node must know it), when one runs.
    public var receiverAETitle: String?
    /// C-STOREs outstanding on a push (``PushRequest/window``).
    public var window: UInt16 = PushRequest.defaultWindow
    /// px-sync `--commit`: px stores every instance a node destination gets itself (no C-MOVE from node to
    /// node, whose instances px never sees) and lists them in ``Outcome/stored`` for the commitment request.
    public var collectsStored = false
    public var logger: Logger
    /// Sources that refused C-GET: C-MOVE from then on.
    let refusedGet = RefusedSources()

    public init(logger: Logger) {
        self.logger = logger
    }

    /// What one study's transfer did.
    public struct Outcome: Sendable {
        public var transferred = 0
        public var failed = 0
        public var failure: PXError?
        /// The instances stored at a node destination (``collectsStored``).
        public var stored: [CommitmentInstance] = []

        public init() {}
    }

    /// Transfers the units of `plan`; C-GETs and C-MOVEs go through `session` when there is one.
    public func run(
        _ plan: StudyPlan, from source: Endpoint, to destination: Endpoint, session: (any RetrieveSession)? = nil
    ) async -> Outcome {
        var outcome = Outcome()
        let context = TransferContext(
            session: session, window: window, logger: logger, collectsStored: collectsStored)
        for unit in plan.units {
            do {
                let count = try await transfer(
                    unit, source: plan.source, from: source, to: destination, context: context)
                outcome.transferred += count.transferred
                outcome.failed += count.failed
                outcome.stored += count.stored
            } catch let partial as PartialTransfer {
                // Instances placed before the failure are transferred all the same.
                outcome.transferred += partial.count.transferred
                outcome.failed += partial.count.failed
                outcome.stored += partial.count.stored
                outcome.failure = outcome.failure ?? partial.failure
            } catch {
                let failure = PXError.from(error)
                outcome.failure = outcome.failure ?? failure
                if failure.code == .connectionRefused || failure.code == .associationRejected { break }
            }
        }
        if outcome.failure == nil && outcome.failed > 0 {
            outcome.failure = .partialFailure(
                failed: outcome.failed, total: outcome.failed + outcome.transferred, what: "instances")
        }
        return outcome
    }

    /// One unit, the best way the pair allows.
    /// - Throws: ``PXError``, or ``PartialTransfer`` when the source failed after delivering some instances.
    func transfer(
        _ unit: TransferUnit, source index: Int, from source: Endpoint, to destination: Endpoint,
        context: TransferContext
    ) async throws -> TransferCount {
        if let mover = source.mover, let target = destination.moveDestinationAETitle, !collectsStored {
            let result = try await mover.move(unit, to: target, context: context)
            // A failure before any sub-operation (0xA801 "move destination unknown", PS3.4 §C.4.2.1.5, or
            // Orthanc's 0xC000-range refusal of an AE it has no DicomModalities entry for): the source does not
            // know the destination, so the instances go through px.
            let unstarted =
                result.status.isFailure && result.completed + result.warning + result.failed == 0
                && result.failedSOPInstanceUIDs.isEmpty
            if !unstarted {
                if result.status.isFailure && result.completed == 0 {
                    throw PXError.dimseFailure(result.status, operation: "C-MOVE")
                }
                return TransferCount(
                    transferred: result.completed + result.warning,
                    failed: result.failedCount)
            }
            logger.notice(
                "the source does not know the destination's AE title: through px (C-GET, then C-STORE)",
                metadata: ["source": "\(source.label)", "destination": "\(destination.label)"])
        }
        if let mover = source.mover, destination.receivingFolder != nil {
            if retrieve == .move || refusedGet.contains(index) {
                return try await moveToReceiver(unit, from: mover, context: context)
            }
            do {
                return try await deliver(unit, from: source, to: destination, context: context)
            } catch let error as PXError
                where error.code == .noAcceptablePresentationContext && retrieve == .auto && receiverAETitle != nil
            {
                logger.notice(
                    "C-GET refused, retrieving with C-MOVE to px-sync's receiver",
                    metadata: ["source": "\(source.label)"])
                refusedGet.insert(index)
                return try await moveToReceiver(unit, from: mover, context: context)
            }
        }
        return try await deliver(unit, from: source, to: destination, context: context)
    }

    /// The general path: the source delivers into the destination's tree (a folder) or a temporary one, the
    /// destination takes what was delivered; a temporary tree is removed after.
    func deliver(_ unit: TransferUnit, from source: Endpoint, to destination: Endpoint, context: TransferContext)
        async throws -> TransferCount
    {
        let sink = destination.sink
        var tree = try sink.tree ?? StagingTree.temporary()
        defer { tree.remove() }
        if !tree.isSinkTree { tree.observer = try sink.placementObserver(in: tree) }
        // The observer's work on the tree's files ends before the tree is removed.
        defer { tree.observer?.observer.waitUntilIdle() }
        var delivery = try await source.source.deliver(unit, into: tree, context: context)
        delivery.placementObserver = tree.observer
        var count = try await sink.take(delivery, of: unit, context: context)
        count.failed += delivery.failed
        if let failure = delivery.failure { throw PartialTransfer(count: count, failure: failure) }
        return count
    }

    /// C-MOVE to px-sync's own receiver, which places into the destination folder and records each instance.
    func moveToReceiver(_ unit: TransferUnit, from mover: any MovingSource, context: TransferContext)
        async throws(PXError) -> TransferCount
    {
        guard let receiverAETitle else {
            throw PXError.usage(
                "C-MOVE into a folder needs px-sync's receiver: give --receiver-port and --receiver-aet")
        }
        let result = try await mover.move(unit, to: receiverAETitle, context: context)
        if result.status.isFailure && result.completed == 0 { throw .dimseFailure(result.status, operation: "C-MOVE") }
        return TransferCount(
            transferred: result.completed + result.warning,
            failed: result.failedCount)
    }
}

/// A transfer that failed after it had moved some instances (a zip whose later entry is broken).
struct PartialTransfer: Error {
    var count: TransferCount
    var failure: PXError
}

/// The sources that refused C-GET in this run.
final class RefusedSources: Sendable {
    private let sources = Mutex<Set<Int>>([])
    func contains(_ index: Int) -> Bool { sources.withLock { $0.contains(index) } }
    func insert(_ index: Int) { _ = sources.withLock { $0.insert(index) } }
}
