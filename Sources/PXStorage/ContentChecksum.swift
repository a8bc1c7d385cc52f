import DICOMData

#if canImport(Glibc)
    import Glibc
#endif

/// What `px-sync --verify` compares of one instance held in two places that keep its bytes (a folder's file,
/// a zip place's entry): its size and CRC-32 (ISO 3309, the checksum a zip's central directory records, so a
/// zip place answers without reading its entries). It finds a file changed or damaged after it was copied; it
/// is not a defence against a forger.
public struct ContentChecksum: Hashable, Sendable, CustomStringConvertible {
    public var size: UInt64
    public var crc32: UInt32

    public init(size: UInt64, crc32: UInt32) {
        self.size = size
        self.crc32 = crc32
    }

    public var description: String {
        "\(size) bytes, CRC-32 " + String(crc32, radix: 16)
    }

    /// The checksum of what `descriptor` holds, read from its start to its end in 256 KiB blocks.
    public static func of(descriptor: Int32, path: String) throws(StorageError) -> ContentChecksum {
        var crc = ZipCRC32()
        var size: UInt64 = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        var offset: off_t = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count == 0 { return ContentChecksum(size: size, crc32: crc.value) }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw .io("cannot read", path: path, errno: errno)
            }
            buffer.withUnsafeBytes { crc.update(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            size += UInt64(count)
            offset += off_t(count)
        }
    }
}

extension ZipPlace {
    /// The size and CRC-32 of each instance of a study, from the central directories of its archives (no
    /// entry is read); an instance in two archives keeps the first.
    public func checksums(ofStudy studyInstanceUID: String) throws(ZipError) -> [String: ContentChecksum] {
        var out: [String: ContentChecksum] = [:]
        for study in try archives(of: studyInstanceUID) {
            let reader = try ZipReader(path: study.path, limits: limits)
            for series in study.series {
                for sop in series.sopInstanceUIDs where out[sop] == nil {
                    let name = study.entryName(series: series.seriesInstanceUID, instance: sop)
                    guard let entry = reader.entry(named: name) else { continue }
                    out[sop] = ContentChecksum(size: entry.uncompressedSize, crc32: entry.crc32)
                }
            }
        }
        return out
    }
}
