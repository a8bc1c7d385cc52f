import DICOMData
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Archives of other tools: no manifest, DICOM files under any names (dicomsync 1.3.0 zips a study's folder
/// with Python's `shutil.make_archive`: `<file name>` entries, folders as `<name>/`).
extension ZipPlace {
    /// Reading a header stops before this tag: the last keys a listing keeps are Study ID (0020,0010) and
    /// Series Number (0020,0011) (``Manifest/studyKeys``, ``Manifest/seriesKeys``), so the rest of a data set
    /// (the Pixel Data above all) is never inflated.
    static let headerStop = Tag(0x0020, 0x0012)
    /// The first read of an entry; a header that does not end in it is read again from a prefix 16 times
    /// longer, up to ``headerLimit``.
    static let headerFirstRead = 64 << 10
    /// The longest prefix of an entry read for its header (``HeaderLimits``' default size).
    static let headerLimit = HeaderLimits().maximumSize

    /// Lists an archive without a manifest from its entries' headers: each entry that is a DICOM Part 10
    /// file (`DICM` at offset 128, PS3.10 §7.1) is an instance of the study and series its header names;
    /// folders, a DICOMDIR (PS3.10 §8.6) and entries that are not Part 10 files are skipped quietly.
    ///
    /// An entry that cannot be read (its header cut short or unreadable, a DICOM file without its UIDs, a
    /// failed CRC-32 or size check: ``isEntryFault(_:)``) does not fail the archive: another tool's archive
    /// is not px's to vouch for, and its good entries are still worth having. Each such entry is kept, with
    /// why, in every listed study's ``Study/badEntries`` (its study cannot be known), so that extracting the
    /// study delivers the good entries and then fails naming the bad ones.
    ///
    /// - Throws: The reader's ``ZipError`` that concerns the archive as a whole (hostile, overlapping,
    ///   unsupported, unreadable file); ``ZipError/Code/notDICOM`` when no entry is a readable DICOM file
    ///   (naming the bad ones, if any).
    static func listForeign(_ reader: ZipReader) throws(ZipError) -> [Study] {
        var badEntries: [BadEntry] = []
        var studies: [Study] = []
        var studyIndex: [String: Int] = [:]
        var seriesIndex: [String: (study: Int, series: Int)] = [:]
        var sopInstances = Set<String>()
        for entry in reader.entries where !entry.isDirectory && !isDICOMDIR(entry.name) {
            let read: Part10File?
            do {
                read = try header(of: entry, in: reader)
            } catch let error where isEntryFault(error) {
                badEntries.append(BadEntry(name: entry.name, reason: error.message))
                continue
            }
            guard let header = read else { continue }
            if header.meta.string(.mediaStorageSOPClassUID)?.trimmingSpaces
                == WellKnownUID.mediaStorageDirectoryStorage
            {
                continue
            }
            let ds = header.dataSet
            guard let studyUID = ds.string(.studyInstanceUID)?.trimmingSpaces, !studyUID.isEmpty,
                let seriesUID = ds.string(.seriesInstanceUID)?.trimmingSpaces, !seriesUID.isEmpty,
                let sop = ds.string(.sopInstanceUID)?.trimmingSpaces, !sop.isEmpty
            else {
                badEntries.append(BadEntry(name: entry.name, reason: "lacks a Study, Series or SOP Instance UID"))
                continue
            }
            // One instance, one entry: a second copy of an instance is not listed (nor extracted).
            guard sopInstances.insert(sop).inserted else { continue }
            let s: Int
            if let known = studyIndex[studyUID] {
                s = known
            } else {
                s = studies.count
                studyIndex[studyUID] = s
                studies.append(
                    Study(
                        path: reader.path, studyInstanceUID: studyUID, record: Manifest.studyRecord(of: ds), series: [],
                        hasManifest: false))
            }
            let key = studyUID + "\u{0}" + seriesUID
            let index: Int
            if let known = seriesIndex[key] {
                index = known.series
            } else {
                index = studies[s].series.count
                seriesIndex[key] = (s, index)
                studies[s].series.append(
                    Series(seriesInstanceUID: seriesUID, record: Manifest.seriesRecord(of: ds), sopInstanceUIDs: []))
            }
            studies[s].series[index].sopInstanceUIDs.insert(sop)
            studies[s].series[index].entryNames[sop] = entry.name
        }
        guard !studies.isEmpty else {
            throw .notDICOM(
                "no readable DICOM file among the archive's \(reader.entries.count) entries (and no \(manifestName))"
                    + (badEntries.isEmpty ? "" : "; " + BadEntry.describe(badEntries)),
                path: reader.path)
        }
        if !badEntries.isEmpty {
            for index in studies.indices { studies[index].badEntries = badEntries }
        }
        return studies
    }

    /// Whether an error reading one entry of another tool's archive is that entry's fault (the entry is
    /// skipped and reported) rather than the archive's or the file system's (the archive fails): a header
    /// that cannot be read or does not end, missing UIDs, data cut short, a failed size or CRC-32 check.
    /// Hostile constructions (overlapping entries, unsafe names, bombs) are refused when the central directory
    /// is read, before any entry is.
    static func isEntryFault(_ error: ZipError) -> Bool {
        switch error.code {
        case .malformed, .tooLarge, .truncated, .sizeMismatch, .checksum, .notDICOM: return true
        default: return false
        }
    }

    /// `DICOMDIR` (any case) as a file name in any folder.
    static func isDICOMDIR(_ name: String) -> Bool {
        name.split(separator: "/").last.map { $0.uppercased() == "DICOMDIR" } ?? false
    }

    /// The header of an entry up to ``headerStop``, or `nil` when the entry is not a DICOM Part 10 file. Only
    /// a prefix is inflated: 64 KiB, then 1 MiB, then 16 MiB (``headerLimit``), each read again from the start
    /// (at most twice the last prefix in all), however large the entry is.
    ///
    /// - Throws: ``ZipError/Code/malformed`` for a DICOM entry whose header cannot be read,
    ///   ``ZipError/Code/tooLarge`` for one whose header does not end within ``headerLimit``; the reader's
    ///   errors.
    static func header(of entry: ZipEntry, in reader: ZipReader) throws(ZipError) -> Part10File? {
        var size = headerFirstRead
        let options = Part10File.ReadOptions(
            dataSet: .init(stopBefore: headerStop), inflate: InflateLimits(maximumSize: headerLimit * 4))
        while true {
            let bytes = try reader.prefix(of: entry, count: size)
            guard bytes.count >= 132, bytes[128..<132].elementsEqual("DICM".utf8) else { return nil }
            let whole = UInt64(bytes.count) >= entry.uncompressedSize
            do {
                let file = try Part10File(bytes: bytes, options: options)
                // A prefix read that did not reach the stop may have ended between two elements: read on.
                if file.stoppedEarly || whole { return file }
            } catch {
                // A prefix can end inside an element (or a deflated data set's stream): read a longer one.
                if whole || size >= headerLimit {
                    throw .malformed(
                        "entry \(entry.name.debugDescription) is not a readable DICOM file (\(error))",
                        path: reader.path)
                }
            }
            guard size < headerLimit else {
                throw .tooLarge(
                    "entry \(entry.name.debugDescription): its header does not end within \(headerLimit) bytes",
                    path: reader.path)
            }
            size = min(size * 16, headerLimit)
        }
    }
}

/// The listings of archives already read in this process, each kept while its file is the same (device,
/// inode, size, modification and change times; a failure too, but for a file-system one): px-sync asks a zip place about a study several times (its
/// inventory, the planner, the transfer), and another tool's archive is listed from its entries' headers.
final class ZipListingCache: Sendable {
    static let shared = ZipListingCache()

    struct Signature: Hashable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int64
        var changed: Int64
    }

    private struct Listed {
        var signature: Signature
        var result: Result<[ZipPlace.Study], ZipError>
    }

    /// An archive read within some limits (a listing made with looser limits is not one made with stricter).
    private struct Key: Hashable {
        var path: String
        var limits: ZipLimits
    }

    private let listed = Mutex<[Key: Listed]>([:])

    /// The listing of the archive at `path` read within `limits`: kept, or made by `list` (its error kept
    /// alike).
    func studies(at path: String, limits: ZipLimits, list: () throws(ZipError) -> [ZipPlace.Study])
        throws(ZipError) -> [ZipPlace.Study]
    {
        let key = Key(path: path, limits: limits)
        var info = stat()
        guard stat(path, &info) == 0 else { throw .io("cannot read", path: path, errno: errno) }
        let signature = Signature(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
        if let kept = listed.withLock({ $0[key] }), kept.signature == signature { return try kept.result.get() }
        let result = Result { () throws(ZipError) in try list() }
        // A failed file-system call may not fail again: it is not kept.
        if case .failure(let error) = result, error.code == .io { return try result.get() }
        listed.withLock { $0[key] = Listed(signature: signature, result: result) }
        return try result.get()
    }
}
