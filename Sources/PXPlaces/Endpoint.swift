import DICOMData
import DICOMWeb
import Logging
import PXCore
import PXIndex
import PXStorage

/// A place px reads studies from or writes them to, resolved and ready to use: one of four kinds, each with
/// what it can do (``InstanceSource``, ``InstanceSink``, ``VerifyingPlace``, ``MovingSource``).
///
/// - ``node(_:)``: a DIMSE peer (C-FIND inventory, C-GET or C-MOVE out, C-STORE in);
/// - ``web(_:)``: a DICOMweb service (PS3.18: QIDO-RS inventory, WADO-RS out, STOW-RS in), never a DIMSE node;
/// - ``folder(_:)``: a folder of DICOM files with its index (``FolderPlace``);
/// - ``zip(_:)``: a zip folder, one archive per study (``ZipPlace``).
///
/// ```swift
/// import PX
/// let folder = try await Endpoint.folder(at: "/data/in", logger: logger)
/// let zips = try Endpoint.zip(at: "/data/zips", create: true)
/// ```
public enum Endpoint: Sendable {
    case node(NodePlace)
    case web(WebPlace)
    case folder(FolderPlace)
    case zip(ZipPlace)

    /// What the place holds, level by level.
    public var inventory: any PlaceInventory { source }

    /// The place with `mode` for what a retrieval into it deflates, when it is a zip place (``ZipDeflateMode``);
    /// any other place as it is.
    public func deflating(_ mode: ZipDeflateMode) -> Endpoint {
        guard case .zip(var place) = self else { return self }
        place.deflate = mode
        return .zip(place)
    }

    /// The place as a source of instances (every kind is one).
    public var source: any InstanceSource {
        switch self {
        case .node(let node): return node
        case .web(let web): return web
        case .folder(let folder): return folder
        case .zip(let zip): return zip
        }
    }

    /// The place as a destination of instances (every kind is one).
    public var sink: any InstanceSink {
        switch self {
        case .node(let node): return node
        case .web(let web): return web
        case .folder(let folder): return folder
        case .zip(let zip): return zip
        }
    }

    /// The place as something that answers a verification (a node's C-ECHO, a DICOMweb search), `nil` for a
    /// folder or a zip folder, which have nothing to verify.
    public var verifier: (any VerifyingPlace)? {
        switch self {
        case .node(let node): return node
        case .web(let web): return web
        case .folder, .zip: return nil
        }
    }

    /// The place as a source that can send a study to another DIMSE node by itself (C-MOVE, PS3.4 §C.4.2):
    /// only a node.
    public var mover: (any MovingSource)? {
        if case .node(let node) = self { return node }
        return nil
    }

    /// The AE title a source's C-MOVE names to deliver here (PS3.4 §C.4.2.1.4.1, Move Destination): a node's
    /// called AE title; `nil` for a place no peer can move to by itself.
    public var moveDestinationAETitle: String? {
        if case .node(let node) = self { return node.connection.node.calledAETitle }
        return nil
    }

    /// The folder px's own C-STORE receiver places into when a source moves instances here through px (C-MOVE
    /// to px, PS3.4 §C.4.2), and whose staging folder a run holds: a folder place; `nil` for the others.
    public var receivingFolder: FolderPlace? {
        if case .folder(let folder) = self { return folder }
        return nil
    }

    /// The DIMSE peer behind the place (a node's backend bound to its connection): whose retrieve session (one
    /// association for a run's C-GETs and C-MOVEs) a run opens when the place is a source, and whom a storage
    /// commitment is asked of when it is a destination; `nil` for a place without associations.
    public var dimsePeer: DIMSEPeer? {
        if case .node(let node) = self { return node.peer }
        return nil
    }

    /// The place's kind.
    public var kind: PlaceKind {
        switch self {
        case .node: return .node
        case .web: return .web
        case .folder: return .folder
        case .zip: return .zip
        }
    }

    /// The place as events and results name it: `AE@host:port`, the DICOMweb base URL, the folder's path,
    /// `zip:PATH`.
    public var label: String {
        switch self {
        case .node(let node):
            let peer = node.connection.node
            return "\(peer.calledAETitle)@\(peer.host):\(peer.port)"
        case .web(let web): return web.place.baseURL
        case .folder(let folder): return folder.root
        case .zip(let zip): return "zip:" + zip.root
        }
    }

    /// The place as one that can say what its instances' bytes are (``ContentAuditing``, for `--verify`): a
    /// folder or a zip folder.
    public var auditor: (any ContentAuditing)? {
        switch self {
        case .folder(let folder): return folder
        case .zip(let zip): return zip
        case .node, .web: return nil
        }
    }

    /// The place as a source that can hold entries it cannot read (another tool's zip archive): only a zip
    /// folder.
    public var unreadableReporter: (any UnreadableEntriesReporting)? {
        if case .zip(let zip) = self { return zip }
        return nil
    }

    /// The folder whose lock (``PXStorage/PlaceLock``) a writer of this place takes: a folder's or a zip folder's
    /// root; `nil` for a node or a DICOMweb service, which order their own writes.
    public var lockRoot: String? {
        switch self {
        case .folder(let folder): return folder.root
        case .zip(let zip): return zip.root
        case .node, .web: return nil
        }
    }

    // MARK: - Making endpoints

    /// A folder place at `path`, its index refreshed (files added or removed by hand since the last run are
    /// seen: only new or changed ones are read).
    /// - Parameter create: make the folder when it is missing (`mkdir -p`), as for a destination.
    /// - Parameter index: where the index is kept: in the place for one px writes, else ``FolderPlace/IndexLocation/readOnly``
    ///   (the place's own index if it has one, else px's cache), so a source is never written into.
    public static func folder(
        at path: String, layout: StorageLayout = StorageLayout(), create: Bool = false,
        index: FolderPlace.IndexLocation? = nil, logger: Logger
    ) async throws(PXError) -> Endpoint {
        if create {
            do { _ = try StorageRoot(path: path) } catch { throw .storage(error) }
        }
        let folder = try FolderPlace(
            root: path, layout: layout, index: index ?? (create ? .inPlace : .readOnly), logger: logger)
        let report = try await folder.refresh()
        logger.info(
            "folder index refreshed",
            metadata: ["root": "\(path)", "added": "\(report.added)", "removed": "\(report.removed)"])
        return .folder(folder)
    }

    /// A zip folder at `path`.
    /// - Parameter create: make the folder when it is missing, as for a destination.
    public static func zip(at path: String, create: Bool = false) throws(PXError) -> Endpoint {
        if create {
            do { _ = try StorageRoot(path: path) } catch { throw .storage(error) }
        }
        return .zip(ZipPlace(root: path))
    }
}

/// The four kinds of place (``Endpoint``, and the command line's place before it is resolved), by the names the
/// JSON, messages and the config file's `kind` use: `node`, `dicomweb`, `folder`, `zip`.
public enum PlaceKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// A DIMSE peer.
    case node
    /// A DICOMweb service (PS3.18).
    case web = "dicomweb"
    /// A folder of DICOM files with its index.
    case folder
    /// A zip folder, one archive per study.
    case zip

    public var description: String { rawValue }
}

/// A DICOMweb service as a place (PS3.18): QIDO-RS answers the inventory (``DICOMWebInventory``), WADO-RS
/// yields instances, STOW-RS takes them, all through its ``DICOMWebService`` (no connection, no AE title).
/// Results name it by its URL, never by an AE title.
public struct WebPlace: Sendable {
    public let place: DICOMWebPlace
    /// WADO-RS, STOW-RS and the verification search, under ``timeouts``.
    public let service: DICOMWebService
    public let inventory: DICOMWebInventory
    public let timeouts: Timeouts
    public let logger: Logger

    /// - Parameter transferSyntax: the transfer syntax WADO-RS asks for (PS3.18 §8.7.3.5.2); `nil` for the
    ///   stored one.
    public init(
        place: DICOMWebPlace, transferSyntax: String? = nil, timeouts: Timeouts = .standard, logger: Logger
    ) {
        self.place = place
        self.service = DICOMWebService(place: place, transferSyntax: transferSyntax, timeouts: timeouts)
        self.inventory = DICOMWebInventory(place: place, timeouts: timeouts, logger: logger)
        self.timeouts = timeouts
        self.logger = logger
    }
}

extension WebPlace: PlaceInventory {
    public func studies(matching keys: DataSet) async throws(PXError) -> [StudyHolding] {
        try await inventory.studies(matching: keys)
    }

    public func series(ofStudy studyInstanceUID: String) async throws(PXError) -> [SeriesHolding] {
        try await inventory.series(ofStudy: studyInstanceUID)
    }

    public func instances(ofStudy studyInstanceUID: String, series seriesInstanceUID: String) async throws(PXError)
        -> Set<String>
    {
        try await inventory.instances(ofStudy: studyInstanceUID, series: seriesInstanceUID)
    }

    public func instancesBySeries(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: Set<String>] {
        try await inventory.instancesBySeries(ofStudy: studyInstanceUID)
    }
}
