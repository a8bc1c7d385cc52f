import CZlib

/// Raw-deflate decompression for Deflated Explicit VR Little Endian (PS3.5 §A.5), through zlib.
enum Inflate {
    /// Inflates `bytes[range]` (raw deflate, no zlib header), refusing output above `limit` bytes.
    static func inflate(_ bytes: [UInt8], range: Range<Int>, limit: Int) throws(DICOMDataError) -> [UInt8] {
        if range.isEmpty { return [] }
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .inflateFailed("zlib initialisation failed", at: range.lowerBound)
        }
        defer { inflateEnd(&stream) }
        var output = [UInt8]()
        output.reserveCapacity(min(limit, max(range.count * 4, 4096)))
        let chunkSize = 256 * 1024
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var status: Int32 = Z_OK
        bytes.withUnsafeBufferPointer { input in
            stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress! + range.lowerBound)
            stream.avail_in = UInt32(range.count)
            repeat {
                chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = UInt32(chunkSize)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    let produced = chunkSize - Int(stream.avail_out)
                    output.append(contentsOf: buffer[0..<produced])
                }
            } while status == Z_OK && output.count <= limit && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        if output.count > limit { throw .tooLarge("inflated dataset", limit: limit) }
        // Z_BUF_ERROR with all input consumed: the stream ended without its final block; keep what inflated.
        guard status == Z_STREAM_END || status == Z_OK || status == Z_BUF_ERROR else {
            throw .inflateFailed("zlib status \(status)", at: range.lowerBound + Int(stream.total_in))
        }
        return output
    }
}
