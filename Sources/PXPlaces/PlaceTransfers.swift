import DICOMData
import DICOMNetwork
import DICOMWeb
import Logging
import PXCore
import PXIndex
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

// What each kind of place does as a source and as a sink of instances: the one transfer path
// (``SyncTransfer``) composes any source with any sink through these.

// MARK: - Node (DIMSE)

extension NodePlace: VerifyingPlace, MovingSource, InstanceSink {
    /// C-ECHO (PS3.4 Annex A).
    public func verify() async throws(PXError) -> Verification {
        try await peer.verify(logger: logger)
    }

    /// C-GET (PS3.4 §C.4.3) into the tree: the instances arrive as C-STORE sub-operations on the same
    /// association; through the run's retrieve session when there is one.
    public func deliver(_ unit: TransferUnit, into tree: StagingTree, context: TransferContext) async throws(PXError)
        -> Delivery
    {
        let request = try GetRequest(unit, into: tree)
        let session =
            context.session ?? OneAssociationPerRequest(backend: backend, connection: connection, logger: logger)
        let result = try await session.get(request) { _ in }
        return try Delivery.retrieved(result, into: tree)
    }

    /// C-MOVE (PS3.4 §C.4.2) of the unit to `destination`, an AE title this node knows.
    public func move(_ unit: TransferUnit, to destination: String, context: TransferContext) async throws(PXError)
        -> MoveResult
    {
        let request = try MoveRequest(
            destination: destination, studyInstanceUID: unit.studyInstanceUID,
            seriesInstanceUID: unit.seriesInstanceUID, sopInstanceUIDs: unit.sopInstanceUIDs)
        let session =
            context.session ?? OneAssociationPerRequest(backend: backend, connection: connection, logger: logger)
        return try await session.move(request) { _ in }
    }

    public var tree: StagingTree? { nil }

    /// C-STORE (PS3.4 Annex B) of the delivered files on one association, `context.window` outstanding.
    public func take(_ delivery: Delivery, of unit: TransferUnit, context: TransferContext) async throws(PXError)
        -> TransferCount
    {
        guard !delivery.files.isEmpty else { return TransferCount() }
        var request = PushRequest(files: delivery.files.map(\.pushFile))
        request.window = context.window
        let result = try await peer.push(request, logger: logger) { _ in }
        var count = try Self.taken(result)
        if context.collectsStored {
            count.stored = result.files.filter(\.succeeded).map { CommitmentInstance($0.file) }
        }
        return count
    }
}

extension InstanceSink {
    /// A push's result as what the sink took: a push that stored nothing and ended with an error throws it.
    static func taken(_ result: PushResult) throws(PXError) -> TransferCount {
        if let failure = result.failure, result.completed + result.warning == 0 { throw failure }
        return TransferCount(transferred: result.completed + result.warning, failed: result.failed)
    }
}

// MARK: - DICOMweb

extension WebPlace: VerifyingPlace, InstanceSource, InstanceSink {
    /// A search for at most one study (QIDO-RS, PS3.18 §10.6): the service answers with DICOM JSON and
    /// accepts the credentials.
    public func verify() async throws(PXError) -> Verification {
        try await service.verify(logger: logger)
    }

    /// WADO-RS (PS3.18 §10.4) into the tree, each part placed atomically once complete.
    public func deliver(_ unit: TransferUnit, into tree: StagingTree, context: TransferContext) async throws(PXError)
        -> Delivery
    {
        let request = try GetRequest(unit, into: tree)
        let result = try await service.get(request, logger: logger) { _ in }
        return try Delivery.retrieved(result, into: tree)
    }

    public var tree: StagingTree? { nil }

    /// STOW-RS (PS3.18 §10.5) in batches of ``DICOMWebClient/storeBatchSize``.
    public func take(_ delivery: Delivery, of unit: TransferUnit, context: TransferContext) async throws(PXError)
        -> TransferCount
    {
        guard !delivery.files.isEmpty else { return TransferCount() }
        let request = PushRequest(files: delivery.files.map(\.pushFile))
        return try Self.taken(try await service.push(request, logger: logger) { _ in })
    }
}

// MARK: - Folder

extension FolderPlace: InstanceSource, InstanceSink {
    /// The unit's files as the index holds them (no copy), one per SOP Instance UID: an instance held in two
    /// files is delivered once (the first by path). When the two differ (size, else bytes) the delivery's
    /// failure names them: two data sets under one UID are reported, never dropped silently.
    public func deliver(_ unit: TransferUnit, into tree: StagingTree, context: TransferContext) async throws(PXError)
        -> Delivery
    {
        var first: [String: StorableFile] = [:]
        var files: [DeliveredFile] = []
        var conflicts: [String] = []
        for file in try await storableFiles(of: unit) {
            guard let held = first[file.sopInstanceUID] else {
                first[file.sopInstanceUID] = file
                files.append(DeliveredFile(path: file.path, indexed: file.indexed))
                continue
            }
            if !Self.sameContent(held.path, file.path) {
                conflicts.append("\(file.sopInstanceUID) in \(held.path) and \(file.path)")
            }
        }
        var failure: PXError?
        if !conflicts.isEmpty {
            failure = .malformedFile(
                path: root,
                reason: "\(conflicts.count) SOP Instance UID(s) held in two files with different content (the first "
                    + "by path sent): " + conflicts.prefix(10).joined(separator: "; "))
        }
        return Delivery(files: files, inSinkTree: false, failure: failure)
    }

    /// Whether two files hold the same bytes (compared in 64 KiB blocks; a file that cannot be read differs).
    static func sameContent(_ a: String, _ b: String) -> Bool {
        let first = open(a, O_RDONLY | O_CLOEXEC)
        let second = open(b, O_RDONLY | O_CLOEXEC)
        defer {
            if first >= 0 { close(first) }
            if second >= 0 { close(second) }
        }
        guard first >= 0, second >= 0 else { return false }
        var x = [UInt8](repeating: 0, count: 1 << 16)
        var y = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = x.withUnsafeMutableBytes { read(first, $0.baseAddress, $0.count) }
            guard n >= 0 else { return false }
            var m = 0
            while m < n {
                let got = y.withUnsafeMutableBytes { read(second, $0.baseAddress! + m, n - m) }
                guard got > 0 else { return false }
                m += got
            }
            if n == 0 {
                let more = y.withUnsafeMutableBytes { read(second, $0.baseAddress, 1) }
                return more == 0
            }
            if x[0..<n] != y[0..<n] { return false }
        }
    }

    /// The folder's own tree and layout: retrievals place straight into it.
    public var tree: StagingTree? { StagingTree(root: root, layout: layout, isSinkTree: true) }

    /// Files already placed in the tree are recorded in the index; others (another folder's) are copied in
    /// through the placer (atomic, an instance held already is kept) and recorded.
    public func take(_ delivery: Delivery, of unit: TransferUnit, context: TransferContext) async throws(PXError)
        -> TransferCount
    {
        if delivery.inSinkTree {
            try await recordPlaced(delivery.files, logger: context.logger)
            return TransferCount(transferred: delivery.files.count)
        }
        let placer: InstancePlacer
        let staging: String
        do {
            placer = try InstancePlacer(root: root, layout: layout, duplicates: .keep, fsync: false)
            staging = try placer.storage.stagingFolder()
        } catch {
            throw .storage(error)
        }
        defer { rmdir(staging) }
        var placed: [DeliveredFile] = []
        var failed = 0
        for file in delivery.files {
            let temporary = staging + "/" + StagingName.next("copy")
            do {
                try Self.copy(file, to: temporary)
                let header = try Part10File.readHeader(contentsOf: temporary)
                let placement = try placer.place(temporaryFile: temporary, dataSet: header.dataSet)
                if placement.duplicate == nil {
                    // Kept until the study's files are recorded: compacted, its values alone instead of the
                    // buffer the header was read into.
                    placed.append(DeliveredFile(path: placement.path, header: header.compacted()))
                }
            } catch {
                unlink(temporary)
                failed += 1
                context.logger.warning("instance not copied", metadata: ["file": "\(file.path)", "error": "\(error)"])
            }
        }
        try await recordPlaced(placed, logger: context.logger)
        return TransferCount(transferred: placed.count, failed: failed)
    }

    /// Copies a delivered file to `destination` (a new file), reading an indexed file only while it is still
    /// the file the index recorded.
    static func copy(_ file: DeliveredFile, to destination: String) throws(PXError) {
        let input: Int32
        if let indexed = file.indexed {
            do { input = try indexed.open().descriptor } catch { throw .io("\(error)", path: file.path) }
        } else {
            input = open(file.path, O_RDONLY | O_CLOEXEC)
            guard input >= 0 else { throw .io("cannot open (\(POSIX.errorText()))", path: file.path) }
        }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard output >= 0 else { throw .io("cannot create (\(POSIX.errorText()))", path: destination) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { return }
            guard count > 0 else { throw .io("cannot read (\(POSIX.errorText()))", path: file.path) }
            var offset = 0
            while offset < count {
                let written = buffer.withUnsafeBytes { write(output, $0.baseAddress! + offset, count - offset) }
                guard written > 0 else { throw .io("cannot write (\(POSIX.errorText()))", path: destination) }
                offset += written
            }
        }
    }
}

// MARK: - Zip folder

extension ZipPlace: InstanceSource, InstanceSink {
    /// The study's archive extracted into the tree through its placer (each entry checked, placed
    /// atomically; an instance the tree holds already is kept and not delivered again). Into a temporary
    /// tree, only the unit's instances are delivered (a series or some instances of the study).
    public func deliver(_ unit: TransferUnit, into tree: StagingTree, context: TransferContext) async throws(PXError)
        -> Delivery
    {
        let placer: InstancePlacer
        do {
            placer = try InstancePlacer(
                root: tree.root, layout: tree.layout, duplicates: .keep, fsync: false, observer: tree.observer)
        } catch {
            throw .storage(error)
        }
        var placedSoFar: [InstancePlacer.Placement] = []
        var failure: PXError?
        do {
            _ = try extract(study: unit.studyInstanceUID, into: placer) { placedSoFar.append($0) }
        } catch {
            // What was extracted before the failure is delivered all the same.
            guard placedSoFar.contains(where: { $0.duplicate == nil }) else { throw .zip(error) }
            failure = .zip(error)
        }
        var files = placedSoFar.filter { $0.duplicate == nil }.map { DeliveredFile(path: $0.path) }
        if !tree.isSinkTree && (unit.seriesInstanceUID != nil || !unit.sopInstanceUIDs.isEmpty) {
            let wanted = Set(unit.sopInstanceUIDs)
            files = files.filter { file in
                let header: Part10File
                do { header = try Part10File.readHeader(contentsOf: file.path) } catch {
                    // An entry whose header cannot be read now is delivered: the sink reports it.
                    context.logger.debug("extracted entry not read", metadata: ["file": "\(file.path)"])
                    return true
                }
                if let series = unit.seriesInstanceUID, header.dataSet.string(.seriesInstanceUID) != series {
                    return false
                }
                return wanted.isEmpty || wanted.contains(header.dataSet.string(.sopInstanceUID) ?? "")
            }
        }
        return Delivery(files: files, inSinkTree: tree.isSinkTree, failure: failure)
    }

    public var tree: StagingTree? { nil }

    /// A ``ZipPrecompressor`` spooling into `<tree>/.px-zip-spool`: each instance a retrieval places is
    /// deflated while the next ones arrive, with ``ZipDeflateMode/spare`` on the cores the transfer leaves
    /// (``ZipPlace/spareWorkers``) at the lowest priority, with ``ZipDeflateMode/all`` on every core at the
    /// process's own (as fast as it can). None with ``ZipDeflateMode/spare`` on two cores, where no core is
    /// left: ``take(_:of:context:)`` then stores what the retrieval placed.
    public func placementObserver(in tree: StagingTree) throws(PXError) -> PlacementObserving? {
        let spare = deflate == .spare
        if spare && ZipPlace.spareWorkers == 0 { return nil }
        do {
            return PlacementObserving(
                try ZipPrecompressor(
                    spool: tree.root + "/.px-zip-spool", level: level,
                    workers: spare ? ZipPlace.spareWorkers : ZipPlace.workers, lowPriority: spare))
        } catch {
            throw .zip(error)
        }
    }

    /// The study's archive gets the instances it lacks: a new archive (with the old entries and the new ones)
    /// replaces the old atomically (``ZipPlace/archive(study:files:fsync:)``); instances archived already are
    /// skipped.
    public func take(_ delivery: Delivery, of unit: TransferUnit, context: TransferContext) async throws(PXError)
        -> TransferCount
    {
        guard !delivery.files.isEmpty else { return TransferCount() }
        // The files a retrieval placed are deflated already, being deflated, or (deflate .spare) left to be
        // stored when their deflate has not started; with no precompressor (.spare with no core to spare,
        // placementObserver(in:)) none has started.
        let precompressed =
            (delivery.placementObserver?.observer as? ZipPrecompressor)?.finished(deflate)
            ?? ZipPrecompressor.Finished(
                notDeflated: deflate == .spare ? Set(delivery.files.map(\.path)) : [])
        do {
            let indexed = delivery.files.compactMap(\.indexed)
            let result =
                indexed.count == delivery.files.count
                ? try archive(study: unit.studyInstanceUID, indexedFiles: indexed)
                : try archive(
                    study: unit.studyInstanceUID, files: delivery.files.map(\.path), precompressed: precompressed)
            return TransferCount(transferred: result.added)
        } catch {
            throw .zip(error)
        }
    }
}

extension GetRequest {
    /// The retrieval of `unit` (C-GET or WADO-RS) into `tree`, whose observer is told of each instance placed.
    init(_ unit: TransferUnit, into tree: StagingTree) throws(PXError) {
        self = try GetRequest(
            studyInstanceUID: unit.studyInstanceUID, seriesInstanceUID: unit.seriesInstanceUID,
            sopInstanceUIDs: unit.sopInstanceUIDs, root: tree.root, layout: tree.layout)
        placementObserver = tree.observer
    }
}

extension DeliveredFile {
    /// The file as a C-STORE or STOW-RS push sends it: its header read now, an indexed file sent only while it
    /// is still the one the index recorded.
    var pushFile: PushFile {
        var push = PushFile(readingHeaderOf: path)
        push.indexed = indexed
        return push
    }
}

// MARK: - Content audit (--verify)

extension FolderPlace: ContentAuditing {
    /// Each indexed file of the study read whole (the first file by path of an instance held twice), opened
    /// only while it is still the file the index recorded.
    public func contentChecksums(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: ContentChecksum] {
        var out: [String: ContentChecksum] = [:]
        for file in try await files(study: studyInstanceUID) where out[file.sopInstanceUID] == nil {
            guard let indexed = file.indexed else { continue }
            let opened: OpenedFile
            do { opened = try indexed.open() } catch { throw .io("\(error)", path: file.path) }
            defer { opened.close() }
            do {
                out[file.sopInstanceUID] = try ContentChecksum.of(descriptor: opened.descriptor, path: file.path)
            } catch {
                throw .storage(error)
            }
        }
        return out
    }
}

extension ZipPlace: ContentAuditing {
    public func contentChecksums(ofStudy studyInstanceUID: String) async throws(PXError) -> [String: ContentChecksum] {
        do { return try checksums(ofStudy: studyInstanceUID) } catch { throw .zip(error) }
    }
}
