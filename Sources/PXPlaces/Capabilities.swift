import DICOMData
import Logging
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

/// A place that can be asked whether it answers: a node with C-ECHO (PS3.4 Annex A), a DICOMweb service with
/// a one-match search (PS3.18 §10.6). A folder or a zip folder is not one.
public protocol VerifyingPlace: Sendable {
    func verify() async throws(PXError) -> Verification
}

/// A place instances can be read from: for a unit of a study (``TransferUnit``), it yields the instances as
/// Part 10 files, its own (a folder place's indexed files) or written into a ``StagingTree`` (C-GET
/// sub-operations, WADO-RS parts, zip entries).
public protocol InstanceSource: PlaceInventory {
    /// The unit's instances as files.
    /// - Throws: ``PXError`` when nothing could be delivered; a failure after some instances arrived is in
    ///   ``Delivery/failure``.
    func deliver(_ unit: TransferUnit, into tree: StagingTree, context: TransferContext) async throws(PXError)
        -> Delivery
}

/// A place instances can be written to: a folder (placed atomically and indexed), a zip folder (the study's
/// archive rewritten atomically), a node (C-STORE on one association), a DICOMweb service (STOW-RS batches).
public protocol InstanceSink: PlaceInventory {
    /// The tree sources write straight into when the sink is a folder (no copy), `nil` otherwise: then they
    /// write into a temporary tree the sink reads from.
    var tree: StagingTree? { get }

    /// Takes the delivered instances; counts those it did not hold before, and those it could not take.
    func take(_ delivery: Delivery, of unit: TransferUnit, context: TransferContext) async throws(PXError)
        -> TransferCount

    /// What watches the instances a source places into `tree`, a temporary tree made for this sink, as they
    /// arrive (a zip deflates them meanwhile); `nil` for none. ``take(_:of:context:)`` finds it in
    /// ``Delivery/placementObserver``.
    func placementObserver(in tree: StagingTree) throws(PXError) -> PlacementObserving?
}

extension InstanceSink {
    public func placementObserver(in tree: StagingTree) throws(PXError) -> PlacementObserving? { nil }
}

/// A source that can send a study to another DIMSE node by itself: C-MOVE (PS3.4 §C.4.2) to an AE title the
/// source knows. Only a node is one; DICOMweb has no such transaction (PS3.18).
public protocol MovingSource: InstanceSource {
    func move(_ unit: TransferUnit, to destination: String, context: TransferContext) async throws(PXError)
        -> MoveResult
}

/// How many instances a transfer moved and how many failed.
public struct TransferCount: Sendable, Hashable {
    public var transferred: Int
    public var failed: Int
    /// The instances px stored with success at a DIMSE node, when ``TransferContext/collectsStored`` asked (for a
    /// storage commitment request, PS3.4 Annex J); empty otherwise.
    public var stored: [CommitmentInstance] = []

    public init(transferred: Int = 0, failed: Int = 0) {
        self.transferred = transferred
        self.failed = failed
    }
}

/// One instance a source delivered: a path, and for a folder place's file what its index recorded (so it is
/// read only while it is still that file, ``IndexedFile/open()``).
public struct DeliveredFile: Sendable, Hashable {
    public var path: String
    public var indexed: IndexedFile?
    /// The header parsed when the file was received (``PXCore/ReceivedInstance/header``): a folder sink
    /// records it in its index without reading the file again. Not part of equality.
    public var header: Part10File?

    public init(path: String, indexed: IndexedFile? = nil, header: Part10File? = nil) {
        self.path = path
        self.indexed = indexed
        self.header = header
    }

    public static func == (lhs: DeliveredFile, rhs: DeliveredFile) -> Bool {
        lhs.path == rhs.path && lhs.indexed == rhs.indexed
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(path)
        hasher.combine(indexed)
    }
}

/// What a source delivered for one unit.
public struct Delivery: Sendable {
    public var files: [DeliveredFile]
    /// Whether the files are in the sink's own tree already (a retrieval straight into a folder place).
    public var inSinkTree: Bool
    /// Instances the source says it could not deliver.
    public var failed: Int
    /// A failure after some instances were delivered (a broken zip entry, a failure status after some
    /// sub-operations): those delivered are taken all the same.
    public var failure: PXError?
    /// The sink's observer of the temporary tree the files were placed in (``InstanceSink/placementObserver(in:)``).
    public var placementObserver: PlacementObserving?

    public init(files: [DeliveredFile], inSinkTree: Bool, failed: Int = 0, failure: PXError? = nil) {
        self.files = files
        self.inSinkTree = inSinkTree
        self.failed = failed
        self.failure = failure
    }
}

/// A folder tree instances are written into: a folder place's own (for a folder sink), or a temporary one
/// removed after the unit (for the other sinks).
public struct StagingTree: Sendable {
    public var root: String
    public var layout: StorageLayout
    /// Whether this is the sink's own tree (the delivered files stay there).
    public var isSinkTree: Bool
    /// Told of each instance placed in the tree (a retrieval's ``GetRequest/placementObserver``).
    public var observer: PlacementObserving?

    public init(root: String, layout: StorageLayout, isSinkTree: Bool) {
        self.root = root
        self.layout = layout
        self.isSinkTree = isSinkTree
    }

    /// A new temporary tree under `$TMPDIR` (else `/tmp`), mode 0700.
    public static func temporary() throws(PXError) -> StagingTree {
        let base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        do {
            let root = try POSIX.makeTemporaryDirectory(prefix: base + "/px-transfer-")
            return StagingTree(root: root, layout: StorageLayout(), isSinkTree: false)
        } catch {
            throw .io("cannot make a temporary folder (\(error))", path: base)
        }
    }

    /// Removes a temporary tree and everything in it (links are removed, never followed).
    public func remove() {
        guard !isSinkTree else { return }
        FileTree.remove(root)
    }
}

/// What every transfer of a run shares: the retrieve session of the source node (many C-GETs on one
/// association), the C-STORE window, the logger.
public struct TransferContext: Sendable {
    public var session: (any RetrieveSession)?
    /// C-STOREs outstanding on a push (``PushRequest/window``).
    public var window: UInt16
    public var logger: Logger
    /// Whether a node sink lists the instances it stored (``TransferCount/stored``): px-sync `--commit`.
    public var collectsStored = false

    public init(
        session: (any RetrieveSession)? = nil, window: UInt16 = PushRequest.defaultWindow, logger: Logger,
        collectsStored: Bool = false
    ) {
        self.session = session
        self.window = window
        self.logger = logger
        self.collectsStored = collectsStored
    }
}

extension Delivery {
    /// A C-GET's or a WADO-RS retrieval's result as a delivery: the instances stored, and the failed
    /// sub-operations each counted once (``PXCore/GetResult/failedCount``: one px refused is in the peer's
    /// count already).
    /// - Throws: ``PXError/dimseFailure(_:operation:)`` for a failure status with nothing retrieved, named by the
    ///   result's own operation (``PXCore/GetResult/operation``: `C-GET` or `WADO-RS`).
    static func retrieved(_ result: GetResult, into tree: StagingTree) throws(PXError) -> Delivery {
        let failed = result.failedCount
        if result.status.isFailure && result.instances.isEmpty {
            throw .dimseFailure(result.status, operation: result.operation)
        }
        return Delivery(
            files: result.instances.map { DeliveredFile(path: $0.path, header: $0.header) },
            inSinkTree: tree.isSinkTree,
            failed: failed)
    }
}

/// A place that keeps its instances' bytes and can say what they are (``PXStorage/ContentChecksum``): a folder
/// (each indexed file read) or a zip folder (each entry's size and CRC-32 from the central directory).
/// `px-sync --verify` compares them between two such places; a node or a DICOMweb service is not one.
public protocol ContentAuditing: Sendable {
    /// The checksum of each instance of the study, by SOP Instance UID.
    func contentChecksums(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: ContentChecksum]
}
