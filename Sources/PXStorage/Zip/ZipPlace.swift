import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A folder of zipped studies, as dicomsync's zipped place keeps them: `ROOT/<PatientID>-<PatientName>/
/// <StudyInstanceUID>.zip`, one archive per study (names made safe by ``StorageLayout``'s sanitiser and
/// UID encoding), each holding
/// - ``manifestName`` first: the study's patient and study keys and each series' keys, as DICOM JSON
///   (PS3.18 §F.2), so keys come without reading a DICOM header;
/// - `<SeriesInstanceUID>/<SOPInstanceUID>.dcm` for every instance, so counts and instance UIDs come from
///   the central directory alone.
///
/// Archives are written by ``ZipWriter`` (complete or not at all) and read by ``ZipReader`` (hostile
/// archives refused). Hidden files (a killed writer's `.<name>.partial-*`) and anything else are ignored.
///
/// Archives of other tools are read too: dicomsync's `<patient>/<study>.zip` (or a `.zip` directly in the
/// root), any zip of DICOM files, without a manifest. Their keys, series and instances come from each
/// entry's header, read only as far as the keys go (``ZipPlace/listForeign(_:)``); an archive may then hold
/// several studies. Listings are kept per archive while its file is unchanged (``ZipListingCache``). An
/// archive that cannot be read fails alone: ``listing()`` names it among its ``Listing/failures``.
public struct ZipPlace: Sendable, Hashable {
    /// The place's folder.
    public let root: String
    public let limits: ZipLimits
    /// The deflate level for entries that are deflated.
    public let level: Int32
    /// How much of what a retrieval places is deflated (``ZipDeflateMode``; px-sync's `--zip-deflate`).
    public var deflate: ZipDeflateMode

    /// The manifest entry's name.
    public static let manifestName = "px-study.json"
    /// The manifest's format version.
    static let manifestVersion = 1

    /// `<patient folder>/<study>.zip` under the root.
    static let archiveLayout = Self.layout("{PatientID}-{PatientName}/{StudyInstanceUID}.zip")
    /// `<series>/<instance>.dcm` inside an archive; long enough fields that no UID (at most 64 bytes, PS3.5
    /// §9.1, 192 once encoded) is cut, so every entry name decodes back to its UIDs.
    static let entryLayout = Self.layout("{SeriesInstanceUID}/{SOPInstanceUID}.dcm", maximumFieldLength: 200)

    private static func layout(_ template: String, maximumFieldLength: Int = 64) -> StorageLayout {
        // Both templates are valid (ZipPlaceTests parse them).
        (try? StorageLayout(template: template, maximumFieldLength: maximumFieldLength)) ?? StorageLayout()
    }

    public init(root: String, limits: ZipLimits = ZipLimits(), level: Int32 = 1, deflate: ZipDeflateMode = .spare) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.limits = limits
        self.level = level
        self.deflate = deflate
    }

    // MARK: Listing

    /// One study's archive as listed: its keys from the manifest, its series and instances from the central
    /// directory.
    public struct Study: Sendable {
        /// The archive's path.
        public var path: String
        public var studyInstanceUID: String
        /// Patient and study keys (PatientID, PatientName, StudyDate, StudyDescription, AccessionNumber, ...).
        public var record: DataSet
        public var series: [Series]
        /// Whether the archive has px's manifest (`false`: another tool's archive, read from its headers).
        public var hasManifest: Bool = true
        /// In another tool's archive: the entries that look like DICOM but cannot be read, each with why
        /// (the archive's, whichever study they hold; ``ZipPlace/listForeign(_:)``).
        public var badEntries: [BadEntry] = []

        public var instanceCount: Int { series.reduce(0) { $0 + $1.sopInstanceUIDs.count } }

        /// The entry holding an instance: `<series>/<instance>.dcm` in px's archives, the entry the instance
        /// was read from in another tool's.
        public func entryName(series seriesInstanceUID: String, instance sopInstanceUID: String) -> String {
            series.first { $0.seriesInstanceUID == seriesInstanceUID }?.entryNames[sopInstanceUID]
                ?? ZipPlace.entryName(series: seriesInstanceUID, instance: sopInstanceUID)
        }
    }

    /// An entry of another tool's archive that is skipped because it cannot be read.
    public struct BadEntry: Sendable, Hashable {
        /// The entry's name in the archive.
        public var name: String
        /// Why it cannot be read.
        public var reason: String

        /// `N entries cannot be read: "a.dcm" (why); ...`, the first ten named.
        public static func describe(_ entries: [BadEntry]) -> String {
            let named = entries.prefix(10).map { "\($0.name.debugDescription) (\($0.reason))" }
            let more = entries.count > 10 ? "; and \(entries.count - 10) more" : ""
            return "\(entries.count) entr\(entries.count == 1 ? "y" : "ies") cannot be read: "
                + named.joined(separator: "; ") + more
        }
    }

    public struct Series: Sendable {
        public var seriesInstanceUID: String
        /// Series keys (Modality, SeriesNumber, SeriesDescription, ...).
        public var record: DataSet
        public var sopInstanceUIDs: Set<String>
        /// In another tool's archive: the entry of each SOP Instance UID.
        var entryNames: [String: String] = [:]
    }

    /// What ``listing()`` found: the studies of the archives it could read, and the archives it could not.
    public struct Listing: Sendable {
        public var studies: [Study]
        public var failures: [Failure]
    }

    /// An archive that cannot be listed (truncated, not a zip, hostile, no DICOM entry): it fails alone.
    public struct Failure: Sendable {
        /// The archive's path relative to the root (`<folder>/<name>.zip`): what names it where the study it
        /// holds cannot be named (px-sync's study key for it, ``study(_:)`` and ``extract(study:into:onPlaced:)``
        /// throw ``error`` for it).
        public var key: String
        public var error: ZipError
    }

    /// The archives under the root (`<folder>/<name>.zip`, and `<name>.zip` in the root itself, as other
    /// tools leave them; hidden names skipped), sorted by path.
    public func archivePaths() throws(ZipError) -> [String] {
        var paths: [String] = []
        for folder in try Self.names(in: root) where !folder.hasPrefix(".") {
            let folderPath = root + "/" + folder
            if folder.hasSuffix(".zip") && Self.isRegularFile(folderPath) { paths.append(folderPath) }
            guard Self.isDirectory(folderPath) else { continue }
            for name in try Self.names(in: folderPath) where !name.hasPrefix(".") && name.hasSuffix(".zip") {
                paths.append(folderPath + "/" + name)
            }
        }
        return paths.sorted()
    }

    /// Every study the place holds. A root that does not exist holds none.
    /// - Throws: The first archive's error that cannot be listed (``listing()`` lists the others).
    public func studies() throws(ZipError) -> [Study] {
        let listing = try listing()
        if let failure = listing.failures.first { throw failure.error }
        return listing.studies
    }

    /// Every study of the archives that can be read, and a failure for each archive that cannot.
    /// - Throws: Only when the root itself cannot be listed.
    public func listing() throws(ZipError) -> Listing {
        var listing = Listing(studies: [], failures: [])
        for path in try archivePaths() {
            do {
                listing.studies += try studies(at: path)
            } catch {
                listing.failures.append(Failure(key: String(path.dropFirst(root.count + 1)), error: error))
            }
        }
        return listing
    }

    /// The study as listed, or `nil` when the place does not hold it: every archive that holds some of it
    /// (px's own, named after the study, and other tools' archives: dicomsync splits a study over several, and
    /// so do hand-made places) merged into one (``merged(_:)``), so a study is all its instances wherever
    /// they lie.
    /// - Throws: The error of its archive when that cannot be read: the archive named after the study, or
    ///   the one whose ``Failure/key`` is `studyInstanceUID`.
    public func study(_ studyInstanceUID: String) throws(ZipError) -> Study? {
        let parts = try archives(of: studyInstanceUID)
        return parts.isEmpty ? nil : Self.merged(parts)
    }

    /// Each archive holding some of the study, as listed, px's own (named after the study) first.
    /// - Throws: As ``study(_:)``.
    public func archives(of studyInstanceUID: String) throws(ZipError) -> [Study] {
        var parts: [Study] = []
        let named = try namedArchivePath(of: studyInstanceUID)
        if let named {
            parts += try studies(at: named).filter { $0.studyInstanceUID == studyInstanceUID }
        }
        let listing = try listing()
        parts += listing.studies.filter { $0.studyInstanceUID == studyInstanceUID && $0.path != named }
        if parts.isEmpty, let failure = listing.failures.first(where: { $0.key == studyInstanceUID }) {
            throw failure.error
        }
        return parts
    }

    /// One study listed in several archives as one: the first archive's path and keys, the union of the
    /// series and of their instances.
    public static func merged(_ parts: [Study]) -> Study {
        var study = parts[0]
        for part in parts.dropFirst() {
            study.hasManifest = study.hasManifest && part.hasManifest
            study.badEntries += part.badEntries
            for series in part.series {
                if let index = study.series.firstIndex(where: { $0.seriesInstanceUID == series.seriesInstanceUID }) {
                    study.series[index].sopInstanceUIDs.formUnion(series.sopInstanceUIDs)
                    study.series[index].entryNames.merge(series.entryNames) { first, _ in first }
                } else {
                    study.series.append(series)
                }
            }
        }
        return study
    }

    /// Where the archive of a study is: `<any patient folder>/<encoded UID>.zip` when px wrote it, else the
    /// archive of another tool that holds it.
    public func archivePath(of studyInstanceUID: String) throws(ZipError) -> String? {
        if let path = try namedArchivePath(of: studyInstanceUID) { return path }
        return try listing().studies.first { $0.studyInstanceUID == studyInstanceUID }?.path
    }

    /// `<any patient folder>/<encoded UID>.zip`, px's name for a study's archive, if there is one.
    func namedArchivePath(of studyInstanceUID: String) throws(ZipError) -> String? {
        let name = Self.archiveLayout.encodeUID(studyInstanceUID) + ".zip"
        for folder in try Self.names(in: root) where !folder.hasPrefix(".") {
            let candidate = root + "/" + folder + "/" + name
            if Self.isRegularFile(candidate) { return candidate }
        }
        return nil
    }

    /// Lists one archive of one study.
    /// - Throws: ``ZipError/Code/malformed`` for an archive (of another tool) holding several studies.
    public func study(at path: String) throws(ZipError) -> Study {
        let studies = try studies(at: path)
        guard studies.count == 1 else {
            throw .malformed("the archive holds \(studies.count) studies", path: path)
        }
        return studies[0]
    }

    /// Lists one archive: px's from its manifest and central directory, another tool's from its entries'
    /// headers (one study or several). Kept while the file is unchanged.
    public func studies(at path: String) throws(ZipError) -> [Study] {
        try ZipListingCache.shared.studies(at: path, limits: limits) { () throws(ZipError) in
            let reader = try ZipReader(path: path, limits: limits)
            if reader.entry(named: Self.manifestName) == nil { return try Self.listForeign(reader) }
            return [try Self.list(reader)]
        }
    }

    /// The archive of a study and the study as listed.
    /// - Throws: ``ZipError/Code/missingEntry`` when the place does not hold it; its archive's error when
    ///   that cannot be read.
    func locate(_ studyInstanceUID: String) throws(ZipError) -> Study {
        guard let study = try study(studyInstanceUID) else { throw .missingEntry(studyInstanceUID, path: root) }
        return study
    }

    /// The manifest and the central directory of an open archive.
    static func list(_ reader: ZipReader) throws(ZipError) -> Study {
        guard let entry = reader.entry(named: manifestName) else {
            throw .malformed("no \(manifestName): not an archive of a zip place", path: reader.path)
        }
        let manifest = try Manifest(bytes: reader.contents(of: entry, maximumSize: 16 << 20), path: reader.path)
        var byFolder: [String: Int] = [:]
        var series: [Series] = []
        for record in manifest.series {
            guard let uid = record.string(.seriesInstanceUID)?.trimmingSpaces else { continue }
            byFolder[entryLayout.encodeUID(uid)] = series.count
            series.append(Series(seriesInstanceUID: uid, record: record, sopInstanceUIDs: []))
        }
        for entry in reader.entries where entry.name != manifestName && !entry.isDirectory {
            let parts = entry.name.split(separator: "/")
            guard parts.count == 2, parts[1].hasSuffix(".dcm"), let index = byFolder[String(parts[0])] else {
                throw .malformed(
                    "entry \(entry.name.debugDescription) is not <series>/<instance>.dcm of a listed series",
                    path: reader.path)
            }
            series[index].sopInstanceUIDs.insert(decodeUID(String(parts[1].dropLast(4))))
        }
        return Study(
            path: reader.path, studyInstanceUID: manifest.studyInstanceUID, record: manifest.study,
            series: series.filter { !$0.sopInstanceUIDs.isEmpty })
    }

    /// The inverse of ``StorageLayout/encodeUID(_:)`` for an uncut name: `_XX` is the byte 0xXX.
    static func decodeUID(_ name: String) -> String {
        guard name.contains("_") else { return name }
        var bytes: [UInt8] = []
        var utf8 = Array(name.utf8)[...]
        while let byte = utf8.popFirst() {
            if byte == UInt8(ascii: "_"), utf8.count >= 2,
                let value = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(value)
                utf8 = utf8.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: Archiving

    /// What ``archive(study:files:fsync:)`` did.
    public struct ArchiveResult: Sendable, Hashable {
        /// The study's archive.
        public var path: String
        /// Instances added to it by this call (already archived ones are not counted).
        public var added: Int
        /// Instances it holds now.
        public var instances: Int
        /// Series it holds now.
        public var series: Int
        /// Whether an older archive of the study was replaced (it is `false` for a new one, and for a call
        /// that added nothing and so left the archive as it was).
        public var replaced: Bool
    }

    /// Archives Part 10 files of one study into its zip: a new archive, or, when the place holds the study
    /// already and the files add instances to it, a new archive with the old entries (copied as they are
    /// stored) and the new ones, which replaces the old atomically. Files already archived (by SOP
    /// Instance UID) are skipped; when nothing is new the archive is left untouched.
    ///
    /// Each entry is stored when its transfer syntax is already compressed (encapsulated pixel data,
    /// Deflated Explicit VR Little Endian) and deflated otherwise (``method(for:)``, ``bulkAfter(for:)``),
    /// up to one entry per core at once (``ZipWriter/addFiles(_:workers:)``).
    ///
    /// - Throws: ``ZipError/Code/malformed`` for a file that is not Part 10 or of another study;
    ///   ``ZipError`` of the writer or of reading the older archive.
    ///
    /// - Parameter precompressed: What a ``ZipPrecompressor`` did with the files (``ZipPrecompressor/finished(_:)``):
    ///   the entries of those it deflated are copied from their spool files, those whose deflate never started
    ///   (``ZipDeflateMode/spare``) are stored.
    public func archive(
        study studyInstanceUID: String, files: [String], fsync: Bool = true,
        precompressed: ZipPrecompressor.Finished = ZipPrecompressor.Finished()
    ) throws(ZipError) -> ArchiveResult {
        try self.archive(
            study: studyInstanceUID, sources: files.map(ArchiveSource.path), fsync: fsync, precompressed: precompressed)
    }

    /// ``archive(study:files:fsync:)`` of the files of a folder place, each opened below the place's root without
    /// following links and only while it is still the file the place's index recorded (``IndexedFile/open()``),
    /// its header and bytes read from that descriptor.
    public func archive(study studyInstanceUID: String, indexedFiles files: [IndexedFile], fsync: Bool = true)
        throws(ZipError) -> ArchiveResult
    {
        try self.archive(study: studyInstanceUID, sources: files.map(ArchiveSource.indexed), fsync: fsync)
    }

    /// A file to archive: named by the user, or a place's indexed file.
    enum ArchiveSource {
        case path(String)
        case indexed(IndexedFile)

        var path: String {
            switch self {
            case .path(let path): return path
            case .indexed(let file): return file.path
            }
        }

        func open() throws(ZipError) -> OpenedFile {
            do {
                switch self {
                case .path(let path): return try OpenedFile(path: path)
                case .indexed(let file): return try file.open()
                }
            } catch {
                if error.code == .notTheIndexedFile { throw .malformed("\(error)", path: self.path) }
                throw .io("\(error)", path: self.path)
            }
        }
    }

    private func archive(
        study studyInstanceUID: String, sources files: [ArchiveSource], fsync: Bool,
        precompressed: ZipPrecompressor.Finished = ZipPrecompressor.Finished()
    ) throws(ZipError) -> ArchiveResult {
        struct Incoming {
            var source: ArchiveSource
            var entryName: String
            var method: ZipMethod
            var bulkAfter: Int?
        }
        var incoming: [Incoming] = []
        var seen = Set<String>()
        var first: DataSet?
        var seriesRecords: [String: DataSet] = [:]
        var seriesOrder: [String] = []
        for source in files {
            let file = source.path
            let header: Part10File
            let opened = try source.open()
            do {
                defer { opened.close() }
                header = try Part10File.readHeader(contentsOf: opened.descriptorPath)
            } catch {
                throw .malformed("not a readable DICOM file (\(error))", path: file)
            }
            let ds = header.dataSet
            guard let study = ds.string(.studyInstanceUID)?.trimmingSpaces, study == studyInstanceUID else {
                throw .malformed("file is not of study \(studyInstanceUID)", path: file)
            }
            guard let seriesUID = ds.string(.seriesInstanceUID)?.trimmingSpaces, !seriesUID.isEmpty,
                let sop = ds.string(.sopInstanceUID)?.trimmingSpaces, !sop.isEmpty
            else { throw .malformed("file lacks a Series or SOP Instance UID", path: file) }
            let entryName = Self.entryLayout.components(for: ds).joined(separator: "/")
            guard seen.insert(entryName).inserted else { continue }
            if first == nil { first = ds }
            if seriesRecords[seriesUID] == nil {
                seriesRecords[seriesUID] = Manifest.seriesRecord(of: ds)
                seriesOrder.append(seriesUID)
            }
            incoming.append(
                Incoming(
                    source: source, entryName: entryName, method: Self.method(for: header.transferSyntax),
                    bulkAfter: Self.bulkAfter(for: header)))
        }
        guard let first else { throw .malformed("no files to archive for study \(studyInstanceUID)", path: root) }

        // An older archive of the study: keep its entries, its manifest's records first.
        let existingPath = try archivePath(of: studyInstanceUID)
        let older: (reader: ZipReader, manifest: Manifest)? = try existingPath.map { (path) throws(ZipError) in
            let reader = try ZipReader(path: path, limits: limits)
            guard let entry = reader.entry(named: Self.manifestName) else {
                throw .malformed(
                    "the study's archive was written by another tool (no \(Self.manifestName)): px does not add to it",
                    path: path)
            }
            return (reader, try Manifest(bytes: reader.contents(of: entry), path: path))
        }
        let fresh = incoming.filter { older?.reader.entry(named: $0.entryName) == nil }
        if let older, fresh.isEmpty {
            let listed = try Self.list(older.reader)
            return ArchiveResult(
                path: older.reader.path, added: 0, instances: listed.instanceCount, series: listed.series.count,
                replaced: false)
        }
        var manifest =
            older?.manifest
            ?? Manifest(study: Manifest.studyRecord(of: first), studyInstanceUID: studyInstanceUID, series: [])
        let known = Set(manifest.series.compactMap { $0.string(.seriesInstanceUID)?.trimmingSpaces })
        for uid in seriesOrder where !known.contains(uid) {
            if let record = seriesRecords[uid] { manifest.series.append(record) }
        }

        let path: String
        if let existingPath {
            path = existingPath
        } else {
            let names = Self.archiveLayout.components(for: first)
            let folder = root + "/" + names[0]
            do { try StorageRoot.makeDirectories(root) } catch { throw .io(error.message, path: error.path) }
            try Self.makeFolder(folder)
            path = folder + "/" + names[1]
        }
        try Self.removeAbandoned(besides: path)
        let writer = try ZipWriter(path: path, level: level)
        try writer.addData(manifest.encoded(), as: Self.manifestName, method: .deflate)
        if let older {
            for entry in older.reader.entries where entry.name != Self.manifestName {
                try writer.addCopy(of: entry, from: older.reader)
            }
        }
        // Each opened (and, for a place's file, checked) again: what is archived is read from that descriptor.
        // Deflated on every core (ZipWriter.addFiles), but for what the precompressor deflated or left stored.
        try writer.addFiles(
            fresh.map { file in
                let path = file.source.path
                return ZipWriter.PendingFile(
                    name: file.entryName, method: precompressed.notDeflated.contains(path) ? .stored : file.method,
                    bulkAfter: file.bulkAfter, spooled: precompressed.spooled[path], open: file.source.open)
            }, workers: Self.workers)
        try writer.finish(fsync: fsync)
        let instances = (older?.reader.entries.count).map { $0 - 1 } ?? 0
        return ArchiveResult(
            path: path, added: fresh.count, instances: instances + fresh.count, series: manifest.series.count,
            replaced: older != nil)
    }

    /// How an instance of `syntax` is archived: stored when its transfer syntax is compressed already
    /// (encapsulated pixel data, PS3.5 §A.4; Deflated Explicit VR Little Endian, §A.5), deflated otherwise.
    public static func method(for syntax: TransferSyntax) -> ZipMethod {
        syntax.isEncapsulated || syntax.isDeflated ? .stored : .deflate
    }

    /// Where an instance's deflate stream switches to `Z_RLE` (``ZipDeflater``): past the first
    /// ``ZipDeflater/headerBytes`` of an image (its header read stopped at Pixel Data), whose bulk is pixel
    /// data; never for any other instance, whose bulk (the decimal strings of an RT Structure Set's
    /// contours, a report's text) repeats as strings do.
    static func bulkAfter(for header: Part10File) -> Int? {
        header.stoppedEarly ? ZipDeflater.headerBytes : nil
    }

    /// How many entries an archive deflates at once: one per online core.
    public static var workers: Int { Swift.max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// How many threads deflate a retrieval's instances while it runs with ``ZipDeflateMode/spare``: the
    /// cores besides the two a transfer keeps busy itself (``spareWorkers(cores:)``).
    public static var spareWorkers: Int { spareWorkers(cores: workers) }

    /// The cores less two, the transfer's own: px receiving and writing each instance, and the peer reading
    /// and sending it (a peer on the same machine, as a local Orthanc or the tests' are). None on a two-core
    /// machine: there, workers at the lowest priority still slowed a retrieval by about a quarter, for an
    /// archive 6% smaller (docs/benchmarks.rst, "Zip writing (issue 34)"), so nothing is deflated while
    /// it runs and every instance of an uncompressed transfer syntax is stored.
    public static func spareWorkers(cores: Int) -> Int { Swift.max(0, cores - 2) }

    // MARK: Reading instances

    /// One instance of a study written to a new file `destination` (for C-STORE from a zip place, a
    /// StorableFile can be made of it), checked against its CRC-32: from the first of the study's archives
    /// that holds it.
    public func extractInstance(
        study studyInstanceUID: String, series seriesInstanceUID: String, instance sopInstanceUID: String,
        to destination: String
    ) throws(ZipError) {
        let parts = try archives(of: studyInstanceUID)
        guard
            let study = parts.first(where: { part in
                part.series.contains {
                    $0.seriesInstanceUID == seriesInstanceUID && $0.sopInstanceUIDs.contains(sopInstanceUID)
                }
            }) ?? parts.first
        else { throw .missingEntry(studyInstanceUID, path: root) }
        let reader = try ZipReader(path: study.path, limits: limits)
        let name = study.entryName(series: seriesInstanceUID, instance: sopInstanceUID)
        guard let entry = reader.entry(named: name) else { throw .missingEntry(name, path: study.path) }
        try reader.extract(entry, to: destination)
    }

    /// `<series>/<instance>.dcm` for two UIDs.
    public static func entryName(series: String, instance: String) -> String {
        entryLayout.encodeUID(series) + "/" + entryLayout.encodeUID(instance) + ".dcm"
    }

    /// Extracts every instance of a study into a folder place through `placer`, from every archive that holds
    /// some of it (``archives(of:)``): each entry is written to a file in the placer's staging folder, its
    /// header read, and the file placed atomically at its sanitised name (``InstancePlacer``). Entries are
    /// checked (size, CRC-32) before they are placed. From another tool's archive, the entries of the study's
    /// instances only (the others are not DICOM, a DICOMDIR, or of other studies).
    ///
    /// An instance found in a second archive is placed only once; when its content differs (another size or
    /// CRC-32) the first is kept and, after every archive is extracted, ``ZipError/Code/conflict`` names it:
    /// two different data sets under one SOP Instance UID are reported, never dropped silently.
    ///
    /// Another tool's archive with entries that cannot be read (``Study/badEntries``, or an entry that fails
    /// its CRC-32 or header read as it is extracted) has its good entries placed all the same; after every
    /// archive is extracted, ``ZipError/Code/malformed`` names each bad entry and why. In px's own archives
    /// any bad entry fails the archive at once.
    ///
    /// - Returns: Where each instance went.
    /// - Parameter onPlaced: Called with each placement as it is made, so that a caller learns what was placed
    ///   before an entry further on fails.
    public func extract(
        study studyInstanceUID: String, into placer: InstancePlacer,
        onPlaced: (InstancePlacer.Placement) -> Void = { _ in }
    ) throws(ZipError) -> [InstancePlacer.Placement] {
        let parts = try archives(of: studyInstanceUID)
        guard !parts.isEmpty else { throw .missingEntry(studyInstanceUID, path: root) }
        var placements: [InstancePlacer.Placement] = []
        var seen: [String: (crc32: UInt32, size: UInt64, path: String)] = [:]
        var conflicts: [String] = []
        var bad: [(path: String, entries: [BadEntry])] = []
        for study in parts {
            var badEntries = study.badEntries
            try extract(study, into: placer, seen: &seen, conflicts: &conflicts, bad: &badEntries) { placement in
                placements.append(placement)
                onPlaced(placement)
            }
            if !badEntries.isEmpty { bad.append((study.path, badEntries)) }
        }
        if !bad.isEmpty {
            let described = bad.map { "\($0.path): " + BadEntry.describe($0.entries) }
            let others = conflicts.isEmpty ? "" : "; and \(conflicts.count) SOP Instance UID(s) in conflict"
            throw .malformed(
                "\(placements.count) instance(s) extracted; " + described.joined(separator: "; ") + others,
                path: bad.count == 1 ? bad[0].path : root)
        }
        if !conflicts.isEmpty {
            throw .conflict(
                "\(conflicts.count) SOP Instance UID(s) held with different content in two archives (the first "
                    + "kept): " + conflicts.prefix(10).joined(separator: "; "), path: root)
        }
        return placements
    }

    /// ``extract(study:into:onPlaced:)`` of one archive of the study.
    private func extract(
        _ study: Study, into placer: InstancePlacer, seen: inout [String: (crc32: UInt32, size: UInt64, path: String)],
        conflicts: inout [String], bad: inout [BadEntry], onPlaced: (InstancePlacer.Placement) -> Void
    ) throws(ZipError) {
        let path = study.path
        let reader = try ZipReader(path: path, limits: limits)
        var entries: [ZipEntry] = []
        let foreign = reader.entry(named: Self.manifestName) == nil
        if !foreign {
            _ = try Self.list(reader)  // only entries of the place's shape
            entries = reader.entries.filter { $0.name != Self.manifestName && !$0.isDirectory }
        } else {
            let names = Set(study.series.flatMap { $0.entryNames.values })
            guard names.count == study.instanceCount else {
                throw .malformed("the archive changed since it was listed", path: path)
            }
            entries = reader.entries.filter { names.contains($0.name) }
            guard entries.count == names.count else {
                throw .malformed("the archive changed since it was listed", path: path)
            }
        }
        let staging: String
        do { staging = try placer.storage.stagingFolder() } catch { throw .placement(error) }
        for entry in entries {
            let temporary = staging + "/" + StagingName.next("zip")
            let dataSet: DataSet
            do throws(ZipError) {
                try reader.extract(entry, to: temporary, fsync: false)
                do {
                    dataSet = try Part10File.readHeader(contentsOf: temporary).dataSet
                } catch {
                    unlink(temporary)
                    throw ZipError.malformed(
                        "entry \(entry.name.debugDescription) is not a readable DICOM file (\(error))", path: path)
                }
            } catch let error where foreign && Self.isEntryFault(error) {
                // Another tool's entry that fails its checks: skipped, reported once every entry is extracted.
                bad.append(BadEntry(name: entry.name, reason: error.message))
                continue
            }
            let sop = dataSet.string(.sopInstanceUID)?.trimmingSpaces ?? ""
            if let first = seen[sop] {
                // Held already (an earlier archive of the study): placed once.
                unlink(temporary)
                if first.crc32 != entry.crc32 || first.size != entry.uncompressedSize {
                    conflicts.append("\(sop) in \(first.path) and \(path)")
                }
                continue
            }
            if !sop.isEmpty { seen[sop] = (entry.crc32, entry.uncompressedSize, path) }
            do {
                let placement = try placer.place(temporaryFile: temporary, dataSet: dataSet)
                onPlaced(placement)
            } catch {
                throw .placement(error)
            }
        }
    }

    // MARK: Files

    static func names(in folder: String) throws(ZipError) -> [String] {
        guard let dir = opendir(folder) else {
            if errno == ENOENT { return [] }
            throw .io("cannot list", path: folder, errno: errno)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Removes the temporary archives (`.<name>.partial-<pid>-<n>`) that writers of `path` left when they
    /// were killed: those whose process is gone. A live writer's file is left alone.
    static func removeAbandoned(besides path: String) throws(ZipError) {
        guard let slash = path.lastIndex(of: "/") else { return }
        let folder = String(path[..<slash])
        let prefix = "." + path[path.index(after: slash)...] + ".partial-"
        for name in try names(in: folder) where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "-" }), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
        }
    }

    static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    static func makeFolder(_ path: String) throws(ZipError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw .io("cannot create directory", path: path, errno: errno) }
        guard isDirectory(path) else { throw .io("not a folder (or a symbolic link)", path: path) }
    }
}
