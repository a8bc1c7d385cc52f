import DICOMData
import PXStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What px-push sends: the files named, directories walked recursively (entries in byte order of
/// their names), each planned from its Part 10 header alone (PS3.10 §7.1), before any association.
///
/// A path that cannot be read or is not a DICOM Part 10 file stays in ``files`` with its
/// ``PushFile/error``; it is never sent, and the others still are.
public struct PushRequest: Hashable, Sendable {
    /// Every file, in order: the paths as given, directory contents in sorted order (packed: ``PushFiles``).
    public var files: PushFiles
    /// How many C-STOREs the native backend keeps outstanding when the peer agrees to an asynchronous
    /// operations window (PS3.7 §D.3.3.3); `1` proposes none. storescu has no such option.
    public var window: UInt16 = PushRequest.defaultWindow

    /// The largest data set a deflated file (PS3.5 §A.5) may inflate to, when checked and when sent
    /// uncompressed: a file above it is refused, so a small file cannot expand without bound in memory.
    public var maximumInflatedSize: Int = PushRequest.defaultMaximumInflatedSize
    /// Storage commitment of what was stored with success (PS3.4 Annex J), after the files; `nil`: none.
    public var commitment: CommitmentSettings? = nil
    /// The default ``maximumInflatedSize``: 256 MiB.
    public static let defaultMaximumInflatedSize = 256 << 20

    /// The default ``window``: enough to keep sending while the peer stores the previous files.
    public static let defaultWindow: UInt16 = 16

    public init(files: some Sequence<PushFile>) {
        self.files = (files as? PushFiles) ?? PushFiles(files)
    }

    /// Walks `paths` and reads each file's header.
    /// - Throws: ``PXError/usage(_:)`` when no path is given.
    public init(paths: [String], maximumInflatedSize: Int = PushRequest.defaultMaximumInflatedSize) throws(PXError) {
        guard !paths.isEmpty else { throw .usage("give the files or directories to push") }
        var files = PushFiles()
        for path in paths { PushRequest.collect(path, into: &files, maximumInflatedSize: maximumInflatedSize) }
        self.files = files
        self.maximumInflatedSize = maximumInflatedSize
    }

    /// The files that can be sent.
    public var sendable: [PushFile] { files.filter { $0.error == nil } }

    /// The distinct (SOP class, transfer syntax) pairs of the sendable files, in first-seen order.
    public var contextPairs: [(sopClassUID: String, transferSyntaxUID: String)] {
        var seen = Set<[String]>()
        var out: [(String, String)] = []
        for f in files where f.error == nil {
            if seen.insert([f.sopClassUID, f.transferSyntaxUID]).inserted {
                out.append((f.sopClassUID, f.transferSyntaxUID))
            }
        }
        return out
    }

    static func collect(_ path: String, into files: inout PushFiles, maximumInflatedSize: Int) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            files.append(
                PushFile(
                    path: path, error: .io("cannot access the file (\(String(cString: strerror(errno))))", path: path)))
            return
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard let dir = opendir(path) else {
                files.append(
                    PushFile(
                        path: path,
                        error: .io("cannot read the directory (\(String(cString: strerror(errno))))", path: path)))
                return
            }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                // A place's own folders (its index, its staging area) hold no files to send.
                if name == "." || name == ".." || FolderWalk.isPrivate(name) { continue }
                names.append(name)
            }
            closedir(dir)
            let base = path.hasSuffix("/") ? String(path.dropLast()) : path
            for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                collect(base + "/" + name, into: &files, maximumInflatedSize: maximumInflatedSize)
            }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return }  // sockets, FIFOs: not files to send
        files.append(PushFile(readingHeaderOf: path, maximumInflatedSize: maximumInflatedSize))
    }
}

/// One file px-push was given.
public struct PushFile: Hashable, Sendable {
    public var path: String
    /// SOP Class UID (0008,0016) of the data set, else Media Storage SOP Class UID (0002,0002); empty with an error.
    public var sopClassUID: String
    /// SOP Instance UID (0008,0018) of the data set, else Media Storage SOP Instance UID (0002,0003).
    public var sopInstanceUID: String
    /// The file's transfer syntax (0002,0010).
    public var transferSyntaxUID: String
    /// Why the file cannot be sent.
    public var error: PXError?
    /// Something the planning noticed that does not stop the file (a meta that disagrees with the data set).
    public var warning: String?
    /// Where the file sits in a place and what the place's index recorded of it (px-sync from a folder place): it
    /// is then sent only if it is still that file, opened without following links
    /// (``DICOMData/IndexedFile/open()``).
    public var indexed: IndexedFile?

    public init(
        path: String, sopClassUID: String = "", sopInstanceUID: String = "", transferSyntaxUID: String = "",
        error: PXError? = nil
    ) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
        self.error = error
    }

    /// Plans a file: reads its header (meta information and group 0008 up to SOP Instance UID), then
    /// walks its element structure (``Part10File/checkStructure(contentsOf:maximumInflatedSize:)``: every
    /// length within the file, even, encapsulated fragments well formed; values are skipped), so that a
    /// broken file fails here, before any byte of it goes out, instead of breaking the association. The
    /// SOP Class and Instance UIDs announced are the data set's own (0008,0016), (0008,0018), those the
    /// peer will store; a meta (0002,0002), (0002,0003) that disagrees is reported in ``warning``.
    public init(readingHeaderOf path: String, maximumInflatedSize: Int = PushRequest.defaultMaximumInflatedSize) {
        self.init(path: path)
        let file: Part10File
        do {
            file = try Part10File.readHeader(contentsOf: path, stopBefore: Tag(0x0008, 0x0019))
        } catch {
            if error.code == .io {
                self.error = .io("cannot read the file: \(error)", path: path)
            } else {
                var reason = "\(error)"
                if reason.hasPrefix("not a DICOM file: ") { reason.removeFirst("not a DICOM file: ".count) }
                self.error = .notDICOM(path: path, reason: reason)
            }
            return
        }
        guard !file.hadNoPreamble, !file.meta.isEmpty else {
            self.error = .notDICOM(path: path, reason: "no DICM prefix and file meta information (PS3.10 §7.1)")
            return
        }
        transferSyntaxUID = file.transferSyntax.uid
        let structure: Part10Structure
        do {
            structure = try Part10File.checkStructure(contentsOf: path, maximumInflatedSize: maximumInflatedSize)
        } catch {
            self.error =
                error.code == .io
                ? .io("cannot read the file: \(error)", path: path) : .malformedFile(path: path, reason: "\(error)")
            return
        }
        let metaClass = (file.meta.string(.mediaStorageSOPClassUID) ?? "").trimmingSpaces
        let metaInstance = (file.meta.string(.mediaStorageSOPInstanceUID) ?? "").trimmingSpaces
        let ownClass = structure.sopClassUID ?? ""
        let ownInstance = structure.sopInstanceUID ?? ""
        sopClassUID = ownClass.isEmpty ? metaClass : ownClass
        sopInstanceUID = ownInstance.isEmpty ? metaInstance : ownInstance
        var disagreements: [String] = []
        if !ownClass.isEmpty && !metaClass.isEmpty && ownClass != metaClass {
            disagreements.append(
                "Media Storage SOP Class UID \(metaClass) in the meta, SOP Class UID \(ownClass) in the data set")
        }
        if !ownInstance.isEmpty && !metaInstance.isEmpty && ownInstance != metaInstance {
            disagreements.append(
                "Media Storage SOP Instance UID \(metaInstance) in the meta, SOP Instance UID \(ownInstance) in the data set"
            )
        }
        if !disagreements.isEmpty {
            warning =
                "the file meta information disagrees with the data set (sent as the data set says): "
                + disagreements.joined(separator: "; ")
        }
        if ownClass.isEmpty || ownInstance.isEmpty {
            // Not a composite instance (a DICOMDIR, a bare meta): storescu refuses it too, and a peer
            // would store a data set without the identity it was announced under.
            self.error = .notDICOM(
                path: path, reason: "no SOP Class UID (0008,0016) or SOP Instance UID (0008,0018) in the data set")
        }
    }
}

/// The outcome of one file: the C-STORE-RSP status, or why it was not stored.
public struct PushFileResult: Hashable, Sendable {
    public var file: PushFile
    /// The C-STORE-RSP status (PS3.4 §B.2.3), `nil` when nothing was sent.
    public var status: DIMSEStatus?
    /// Why the file was not stored (planning error, no presentation context, failure status).
    public var error: PXError?
    /// On how many associations the file was sent: 0 when it never went out, 2 when the first
    /// association ended before the peer answered and the file was sent again on a new one.
    public var attempts: Int = 0

    public init(file: PushFile, status: DIMSEStatus?, error: PXError?, attempts: Int = 0) {
        self.file = file
        self.status = status
        self.error = error
        self.attempts = attempts
    }

    /// A result for a status: failures carry a ``PXError/dimseFailure(_:operation:)``.
    public init(file: PushFile, status: DIMSEStatus, attempts: Int = 1) {
        self.init(
            file: file, status: status, error: status.isFailure ? .dimseFailure(status, operation: "C-STORE") : nil,
            attempts: attempts)
    }

    /// A file no accepted presentation context can carry (PS3.8 §9.3.3.2).
    public static func noContext(_ file: PushFile) -> PushFileResult {
        PushFileResult(
            file: file, status: nil,
            error: .noAcceptablePresentationContext(
                "no accepted presentation context for \(file.sopClassUID) in \(file.transferSyntaxUID)"))
    }

    /// Success or warning.
    public var succeeded: Bool { error == nil && status.map { !$0.isFailure } == true }
}

/// A finished px-push: one result per file, in request order.
public struct PushResult: Hashable, Sendable {
    /// One result per file of the request, packed (``PushFileResults``).
    public var files: PushFileResults
    /// What ended the association after some files were stored (abort, timeout, lost connection);
    /// the files it had not answered are reported as not stored. `nil` when the association ran its course.
    public var failure: PXError?
    /// How many associations the push opened (more than one when it went on after an abort).
    public var associations: Int
    /// The storage commitment report, when ``PushRequest/commitment`` asked for one and it came.
    public var commitment: CommitmentResult? = nil
    /// Why the storage commitment asked for did not come to a report (timeout, refusal...).
    public var commitmentFailure: PXError? = nil

    public init(files: [PushFileResult], failure: PXError? = nil, associations: Int = 1) {
        self.init(results: PushFileResults(files), failure: failure, associations: associations)
    }

    public init(results: PushFileResults, failure: PXError? = nil, associations: Int = 1) {
        self.files = results
        self.failure = failure
        self.associations = associations
    }

    /// The result for a file the association ended before.
    public static func notSent(_ file: PushFile, attempts: Int = 0) -> PushFileResult {
        PushFileResult(
            file: file, status: nil, error: .aborted("not stored: the association ended before the peer answered"),
            attempts: attempts)
    }

    /// How often a file is sent before it is failed: a file during whose C-STORE two associations ended
    /// (the peer aborted, or the connection dropped) is not sent a third time.
    public static let maximumAttempts = 2
    /// How many associations in a row may end before any file on them is answered before the push
    /// stops opening new ones (a peer that aborts everything).
    public static let maximumFruitlessAssociations = 3

    // Counted in place: a filtered copy of 30,000 file results was the largest allocation of px-push's report.
    public var completed: Int { files.indices.count { files.succeeded($0) && files.status($0)?.isSuccess == true } }
    public var warning: Int { files.indices.count { files.succeeded($0) && files.status($0)?.isSuccess == false } }
    public var failed: Int { files.indices.count { !files.succeeded($0) } }
}
