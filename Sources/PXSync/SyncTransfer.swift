import DICOMData
import DICOMNetwork
import Logging
import PXCore
import PXIndex
import PXStorage
import Synchronization

/// Moves the units of a plan from a source place to the destination, the best way the pair allows:
/// node → folder by C-GET (PS3.4 §C.4.3), or by C-MOVE (§C.4.2) to px-sync's own receiver when the node
/// refuses C-GET or `--retrieve move` asks for it; folder → node by C-STORE (PS3.4 Annex B) on one
/// association per study; node → node by C-MOVE with the destination's AE title.
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
    }

    /// Transfers the units of `plan`; C-GETs and C-MOVEs go through `session` when there is one.
    public func run(
        _ plan: StudyPlan, from source: SyncPlace, to destination: SyncPlace, session: (any RetrieveSession)? = nil
    ) async -> Outcome {
        var outcome = Outcome()
        for unit in plan.units {
            do {
                let (done, failed) = try await transfer(
                    unit, source: plan.source, from: source, to: destination, session: session)
                outcome.transferred += done
                outcome.failed += failed
            } catch let partial as PartialTransfer {
                // Instances placed before the failure are transferred all the same.
                outcome.transferred += partial.transferred
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

    func transfer(
        _ unit: TransferUnit, source index: Int, from source: SyncPlace, to destination: SyncPlace,
        session: (any RetrieveSession)?
    ) async throws -> (transferred: Int, failed: Int) {
        func retrieving(_ node: NodePlace) -> any RetrieveSession {
            session ?? OneAssociationPerRequest(backend: node.backend, connection: node.connection, logger: logger)
        }
        switch (source, destination) {
        case (.node(let node), .folder(let folder)):
            let session = retrieving(node)
            if retrieve != .move && !refusedGet.contains(index) {
                do {
                    return try await get(unit, into: folder, session: session)
                } catch {
                    let failure = PXError.from(error)
                    guard failure.code == .noAcceptablePresentationContext, retrieve == .auto, receiverAETitle != nil
                    else { throw failure }
                    logger.notice(
                        "C-GET refused, retrieving with C-MOVE to px-sync's receiver",
                        metadata: ["source": "\(source.label)"])
                    refusedGet.insert(index)
                }
            }
            guard let receiverAETitle else {
                throw PXError.usage(
                    "C-MOVE into a folder needs px-sync's receiver: give --receiver-port and --receiver-aet")
            }
            return try await move(unit, to: receiverAETitle, session: session)
        case (.node(let node), .node(let target)):
            return try await move(unit, to: target.connection.node.calledAETitle, session: retrieving(node))
        case (.folder(let folder), .node(let target)):
            return try await push(unit, from: folder, to: target)
        case (.folder(let folder), .zip(let zip)):
            return try await archive(unit, from: folder, into: zip)
        case (.zip(let zip), .folder(let folder)):
            return try await extract(unit, from: zip, into: folder)
        case (.folder, .folder), (.zip, .zip), (.zip, .node), (.node, .zip):
            throw PXError.usage(
                "px-sync \(source.label) -> \(destination.label): this pair is not supported (sync through a folder)")
        }
    }

    func get(_ unit: TransferUnit, into folder: FolderPlace, session: any RetrieveSession) async throws(PXError)
        -> (Int, Int)
    {
        let request = try GetRequest(
            studyInstanceUID: unit.studyInstanceUID, seriesInstanceUID: unit.seriesInstanceUID,
            sopInstanceUIDs: unit.sopInstanceUIDs, root: folder.root, layout: folder.layout)
        let result = try await session.get(request) { _ in }
        try await folder.recordPlaced(result.instances.map(\.path), logger: logger)
        if result.status.isFailure && result.completed == 0 { throw .dimseFailure(result.status, operation: "C-GET") }
        // The peer's counts, or the instances it names as failed (Failed SOP Instance UID List), whichever says
        // more; and those that arrived but could not be stored.
        return (
            result.instances.count, max(result.failed, result.failedSOPInstanceUIDs.count) + result.storeFailures.count
        )
    }

    func move(_ unit: TransferUnit, to destination: String, session: any RetrieveSession) async throws(PXError)
        -> (Int, Int)
    {
        let request = try MoveRequest(
            destination: destination, studyInstanceUID: unit.studyInstanceUID,
            seriesInstanceUID: unit.seriesInstanceUID, sopInstanceUIDs: unit.sopInstanceUIDs)
        let result = try await session.move(request) { _ in }
        if result.status.isFailure && result.completed == 0 { throw .dimseFailure(result.status, operation: "C-MOVE") }
        return (result.completed + result.warning, max(result.failed, result.failedSOPInstanceUIDs.count))
    }

    func push(_ unit: TransferUnit, from folder: FolderPlace, to node: NodePlace) async throws(PXError) -> (Int, Int) {
        let files = try await folder.storableFiles(of: unit)
        guard !files.isEmpty else { return (0, 0) }
        var request = PushRequest(
            files: files.map { file in
                var push = PushFile(readingHeaderOf: file.path)
                push.indexed = file.indexed
                return push
            })
        request.window = window
        let result = try await node.backend.push(request, connection: node.connection, logger: logger) { _ in }
        if let failure = result.failure, result.completed + result.warning == 0 { throw failure }
        return (result.completed + result.warning, result.failed)
    }
}

extension SyncTransfer {
    /// Whether px-sync transfers from `source` to `destination`: node <-> folder, node -> node (C-MOVE, not
    /// with DICOMweb, which has no C-MOVE, PS3.18), folder <-> zip.
    public static func pairs(_ source: SyncPlace, _ destination: SyncPlace) -> Bool {
        switch (source, destination) {
        case (.node, .folder), (.folder, .node), (.folder, .zip), (.zip, .folder): return true
        case (.node(let from), .node(let to)): return !from.isDICOMweb && !to.isDICOMweb
        default: return false
        }
    }

    /// Folder -> zip: the study's archive gets the instances it lacks (a new archive replaces the old
    /// atomically, ``ZipPlace/archive(study:files:fsync:)``); the whole study's files are offered, those
    /// already archived are skipped by the zip place.
    func archive(_ unit: TransferUnit, from folder: FolderPlace, into zip: ZipPlace) async throws(PXError) -> (Int, Int)
    {
        let whole = TransferUnit(
            studyInstanceUID: unit.studyInstanceUID, seriesInstanceUID: nil, sopInstanceUIDs: [], instances: nil)
        let files = try await folder.storableFiles(of: whole).compactMap(\.indexed)
        guard !files.isEmpty else { return (0, 0) }
        do {
            return (try zip.archive(study: unit.studyInstanceUID, indexedFiles: files).added, 0)
        } catch {
            throw .zip(error)
        }
    }

    /// Zip -> folder: the study's archive extracted through the folder's placer (atomic placement); instances
    /// the folder holds already are kept, the others counted and recorded in the folder's index.
    /// - Throws: ``PXError``, or ``PartialTransfer`` when the archive failed after some instances were placed.
    func extract(_ unit: TransferUnit, from zip: ZipPlace, into folder: FolderPlace) async throws -> (Int, Int) {
        let placements: [InstancePlacer.Placement]
        var placedSoFar: [InstancePlacer.Placement] = []
        do {
            let placer = try InstancePlacer(root: folder.root, layout: folder.layout, duplicates: .keep, fsync: false)
            placements = try zip.extract(study: unit.studyInstanceUID, into: placer) { placedSoFar.append($0) }
        } catch {
            let failure: PXError = (error as? ZipError).map { .zip($0) } ?? PXError.from(error)
            // What was extracted before the failure is placed: indexed and counted.
            let new = placedSoFar.filter { $0.duplicate == nil }.map(\.path)
            guard !new.isEmpty else { throw failure }
            try await folder.recordPlaced(new, logger: logger)
            throw PartialTransfer(transferred: new.count, failure: failure)
        }
        let new = placements.filter { $0.duplicate == nil }.map(\.path)
        try await folder.recordPlaced(new, logger: logger)
        return (new.count, 0)
    }
}

/// A transfer that failed after it had placed `transferred` instances (a zip whose later entry is broken).
struct PartialTransfer: Error {
    var transferred: Int
    var failure: PXError
}

/// The sources that refused C-GET in this run.
final class RefusedSources: Sendable {
    private let sources = Mutex<Set<Int>>([])
    func contains(_ index: Int) -> Bool { sources.withLock { $0.contains(index) } }
    func insert(_ index: Int) { _ = sources.withLock { $0.insert(index) } }
}
