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
    /// Every file, in order: the paths as given, directory contents in sorted order.
    public var files: [PushFile]
    /// How many C-STOREs the native backend keeps outstanding when the peer agrees to an asynchronous
    /// operations window (PS3.7 §D.3.3.3); `1` proposes none. storescu has no such option.
    public var window: UInt16 = PushRequest.defaultWindow

    /// The default ``window``: enough to keep sending while the peer stores the previous files.
    public static let defaultWindow: UInt16 = 16

    public init(files: [PushFile]) {
        self.files = files
    }

    /// Walks `paths` and reads each file's header.
    /// - Throws: ``PXError/usage(_:)`` when no path is given.
    public init(paths: [String]) throws(PXError) {
        guard !paths.isEmpty else { throw .usage("give the files or directories to push") }
        var files: [PushFile] = []
        for path in paths { PushRequest.collect(path, into: &files) }
        self.files = files
    }

    /// The files that can be sent.
    public var sendable: [PushFile] { files.filter { $0.error == nil } }

    /// The distinct (SOP class, transfer syntax) pairs of the sendable files, in first-seen order.
    public var contextPairs: [(sopClassUID: String, transferSyntaxUID: String)] {
        var seen = Set<[String]>()
        var out: [(String, String)] = []
        for f in files where f.error == nil {
            if seen.insert([f.sopClassUID, f.transferSyntaxUID]).inserted { out.append((f.sopClassUID, f.transferSyntaxUID)) }
        }
        return out
    }

    static func collect(_ path: String, into files: inout [PushFile]) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            files.append(PushFile(path: path, error: .io("cannot access the file (\(String(cString: strerror(errno))))", path: path)))
            return
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            guard let dir = opendir(path) else {
                files.append(PushFile(path: path, error: .io("cannot read the directory (\(String(cString: strerror(errno))))", path: path)))
                return
            }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name == "." || name == ".." { continue }
                names.append(name)
            }
            closedir(dir)
            let base = path.hasSuffix("/") ? String(path.dropLast()) : path
            for name in names.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }) {
                collect(base + "/" + name, into: &files)
            }
            return
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else { return }  // sockets, FIFOs: not files to send
        files.append(PushFile(readingHeaderOf: path))
    }
}

/// One file px-push was given.
public struct PushFile: Hashable, Sendable {
    public var path: String
    /// Media Storage SOP Class UID (0002,0002), else SOP Class UID (0008,0016); empty with an error.
    public var sopClassUID: String
    /// Media Storage SOP Instance UID (0002,0003), else SOP Instance UID (0008,0018).
    public var sopInstanceUID: String
    /// The file's transfer syntax (0002,0010).
    public var transferSyntaxUID: String
    /// Why the file cannot be sent.
    public var error: PXError?

    public init(path: String, sopClassUID: String = "", sopInstanceUID: String = "", transferSyntaxUID: String = "", error: PXError? = nil) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
        self.error = error
    }

    /// Reads the header (meta information and group 0008 up to SOP Instance UID) only.
    public init(readingHeaderOf path: String) {
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
        func uid(_ meta: Tag, _ dataSet: Tag) -> String {
            let value = (file.meta.string(meta) ?? "").trimmingSpaces
            return value.isEmpty ? (file.dataSet.string(dataSet) ?? "").trimmingSpaces : value
        }
        sopClassUID = uid(.mediaStorageSOPClassUID, .sopClassUID)
        sopInstanceUID = uid(.mediaStorageSOPInstanceUID, .sopInstanceUID)
        transferSyntaxUID = file.transferSyntax.uid
        if sopClassUID.isEmpty || sopInstanceUID.isEmpty {
            self.error = .notDICOM(path: path, reason: "no SOP Class UID or SOP Instance UID")
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

    public init(file: PushFile, status: DIMSEStatus?, error: PXError?) {
        self.file = file
        self.status = status
        self.error = error
    }

    /// A result for a status: failures carry a ``PXError/dimseFailure(_:operation:)``.
    public init(file: PushFile, status: DIMSEStatus) {
        self.init(file: file, status: status, error: status.isFailure ? .dimseFailure(status, operation: "C-STORE") : nil)
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
    public var files: [PushFileResult]
    /// What ended the association after some files were stored (abort, timeout, lost connection);
    /// the files it had not answered are reported as not stored. `nil` when the association ran its course.
    public var failure: PXError?

    public init(files: [PushFileResult], failure: PXError? = nil) {
        self.files = files
        self.failure = failure
    }

    /// The result for a file the association ended before.
    public static func notSent(_ file: PushFile) -> PushFileResult {
        PushFileResult(file: file, status: nil, error: .aborted("not stored: the association ended before the peer answered"))
    }

    public var completed: Int { files.filter { $0.succeeded && $0.status?.category == .success }.count }
    public var warning: Int { files.filter { $0.succeeded && $0.status?.category == .warning }.count }
    public var failed: Int { files.filter { !$0.succeeded }.count }
}
