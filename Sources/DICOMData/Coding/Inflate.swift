import CZlib

/// Raw-deflate decompression for Deflated Explicit VR Little Endian (PS3.5 §A.5), through zlib.
///
/// Both limits bound what a hostile file can cost (a decompression bomb: a few compressed bytes that
/// inflate to gigabytes): ``Limits/maximumSize`` bounds the output, ``Limits/maximumRatio`` its expansion
/// once past ``Limits/ratioFloor``.
enum Inflate {
    /// Inflates `bytes[range]` (raw deflate, no zlib header) into memory, within `limits`.
    static func inflate(_ bytes: [UInt8], range: Range<Int>, limits: InflateLimits) throws(DICOMDataError) -> [UInt8] {
        if range.isEmpty { return [] }
        let inflater = try Inflater(limits: limits, startOffset: range.lowerBound)
        var output = [UInt8]()
        output.reserveCapacity(min(limits.maximumSize, max(range.count * 4, 4096)))
        try bytes.withBytes { raw throws(DICOMDataError) in
            let input = UnsafeRawBufferPointer(rebasing: raw[range])
            _ = try inflater.inflate(input, isLastInput: true) { output.append(contentsOf: $0) }
        }
        return output
    }
}

/// The limits of one inflate (see ``Inflate``).
public struct InflateLimits: Sendable, Hashable {
    /// Refuse output beyond this many bytes.
    public var maximumSize: Int
    /// Refuse output more than this many times the compressed input consumed so far ...
    public var maximumRatio: Int
    /// ... once the output exceeds this many bytes (small data sets compress well and are harmless).
    public var ratioFloor: Int

    public init(maximumSize: Int = 1 << 30, maximumRatio: Int = 200, ratioFloor: Int = 16 << 20) {
        self.maximumSize = maximumSize
        self.maximumRatio = maximumRatio
        self.ratioFloor = ratioFloor
    }
}

/// An incremental raw-deflate stream: compressed chunks in, inflated chunks out through a callback, so that
/// a caller that only needs part of the output (a header read) never holds the rest.
final class Inflater {
    private var stream = z_stream()
    private let limits: InflateLimits
    private let startOffset: Int
    private var chunk: [UInt8]
    /// Compressed bytes consumed and inflated bytes produced so far.
    private(set) var totalIn = 0
    private(set) var totalOut = 0
    /// The deflate stream ended (its final block was inflated).
    private(set) var finished = false

    /// - Parameter startOffset: where the compressed stream starts in its file, for error offsets.
    init(limits: InflateLimits, startOffset: Int = 0, chunkSize: Int = 64 * 1024) throws(DICOMDataError) {
        self.limits = limits
        self.startOffset = startOffset
        self.chunk = [UInt8](repeating: 0, count: chunkSize)
        guard inflateInit2_(&self.stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .inflateFailed("zlib initialisation failed", at: startOffset)
        }
    }

    deinit { inflateEnd(&self.stream) }

    /// Inflates `input`, handing each inflated chunk to `sink` (valid during the call only), until the input
    /// is consumed or `maximumOutput` bytes came out (the caller then passes the rest of the input again).
    ///
    /// - Parameter isLastInput: no more input follows: a stream without its final block is accepted
    ///   (what inflated is kept), as readers of real files do.
    /// - Returns: how many bytes of `input` were consumed (less than all when the stream ended early).
    /// - Throws: ``DICOMDataError/tooLarge(_:limit:)`` or ``DICOMDataError/inflateRatioExceeded(ratio:)``
    ///   past the limits, ``DICOMDataError/inflateFailed(_:at:)`` for corrupt data.
    @discardableResult
    func inflate(
        _ input: UnsafeRawBufferPointer, isLastInput: Bool, maximumOutput: Int = .max,
        sink: (UnsafeRawBufferPointer) throws(DICOMDataError) -> Void
    ) throws(DICOMDataError) -> Int {
        guard !self.finished else { return 0 }
        // Empty input still drains output zlib holds back from an earlier call that hit `maximumOutput`.
        var none: UInt8 = 0
        return try withUnsafeMutablePointer(to: &none) { nonePointer throws(DICOMDataError) in
            let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? UnsafePointer(nonePointer)
            return try self.run(
                UnsafeMutablePointer(mutating: base), count: input.isEmpty ? 0 : input.count, isLastInput: isLastInput,
                maximumOutput: maximumOutput, sink: sink)
        }
    }

    private func run(
        _ base: UnsafeMutablePointer<UInt8>, count: Int, isLastInput: Bool, maximumOutput: Int,
        sink: (UnsafeRawBufferPointer) throws(DICOMDataError) -> Void
    ) throws(DICOMDataError) -> Int {
        self.stream.next_in = base
        self.stream.avail_in = UInt32(count)
        let chunkSize = self.chunk.count
        var status: Int32 = Z_OK
        var producedInCall = 0
        repeat {
            let inBefore = Int(self.stream.avail_in)
            let produced = self.chunk.withUnsafeMutableBytes { buffer in
                self.stream.next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                self.stream.avail_out = UInt32(chunkSize)
                status = CZlib.inflate(&self.stream, Z_NO_FLUSH)
                return chunkSize - Int(self.stream.avail_out)
            }
            self.totalIn += inBefore - Int(self.stream.avail_in)
            self.totalOut += produced
            producedInCall += produced
            if self.totalOut > self.limits.maximumSize {
                throw .tooLarge("inflated data set", limit: self.limits.maximumSize)
            }
            if self.totalOut > self.limits.ratioFloor && self.totalOut / max(self.totalIn, 1) > self.limits.maximumRatio
            {
                throw .inflateRatioExceeded(ratio: self.limits.maximumRatio)
            }
            if produced > 0 {
                try self.chunk.withBytes { buffer throws(DICOMDataError) in
                    try sink(UnsafeRawBufferPointer(rebasing: buffer[..<produced]))
                }
            }
        } while status == Z_OK && (self.stream.avail_in > 0 || self.stream.avail_out == 0)
            && producedInCall < maximumOutput
        let consumed = count - Int(self.stream.avail_in)
        self.stream.next_in = nil
        self.stream.avail_in = 0
        switch status {
        case Z_STREAM_END:
            self.finished = true
        case Z_OK:
            break
        case Z_BUF_ERROR where isLastInput || consumed == count:
            // All input consumed: more may follow, or (last input) the stream ended without its final
            // block; keep what inflated.
            break
        default:
            throw .inflateFailed("zlib status \(status)", at: self.startOffset + self.totalIn)
        }
        return consumed
    }
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a body with typed throws (the standard one's `rethrows` loses the type).
    package func withBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let result: Result<R, E> = self.withUnsafeBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}
