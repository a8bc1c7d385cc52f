import AsyncHTTPClient
import DICOMData
import NIOCore
import NIOHTTP1
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// WADO-RS, the retrieve transaction (PS3.18 §10.4): instances as `multipart/related;
/// type="application/dicom"`, parsed as they arrive and written part by part to temporary files, each
/// placed by the ``InstancePlacer`` once complete.
extension DICOMWebClient {
    /// The Accept header of a retrieval (PS3.18 §8.7.3.5.2, §8.7.5): the archive's stored transfer
    /// syntax (`*`) unless `transferSyntax` names one.
    public static func acceptHeader(transferSyntax: String?) -> String {
        "multipart/related; type=\"application/dicom\"; transfer-syntax=\(transferSyntax ?? "*")"
    }

    /// The resource paths of `request`: the study, the series, or one per instance (PS3.18 §10.4.1.1).
    public static func retrievePaths(_ request: GetRequest) -> [String] {
        let study = "/studies/" + pathSegment(request.studyInstanceUID)
        guard let series = request.seriesInstanceUID else { return [study] }
        let seriesPath = study + "/series/" + pathSegment(series)
        guard !request.sopInstanceUIDs.isEmpty else { return [seriesPath] }
        return request.sopInstanceUIDs.map { seriesPath + "/instances/" + pathSegment($0) }
    }

    /// Retrieves `path` and places every part.
    ///
    /// Each part is checked before it is placed (``verified(_:announced:url:)``): a part that is not a
    /// complete data set is a failed instance, never a file at a final name.
    ///
    /// - Parameters:
    ///   - incoming: the directory for temporary files (on the root's file system).
    ///   - keepingHeaders: whether each placed instance carries its header (``ReceivedInstance/header``).
    ///   - onInstance: each placed instance, or each part that could not be placed.
    /// - Throws: ``PXError`` for an HTTP error status, a transport failure, a limit of ``timeouts``
    ///   exceeded, or a malformed or truncated multipart answer. A part being written when that happens is
    ///   removed: no partial file is ever at a final name.
    public func retrieve(
        _ path: String, transferSyntax: String?, placer: InstancePlacer, incoming: String, keepingHeaders: Bool = true,
        onInstance: (Result<ReceivedInstance, PXError>) async -> Void
    ) async throws {
        let address = url(path)
        let answer = try await request(
            .GET, address, headers: [("Accept", Self.acceptHeader(transferSyntax: transferSyntax))])
        if answer.status.code == 204 { return }
        let contentType = answer.headers.first(name: "content-type") ?? ""
        var parser = try MultipartParser(boundary: MultipartParser.boundary(ofContentType: contentType))
        var sink = PartSink(directory: incoming)
        defer { sink.abandon() }
        let announced = Self.announcedInstance(path)
        do {
            try await answer.limits.stream(answer.response) { chunk in
                try chunk.withUnsafeReadableBytes { raw in
                    try parser.feed(raw) { event in try sink.handle(event) }
                }
                for part in sink.takeCompleted() {
                    await onInstance(
                        place(part, announced: announced, url: address, placer: placer, keepingHeader: keepingHeaders))
                }
                return true
            }
            try parser.finish()
        } catch {
            throw mapped(error)
        }
    }

    /// The SOP Instance UID a retrieve path names (`.../instances/{uid}`, PS3.18 §10.4.1.1), if it names one.
    static func announcedInstance(_ path: String) -> String? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count >= 2, segments[segments.count - 2] == "instances", let uid = segments.last, !uid.isEmpty
        else { return nil }
        return String(uid)
    }

    /// The SOP Instance UID a part's Content-Location names (PS3.18 §8.7.3.1: the instance's URL), if any.
    static func announcedInstance(contentLocation: String?) -> String? {
        guard let location = contentLocation else { return nil }
        let path = location.split(separator: "?", maxSplits: 1).first.map(String.init) ?? location
        return announcedInstance(path)
    }

    /// Checks that a received part is a complete instance, as announced: its Content-Length (when the
    /// part gave one) is its size, its element structure is whole
    /// (``Part10File/checkStructure(contentsOf:maximumInflatedSize:)``: every length fits, sequences
    /// and encapsulated Pixel Data closed, PS3.5 §7.1, §7.5, §A.4), and its SOP Instance UID is the one
    /// the request or the part's Content-Location named.
    ///
    /// - Throws: ``PXError/malformedFile(path:reason:)`` (the path is the request's URL) for a part cut
    ///   short or broken, ``PXError/notDICOM(path:reason:)`` for a part that is no DICOM file,
    ///   ``PXError/invalidResponse(_:)`` for another instance than the one announced.
    static func verified(_ part: ReceivedPart, announced: String?, url: String) throws(PXError) -> Part10Structure {
        if let length = part.contentLength, length != part.size {
            throw .malformedFile(
                path: url, reason: "a WADO-RS part of \(part.size) bytes where its Content-Length says \(length)")
        }
        let structure: Part10Structure
        do {
            structure = try Part10File.checkStructure(
                contentsOf: part.path, maximumInflatedSize: PushRequest.defaultMaximumInflatedSize)
        } catch {
            if error.code == .notDICOM {
                throw .notDICOM(path: url, reason: "a WADO-RS part is not a DICOM file (\(error))")
            }
            throw .malformedFile(
                path: url, reason: "a WADO-RS part of \(part.size) bytes is not a complete data set (\(error))")
        }
        let uid = structure.sopInstanceUID ?? structure.meta.string(.mediaStorageSOPInstanceUID) ?? ""
        if let expected = announcedInstance(contentLocation: part.contentLocation) ?? announced, uid != expected {
            throw .invalidResponse(
                "a WADO-RS part holds SOP Instance UID '\(uid)' where \(expected) was announced (\(url))")
        }
        return structure
    }

    /// Places one received file once it is verified; the temporary file is gone afterwards in every case.
    /// The instance carries its header only with `keepingHeader`.
    func place(
        _ part: ReceivedPart, announced: String?, url: String, placer: InstancePlacer, keepingHeader: Bool = true
    ) -> Result<ReceivedInstance, PXError> {
        let temporaryFile = part.path
        let header: Part10File
        let headerIsWhole: Bool
        do {
            _ = try Self.verified(part, announced: announced, url: url)
            (header, headerIsWhole) = try part.header.get()
        } catch {
            unlink(temporaryFile)
            return .failure(error)
        }
        let fileSize = part.size
        let metaLength = header.dataSetOffset
        func uid(_ meta: Tag, _ dataSet: Tag) -> String {
            let value = header.meta.string(meta) ?? ""
            return value.isEmpty ? header.dataSet.string(dataSet) ?? "" : value
        }
        let sopClass = uid(.mediaStorageSOPClassUID, .sopClassUID)
        let sopInstance = uid(.mediaStorageSOPInstanceUID, .sopInstanceUID)
        do {
            let placement = try placer.place(temporaryFile: temporaryFile, dataSet: header.dataSet)
            return .success(
                ReceivedInstance(
                    path: placement.path, sopClassUID: sopClass, sopInstanceUID: sopInstance,
                    studyInstanceUID: header.dataSet.string(.studyInstanceUID) ?? "",
                    seriesInstanceUID: header.dataSet.string(.seriesInstanceUID) ?? "", callingAETitle: nil,
                    bytes: max(0, fileSize - metaLength), transferSyntaxUID: header.transferSyntax.uid,
                    duplicate: placement.duplicate,
                    // What Part10File.readHeader would read from the placed file, so an index records it
                    // without reading it again; not the kept file's (another file) or a header cut short.
                    header: keepingHeader && headerIsWhole && placement.duplicate != .keep ? header : nil))
        } catch {
            return .failure(.storage(error))
        }
    }

    /// The file meta information and the data set up to Pixel Data of a part written to `path`, parsed
    /// from its first bytes (`prefix`, up to ``PartSink/prefixLimit``) so a peer's huge element cannot make
    /// px read it into memory. When an element before Pixel Data runs past them, the data set up to
    /// InstanceNumber (what the default layout uses) is tried; a deflated file, which cannot be parsed from
    /// a prefix, is read whole.
    /// - Returns: the header ``DICOMData/Part10File/compacted()`` (it does not keep `prefix` alive), and
    ///   whether it is the whole header (up to Pixel Data, as `Part10File.readHeader` reads it) rather than
    ///   one cut at InstanceNumber.
    /// - Throws: ``PXError/notDICOM(path:reason:)``.
    static func header(prefix: [UInt8], size: Int, path: String) throws(PXError) -> ReceivedPart.Header {
        let isWhole = prefix.count >= size
        do {
            for stop in [Tag.pixelData, Tag(0x0020, 0x0014)] {
                do {
                    let file = try Part10File(bytes: prefix, options: .init(dataSet: .init(stopBefore: stop)))
                    if file.stoppedEarly || isWhole { return (file.compacted(), stop == .pixelData) }
                } catch  where !isWhole && (error.code == .truncated || error.code == .lengthPastEnd) {
                    continue
                }
            }
            let meta = try Part10File(bytes: prefix, options: .init(dataSet: .init(stopBefore: Tag(0x0000, 0x0001))))
            if meta.transferSyntax.isDeflated { return (try Part10File.readHeader(contentsOf: path).compacted(), true) }
        } catch {
            throw .notDICOM(path: path, reason: "a WADO-RS part is not a DICOM file (\(error))")
        }
        throw .notDICOM(
            path: path, reason: "the data set's elements before InstanceNumber exceed \(PartSink.prefixLimit) bytes")
    }
}

/// A part written to a temporary file: its size, its DICOM header and what its headers announced.
struct ReceivedPart {
    /// A parsed header, and whether it is whole (see ``DICOMWebClient/header(prefix:size:path:)``).
    typealias Header = (file: Part10File, isWhole: Bool)

    var path: String
    var size: Int
    /// The header parsed from the part's first bytes when it ended (the bytes themselves are not kept: the
    /// sink reuses its buffer for the next part), or why it could not be.
    var header: Result<Header, PXError>
    /// The part's Content-Length header, when it had a valid one.
    var contentLength: Int? = nil
    /// The part's Content-Location header (PS3.18 §8.7.3.1).
    var contentLocation: String? = nil
}

/// Writes the parts of a multipart answer to temporary files as their bytes arrive, keeping only the
/// current part's first ``prefixLimit`` bytes in memory, in one buffer reused from part to part: each
/// part's header is parsed from them when it ends.
struct PartSink {
    static let prefixLimit = 1 << 20
    let directory: String
    private var fd: Int32 = -1
    private var current: String?
    private var prefix: [UInt8] = []
    private var size = 0
    private var contentLength: Int?
    private var contentLocation: String?
    private var completed: [ReceivedPart] = []

    init(directory: String) { self.directory = directory }

    mutating func handle(_ event: MultipartParser.Event) throws(PXError) {
        switch event {
        case .partBegin(let headers):
            let type = headers.first { $0.name == "content-type" }?.value.lowercased() ?? "application/dicom"
            guard type.hasPrefix("application/dicom") else {
                throw .invalidResponse("WADO-RS part of type '\(type)', expected application/dicom")
            }
            do {
                let made = try POSIX.makeTemporaryFile(prefix: directory + "/px-web-")
                fd = made.descriptor
                current = made.path
            } catch {
                throw .io("cannot create a temporary file (\(String(cString: strerror(error.code))))", path: directory)
            }
            prefix.removeAll(keepingCapacity: true)
            size = 0
            contentLocation = headers.first { $0.name == "content-location" }?.value
            contentLength = nil
            if let text = headers.first(where: { $0.name == "content-length" })?.value {
                guard let length = Int(text), length >= 0 else {
                    throw .invalidResponse("WADO-RS part with Content-Length '\(text)'")
                }
                contentLength = length
            }
        case .content(let bytes):
            guard fd >= 0 else { return }
            if prefix.count < Self.prefixLimit { prefix += bytes.prefix(Self.prefixLimit - prefix.count) }
            size += bytes.count
            var offset = 0
            while offset < bytes.count {
                let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw .io("cannot write (\(String(cString: strerror(errno))))", path: current)
                }
                offset += n
            }
        case .partEnd:
            guard fd >= 0, let path = current else { return }
            let closed = close(fd)
            fd = -1
            current = nil
            guard closed == 0 else {
                unlink(path)
                throw .io("cannot write (\(String(cString: strerror(errno))))", path: path)
            }
            let header: Result<ReceivedPart.Header, PXError>
            do {
                header = .success(try DICOMWebClient.header(prefix: prefix, size: size, path: path))
            } catch {
                header = .failure(error)
            }
            completed.append(
                ReceivedPart(
                    path: path, size: size, header: header, contentLength: contentLength,
                    contentLocation: contentLocation))
        }
    }

    /// The complete files not handed out yet.
    mutating func takeCompleted() -> [ReceivedPart] {
        defer { completed.removeAll(keepingCapacity: true) }
        return completed
    }

    /// Removes what was not handed out: the part being written and complete ones not yet placed.
    mutating func abandon() {
        if fd >= 0 { close(fd) }
        fd = -1
        if let current { unlink(current) }
        current = nil
        for part in completed { unlink(part.path) }
        completed.removeAll()
    }
}
