import AsyncHTTPClient
import DICOMData
import Logging
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

    /// The HTTP statuses of a store request that may concern some instances only (PS3.18 §10.5.3, Table
    /// 10.5.3-2: 400 Bad Request and 409 Conflict when some or all failed, 202 Accepted with warnings; 413 when
    /// the request was too large; 422 and 500 as archives use them for a bad part): their answer is read
    /// per instance, and instances it does not name are sent again in smaller requests.
    static let perInstanceStatuses: Set<Int> = [200, 202, 400, 409, 413, 422, 500]

    /// Stores `files` (all sendable) and reports one result per file, in `files` order; `onFile` sees each
    /// file's result as it is known.
    ///
    /// A file named in the answer's Referenced SOP Sequence (0008,1199) is stored, one in Failed SOP Sequence
    /// (0008,1198) failed with its Failure Reason (0008,1197). When the answer is an HTTP error for the whole
    /// request (``perInstanceStatuses``), the files it does not name go again in two halves, and so on down
    /// to one file per request: then the archive's refusal (4xx) is that file's failure, and a server error
    /// (5xx) without a word about the instance leaves its fate unknown, reported as such (not stored as far
    /// as px knows, PS3.18 §10.5.3).
    ///
    /// - Throws: ``PXError`` when the first request fails as a whole for a reason that is not about the
    ///   instances (an HTTP status outside ``perInstanceStatuses``, a transport failure).
    public func store(_ files: [PushFile], onFile: (PushFileResult) async -> Void) async throws -> [PushFileResult] {
        var byPath: [String: PushFileResult] = [:]
        try await self.store(files, into: &byPath, onFile: onFile)
        return files.compactMap { byPath[$0.path] }
    }

    private func store(
        _ files: [PushFile], into results: inout [String: PushFileResult], onFile: (PushFileResult) async -> Void
    ) async throws {
        let (httpStatus, answer, message) = try await self.storeRequest(files)
        let (known, unresolved) = Self.results(of: answer, for: files, httpStatus: httpStatus)
        for result in known {
            results[result.file.path] = result
            await onFile(result)
        }
        guard !unresolved.isEmpty else { return }
        if unresolved.count == 1 && files.count == 1, let file = unresolved.first {
            let error = PXError.httpFailure(status: httpStatus, method: "POST", url: url("/studies"), message: message)
            let result: PushFileResult
            if httpStatus >= 500 {
                result = PushFileResult(
                    file: file, status: nil,
                    error: .invalidResponse(
                        "unknown whether \(file.sopInstanceUID) was stored: the archive answered HTTP \(httpStatus) "
                            + "to a request holding only it and did not name it" + (message.map { ": \($0)" } ?? "")))
            } else {
                result = PushFileResult(file: file, status: nil, error: error)
            }
            results[file.path] = result
            await onFile(result)
            return
        }
        self.logger.info(
            "STOW-RS answered HTTP \(httpStatus) without naming every instance: sending those again in smaller requests",
            metadata: ["files": "\(unresolved.count)"])
        let half = (unresolved.count + 1) / 2
        for part in [Array(unresolved[..<half]), Array(unresolved[half...])] where !part.isEmpty {
            do {
                try await self.store(part, into: &results, onFile: onFile)
            } catch {
                // A later request failed as a whole: its files' fate is that error.
                let error = self.mapped(error)
                for file in part where results[file.path] == nil {
                    let result = PushFileResult(file: file, status: nil, error: error)
                    results[file.path] = result
                    await onFile(result)
                }
            }
        }
    }

    /// One STOW-RS request: the HTTP status, the answer's Store Instances Response Module (empty when the body
    /// is empty or, for an error status, not DICOM JSON) and, for an error status, the archive's message.
    private func storeRequest(_ files: [PushFile]) async throws -> (Int, DataSet, String?) {
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
        let answer = try await request(
            .POST, url("/studies"),
            headers: [
                ("Content-Type", "multipart/related; type=\"application/dicom\"; boundary=\(boundary)"),
                ("Accept", "application/dicom+json"),
            ],
            accepting: Self.perInstanceStatuses,
            body: {
                .stream(
                    MultipartFileBody(paths: paths, sizes: sizes, partHeader: partHeader, closing: closing),
                    length: .known(Int64(length)))
            })
        let response = answer.response
        let status = Int(response.status.code)
        let bytes = try await collect(answer)
        let text = String(decoding: bytes, as: UTF8.self)
        do {
            return (status, bytes.isEmpty ? DataSet() : try DataSet(dicomJSONText: text), nil)
        } catch {
            guard status / 100 == 2 else {
                // An error answer that is not a Store Instances Response: the archive's words, if any.
                let line = text.prefix { $0 != "\n" && $0 != "\r" }.prefix(500)
                return (status, DataSet(), line.isEmpty ? response.status.reasonPhrase : String(line))
            }
            throw PXError.invalidResponse("STOW-RS answer is not DICOM JSON (PS3.18 §10.5.3): \(error)")
        }
    }

    /// Per-file results from a Store Instances Response Module (PS3.18 §10.5.3, Table 10.5.3-1):
    /// a file in Referenced SOP Sequence (0008,1199) is stored (a Warning Reason (0008,1196) makes it
    /// a warning), one in Failed SOP Sequence (0008,1198) failed with its Failure Reason (0008,1197)
    /// as the status; a file the answer does not mention is stored when the answer says 200 OK for all,
    /// and unresolved otherwise (the second list).
    static func results(of answer: DataSet, for files: [PushFile], httpStatus: Int) -> (
        known: [PushFileResult], unresolved: [PushFile]
    ) {
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
        var known: [PushFileResult] = []
        var unresolved: [PushFile] = []
        for file in files {
            if let status = statusByUID[file.sopInstanceUID] {
                var result = PushFileResult(file: file, status: status)
                if status.isFailure { result.error = .dimseFailure(status, operation: "STOW-RS") }
                known.append(result)
            } else if httpStatus == 200 {
                known.append(PushFileResult(file: file, status: .success))
            } else {
                unresolved.append(file)
            }
        }
        return (known, unresolved)
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
