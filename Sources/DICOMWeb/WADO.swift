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
    /// - Parameters:
    ///   - incoming: the directory for temporary files (on the root's file system).
    ///   - onInstance: each placed instance, or each part that could not be placed.
    /// - Throws: ``PXError`` for an HTTP error status, a transport failure, or a malformed or
    ///   truncated multipart answer. A part being written when that happens is removed: no partial
    ///   file is ever at a final name.
    public func retrieve(
        _ path: String, transferSyntax: String?, placer: InstancePlacer, incoming: String,
        onInstance: (Result<ReceivedInstance, PXError>) async -> Void
    ) async throws {
        let address = url(path)
        let response = try await send(
            .GET, address, headers: [("Accept", Self.acceptHeader(transferSyntax: transferSyntax))])
        if response.status.code == 204 { return }
        let contentType = response.headers.first(name: "content-type") ?? ""
        var parser = try MultipartParser(boundary: MultipartParser.boundary(ofContentType: contentType))
        var sink = PartSink(directory: incoming)
        defer { sink.abandon() }
        do {
            for try await chunk in response.body {
                try chunk.withUnsafeReadableBytes { raw in
                    try parser.feed(raw) { event in try sink.handle(event) }
                }
                for part in sink.takeCompleted() { await onInstance(place(part, placer: placer)) }
            }
            try parser.finish()
        } catch {
            throw mapped(error)
        }
    }

    /// Places one received file; the temporary file is gone afterwards in every case.
    func place(_ part: ReceivedPart, placer: InstancePlacer) -> Result<ReceivedInstance, PXError> {
        let temporaryFile = part.path
        let header: Part10File
        do {
            header = try Self.header(of: part)
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
                    duplicate: placement.duplicate))
        } catch {
            return .failure(.storage(error))
        }
    }

    /// The file meta information and the data set up to Pixel Data, parsed from the part's first
    /// bytes (``PartSink/prefixLimit``) so a peer's huge element cannot make px read it into memory.
    /// When an element before Pixel Data runs past them, the data set up to InstanceNumber (what the
    /// default layout uses) is tried; a deflated file, which cannot be parsed from a prefix, is read
    /// whole.
    /// - Throws: ``PXError/notDICOM(path:reason:)``.
    static func header(of part: ReceivedPart) throws(PXError) -> Part10File {
        let isWhole = part.prefix.count >= part.size
        do {
            for stop in [Tag.pixelData, Tag(0x0020, 0x0014)] {
                do {
                    let file = try Part10File(bytes: part.prefix, options: .init(dataSet: .init(stopBefore: stop)))
                    if file.stoppedEarly || isWhole { return file }
                } catch  where !isWhole && (error.code == .truncated || error.code == .lengthPastEnd) {
                    continue
                }
            }
            let meta = try Part10File(
                bytes: part.prefix, options: .init(dataSet: .init(stopBefore: Tag(0x0000, 0x0001))))
            if meta.transferSyntax.isDeflated { return try Part10File.readHeader(contentsOf: part.path) }
        } catch {
            throw .notDICOM(path: part.path, reason: "a WADO-RS part is not a DICOM file (\(error))")
        }
        throw .notDICOM(
            path: part.path,
            reason: "the data set's elements before InstanceNumber exceed \(PartSink.prefixLimit) bytes")
    }
}

/// A part written to a temporary file: its size and first bytes.
struct ReceivedPart {
    var path: String
    var size: Int
    /// Up to ``PartSink/prefixLimit`` bytes.
    var prefix: [UInt8]
}

/// Writes the parts of a multipart answer to temporary files as their bytes arrive, keeping only each
/// part's first ``prefixLimit`` bytes in memory (for its header).
struct PartSink {
    static let prefixLimit = 1 << 20
    let directory: String
    private var fd: Int32 = -1
    private var current: String?
    private var prefix: [UInt8] = []
    private var size = 0
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
            completed.append(ReceivedPart(path: path, size: size, prefix: prefix))
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
