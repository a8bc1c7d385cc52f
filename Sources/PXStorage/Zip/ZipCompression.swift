import CZlib
import DICOMData

/// Raw deflate (RFC 1951, no zlib header: APPNOTE §4.4.5 method 8) of one entry, chunk by chunk.
///
/// With `bulkAfter`, the first that many bytes (a DICOM file's header: tags, names, UIDs, text that repeats)
/// are deflated with zlib's default strategy, which searches for repeated strings, and the rest (the bulk:
/// pixel data, noisy 16-bit samples where strings hardly repeat) with `Z_RLE`, which looks only for runs
/// of one byte and leaves the rest to Huffman coding (RFC 1951 §3.2.5): on the CT corpus of
/// docs/benchmarks.rst that bulk came out as small (0.857 of the input against 0.866) in a third of
/// the time. The strategy changes at a block boundary (`deflateParams`), so the stream stays one valid
/// deflate stream.
final class ZipDeflater {
    private var stream = z_stream()
    private var output: [UInt8]
    private let path: String?
    private let level: Int32
    /// Input bytes still to deflate with the default strategy before the switch to `Z_RLE`.
    private var untilBulk: Int?

    /// What an image's entry deflates with the default strategy before it switches to `Z_RLE`
    /// (``ZipPlace``): more than a typical image header (1.2 KiB for the CT corpus's; a longer one, with
    /// private groups or an icon, has its tail deflated with `Z_RLE`, a little larger).
    static let headerBytes = 16 * 1024

    init(level: Int32, path: String?, bulkAfter: Int? = nil, chunkSize: Int = 256 * 1024) throws(ZipError) {
        self.path = path
        self.level = level
        self.untilBulk = bulkAfter
        self.output = [UInt8](repeating: 0, count: chunkSize)
        let status = deflateInit2_(
            &stream, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else { throw .io("zlib deflate initialisation failed (\(status))", path: path) }
    }

    deinit { deflateEnd(&stream) }

    /// Compresses `input` (`finish`: the last of the entry) and hands each compressed chunk to `sink`.
    func deflate(
        _ input: UnsafeRawBufferPointer, finish: Bool, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void
    ) throws(ZipError) {
        guard let left = untilBulk, input.count > left else {
            if let left = untilBulk { untilBulk = left - input.count }
            try run(input, flush: finish ? Z_FINISH : Z_NO_FLUSH, sink: sink)
            return
        }
        // The header part to the end of a block, then the bulk with the other strategy.
        try run(UnsafeRawBufferPointer(rebasing: input[..<left]), flush: Z_BLOCK, sink: sink)
        untilBulk = nil
        try switchToBulk(sink: sink)
        try run(UnsafeRawBufferPointer(rebasing: input[left...]), flush: finish ? Z_FINISH : Z_NO_FLUSH, sink: sink)
    }

    /// `Z_RLE` from here on. `deflateParams` flushes what is pending first and may need more than one
    /// output buffer for it (`Z_BUF_ERROR` until it has room).
    private func switchToBulk(sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void) throws(ZipError) {
        let level = self.level
        while true {
            let (status, produced) = stream.step(into: &output) { deflateParams(&$0, level, Z_RLE) }
            if produced > 0 {
                try output.withBytes { buffer throws(ZipError) in
                    try sink(UnsafeRawBufferPointer(rebasing: buffer[..<produced]))
                }
            }
            if status == Z_OK { return }
            guard status == Z_BUF_ERROR else { throw .io("zlib deflateParams failed (\(status))", path: path) }
            // Nothing written and still refused: the strategy stays (the stream is as valid).
            if produced == 0 { return }
        }
    }

    /// Deflates `input` with `flush`, until zlib has taken all of it and, for `Z_FINISH` or `Z_BLOCK`,
    /// written out everything it holds.
    private func run(
        _ input: UnsafeRawBufferPointer, flush: Int32, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void
    ) throws(ZipError) {
        stream.setInput(input)
        defer { stream.setInput(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let chunkSize = output.count
        while true {
            let (status, produced) = stream.step(into: &output) { CZlib.deflate(&$0, flush) }
            if produced > 0 {
                try output.withBytes { buffer throws(ZipError) in
                    try sink(UnsafeRawBufferPointer(rebasing: buffer[..<produced]))
                }
            }
            if status == Z_STREAM_END { return }
            guard status == Z_OK || status == Z_BUF_ERROR else {
                throw .io("zlib deflate failed (\(status))", path: path)
            }
            // More to do while the output filled up, or (finishing) until the stream ends.
            if flush != Z_FINISH && stream.avail_in == 0 && produced < chunkSize { return }
        }
    }
}

/// Raw inflate of one entry held to what its headers declare: never more output than the uncompressed
/// size, never more input than the compressed size, and the stream must end exactly there (a lying size
/// or a truncated stream is an error, not a shorter file).
final class ZipInflater {
    private var stream = z_stream()
    private var output: [UInt8]
    private let path: String?
    private let name: String
    private let expectedOutput: UInt64
    private(set) var totalOut: UInt64 = 0
    private(set) var finished = false

    init(name: String, expectedOutput: UInt64, path: String?, chunkSize: Int = 256 * 1024) throws(ZipError) {
        self.path = path
        self.name = name
        self.expectedOutput = expectedOutput
        self.output = [UInt8](repeating: 0, count: chunkSize)
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .io("zlib inflate initialisation failed", path: path)
        }
    }

    deinit { inflateEnd(&stream) }

    /// Inflates `input`, the next compressed bytes (`isLast`: the entry's compressed size ends here).
    func inflate(
        _ input: UnsafeRawBufferPointer, isLast: Bool, sink: (UnsafeRawBufferPointer) throws(ZipError) -> Void
    ) throws(ZipError) {
        if finished {
            guard input.isEmpty else {
                throw .sizeMismatch(
                    "entry \(name.debugDescription): deflate stream ends before its compressed size", path: path)
            }
            return
        }
        stream.setInput(input)
        defer { stream.setInput(UnsafeRawBufferPointer(start: nil, count: 0)) }
        let chunkSize = output.count
        while true {
            let (status, produced) = stream.step(into: &output) { CZlib.inflate(&$0, Z_NO_FLUSH) }
            totalOut += UInt64(produced)
            guard totalOut <= expectedOutput else {
                throw .sizeMismatch(
                    "entry \(name.debugDescription) inflates past its declared size of \(expectedOutput) bytes",
                    path: path)
            }
            if produced > 0 {
                try output.withBytes { buffer throws(ZipError) in
                    try sink(UnsafeRawBufferPointer(rebasing: buffer[..<produced]))
                }
            }
            switch status {
            case Z_STREAM_END:
                finished = true
                guard stream.avail_in == 0, isLast else {
                    throw .sizeMismatch(
                        "entry \(name.debugDescription): deflate stream ends before its compressed size", path: path)
                }
                return
            case Z_OK, Z_BUF_ERROR:
                if stream.avail_in == 0 && produced < chunkSize {
                    guard !isLast else {
                        throw .sizeMismatch(
                            "entry \(name.debugDescription): deflate stream does not end within its compressed size",
                            path: path)
                    }
                    return
                }
                if status == Z_BUF_ERROR && produced == 0 {
                    throw .checksum("entry \(name.debugDescription): deflate stream stalled", path: path)
                }
            default:
                throw .checksum("entry \(name.debugDescription): corrupt deflate stream (zlib \(status))", path: path)
            }
        }
    }
}

extension z_stream {
    /// Points the stream's input at `input` (zlib accepts no pointer with no bytes).
    mutating func setInput(_ input: UnsafeRawBufferPointer) {
        next_in = input.baseAddress.map { UnsafeMutablePointer(mutating: $0.assumingMemoryBound(to: UInt8.self)) }
        avail_in = UInt32(input.count)
    }

    /// One call of `call` (deflate or inflate) with `output` as the whole output space: its status and how
    /// many bytes it wrote there.
    mutating func step(into output: inout [UInt8], _ call: (inout z_stream) -> Int32) -> (status: Int32, produced: Int)
    {
        let size = output.count
        var status: Int32 = Z_OK
        output.withUnsafeMutableBytes { buffer in
            next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            avail_out = UInt32(size)
            status = call(&self)
            next_out = nil
        }
        return (status, size - Int(avail_out))
    }
}
