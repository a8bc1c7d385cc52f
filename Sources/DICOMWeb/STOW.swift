import AsyncHTTPClient
import DICOMData
import NIOCore
import NIOHTTP1
import PXCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// STOW-RS, the store transaction (PS3.18 §10.5): files streamed from disk in a
/// `multipart/related; type="application/dicom"` body, the answer's Referenced SOP Sequence and
/// Failed SOP Sequence mapped to one result per file.
extension DICOMWebClient {
    /// Files per request.
    public static let storeBatchSize = 64

    /// Stores `files` (all sendable) in one request; `onFile` sees each file's result.
    ///
    /// - Throws: ``PXError`` when the request fails as a whole (an HTTP error other than 409
    ///   Conflict, which means "none stored" and is reported per file, or a transport failure).
    public func store(_ files: [PushFile], onFile: (PushFileResult) async -> Void) async throws -> [PushFileResult] {
        let boundary = "px-" + Self.randomHex(16)
        var sizes: [Int] = []
        for file in files {
            var info = stat()
            guard stat(file.path, &info) == 0 else { throw PXError.io("cannot access the file", path: file.path) }
            sizes.append(Int(info.st_size))
        }
        let partHeader = Array("--\(boundary)\r\nContent-Type: application/dicom\r\n\r\n".utf8)
        let closing = Array("--\(boundary)--\r\n".utf8)
        let length = sizes.reduce(0) { $0 + partHeader.count + $1 + 2 } + closing.count
        let paths = files.map(\.path)
        let response = try await send(
            .POST, url("/studies"),
            headers: [
                ("Content-Type", "multipart/related; type=\"application/dicom\"; boundary=\(boundary)"),
                ("Accept", "application/dicom+json"),
            ],
            accepting: [200, 202, 409],
            body: {
                .stream(
                    MultipartFileBody(paths: paths, sizes: sizes, partHeader: partHeader, closing: closing),
                    length: .known(Int64(length)))
            })
        let bytes = try await collect(response)
        let answer: DataSet
        do {
            answer = bytes.isEmpty ? DataSet() : try DataSet(dicomJSONText: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw PXError.invalidResponse("STOW-RS answer is not DICOM JSON (PS3.18 §10.5.3): \(error)")
        }
        let results = Self.results(of: answer, for: files, httpStatus: Int(response.status.code))
        for result in results { await onFile(result) }
        return results
    }

    /// Per-file results from a Store Instances Response Module (PS3.18 §10.5.3, Table 10.5.3-1):
    /// a file in Referenced SOP Sequence (0008,1199) is stored (a Warning Reason (0008,1196) makes it
    /// a warning), one in Failed SOP Sequence (0008,1198) failed with its Failure Reason (0008,1197)
    /// as the status; a file the answer does not mention is stored when the answer says 200 OK for all.
    static func results(of answer: DataSet, for files: [PushFile], httpStatus: Int) -> [PushFileResult] {
        var statusByUID: [String: DIMSEStatus] = [:]
        for item in answer.items(Tag(0x0008, 0x1199)) ?? [] {
            guard let uid = item.dataSet.string(Tag(0x0008, 0x1155)) else { continue }
            let warning = item.dataSet.integer(Tag(0x0008, 0x1196))
            statusByUID[uid] =
                warning.map { DIMSEStatus(code: UInt16(truncatingIfNeeded: $0), service: .store) } ?? .success
        }
        for item in answer.items(Tag(0x0008, 0x1198)) ?? [] {
            guard let uid = item.dataSet.string(Tag(0x0008, 0x1155)) else { continue }
            let reason = item.dataSet.integer(Tag(0x0008, 0x1197)) ?? 0x0110
            statusByUID[uid] = DIMSEStatus(code: UInt16(truncatingIfNeeded: reason), service: .store)
        }
        return files.map { file in
            if let status = statusByUID[file.sopInstanceUID] {
                var result = PushFileResult(file: file, status: status)
                if status.isFailure { result.error = .dimseFailure(status, operation: "STOW-RS") }
                return result
            }
            if httpStatus == 200 { return PushFileResult(file: file, status: .success) }
            return PushFileResult(
                file: file, status: nil,
                error: .invalidResponse(
                    "the STOW-RS answer (HTTP \(httpStatus)) does not mention \(file.sopInstanceUID)"))
        }
    }

    static func randomHex(_ count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: (0..<count).map { _ in digits[Int(generator.next() & 0xF)] }, as: UTF8.self)
    }
}

/// The multipart body of a STOW-RS request, read from the files as the connection takes it: at most
/// one chunk of one file is in memory.
struct MultipartFileBody: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let paths: [String]
    let sizes: [Int]
    let partHeader: [UInt8]
    let closing: [UInt8]
    static let chunkSize = 256 * 1024

    func makeAsyncIterator() -> Iterator { Iterator(body: self) }

    struct Iterator: AsyncIteratorProtocol {
        let body: MultipartFileBody
        private var index = 0
        private var fd: Int32 = -1
        private var remaining = 0
        private var done = false

        init(body: MultipartFileBody) { self.body = body }

        mutating func next() async throws -> ByteBuffer? {
            if done { return nil }
            if fd >= 0 {
                if remaining > 0 {
                    var buffer = ByteBufferAllocator().buffer(
                        capacity: Swift.min(remaining, MultipartFileBody.chunkSize))
                    let fdCopy = fd
                    let want = Swift.min(remaining, MultipartFileBody.chunkSize)
                    let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                        var got = 0
                        while got < want {
                            let r = read(fdCopy, raw.baseAddress! + got, want - got)
                            if r < 0 && errno == EINTR { continue }
                            if r <= 0 { break }
                            got += r
                        }
                        return got
                    }
                    guard n == want else {
                        close(fd)
                        fd = -1
                        throw PXError.io("file shrank while it was sent", path: body.paths[index])
                    }
                    remaining -= n
                    return buffer
                }
                close(fd)
                fd = -1
                index += 1
                return ByteBuffer(bytes: Array("\r\n".utf8))
            }
            guard index < body.paths.count else {
                done = true
                return ByteBuffer(bytes: body.closing)
            }
            let path = body.paths[index]
            let opened = open(path, O_RDONLY | O_CLOEXEC)
            guard opened >= 0 else { throw PXError.io("cannot open (\(String(cString: strerror(errno))))", path: path) }
            fd = opened
            remaining = body.sizes[index]
            return ByteBuffer(bytes: body.partHeader)
        }
    }
}
