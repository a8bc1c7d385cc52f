import CZlib
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The records of a zip archive and their fixed sizes (PKWARE APPNOTE 6.3.x §4.3), shared by
/// ``ZipWriter`` and ``ZipReader``.
enum ZipFormat {
    /// Local file header (§4.3.7): 30 bytes, then the name and the extra field.
    static let localHeaderSignature: UInt32 = 0x0403_4b50
    static let localHeaderSize = 30
    /// Central directory file header (§4.3.12): 46 bytes, then name, extra field and comment.
    static let centralHeaderSignature: UInt32 = 0x0201_4b50
    static let centralHeaderSize = 46
    /// End of central directory record (§4.3.16): 22 bytes and a comment of up to 65535 bytes.
    static let endSignature: UInt32 = 0x0605_4b50
    static let endSize = 22
    /// Zip64 end of central directory record (§4.3.14), version 1: 56 bytes.
    static let zip64EndSignature: UInt32 = 0x0606_4b50
    static let zip64EndSize = 56
    /// Zip64 end of central directory locator (§4.3.15): 20 bytes, just before the end record.
    static let zip64LocatorSignature: UInt32 = 0x0706_4b50
    static let zip64LocatorSize = 20
    /// The Zip64 extended information extra field's header ID (§4.5.3).
    static let zip64ExtraID: UInt16 = 0x0001

    /// General purpose bit flags (§4.4.4).
    static let flagEncrypted: UInt16 = 1 << 0
    static let flagDataDescriptor: UInt16 = 1 << 3
    static let flagStrongEncryption: UInt16 = 1 << 6
    static let flagUTF8: UInt16 = 1 << 11
    static let flagMaskedHeaders: UInt16 = 1 << 13

    /// Version needed to extract (§4.4.3): 1.0 stored, 2.0 deflate, 4.5 Zip64.
    static let versionStored: UInt16 = 10
    static let versionDeflate: UInt16 = 20
    static let versionZip64: UInt16 = 45
    /// Version made by: upper byte 3 (UNIX, so external attributes hold a mode), lower byte 4.5.
    static let versionMadeBy: UInt16 = 3 << 8 | 45

    /// The 16- and 32-bit fields' "see the Zip64 record" values.
    static let max16: UInt64 = 0xFFFF
    static let max32: UInt64 = 0xFFFF_FFFF
}

/// How an entry's data is stored (APPNOTE §4.4.5); px writes and reads these two only.
public enum ZipMethod: UInt16, Sendable, Hashable {
    case stored = 0
    case deflate = 8
}

/// Little-endian fields appended to a byte buffer.
extension Array where Element == UInt8 {
    mutating func appendLE(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func appendLE(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func appendLE(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

/// Little-endian fields read from bytes at an offset (the caller checked the length).
struct LittleEndianBytes {
    let bytes: ArraySlice<UInt8>

    init(_ bytes: ArraySlice<UInt8>) { self.bytes = bytes }

    func u16(_ offset: Int) -> UInt16 {
        let i = bytes.startIndex + offset
        return UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
    }

    func u32(_ offset: Int) -> UInt32 {
        let i = bytes.startIndex + offset
        return UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
    }

    func u64(_ offset: Int) -> UInt64 {
        UInt64(u32(offset)) | UInt64(u32(offset + 4)) << 32
    }
}

/// CRC-32 as zip uses it (APPNOTE §4.4.7: the ISO 3309 polynomial), through zlib's `crc32`.
struct ZipCRC32 {
    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        var crc = UInt(value)
        var offset = 0
        // zlib's length is a uInt: feed at most 1 GiB at a time.
        while offset < bytes.count {
            let count = Swift.min(bytes.count - offset, 1 << 30)
            crc = crc32(crc, (base + offset).assumingMemoryBound(to: Bytef.self), uInt(count))
            offset += count
        }
        value = UInt32(truncatingIfNeeded: crc)
    }
}

/// MS-DOS date and time (APPNOTE §4.4.6), local time, 2-second resolution, from 1980.
struct DOSTimestamp {
    var time: UInt16
    var date: UInt16

    init(time: UInt16, date: UInt16) {
        self.time = time
        self.date = date
    }

    init(seconds: Int) {
        var t = time_t(seconds)
        var parts = tm()
        localtime_r(&t, &parts)
        let year = Int(parts.tm_year) + 1900
        guard year >= 1980 else {
            self.init(time: 0, date: 1 << 5 | 1)
            return
        }
        let clamped = Swift.min(year, 2107) - 1980
        self.init(
            time: UInt16(parts.tm_hour) << 11 | UInt16(parts.tm_min) << 5 | UInt16(parts.tm_sec / 2),
            date: UInt16(clamped) << 9 | UInt16(parts.tm_mon + 1) << 5 | UInt16(parts.tm_mday))
    }
}

/// A process-wide counter for unique temporary names.
final class ZipCounter: Sendable {
    private let value = Atomic<Int>(0)
    func next() -> Int { value.wrappingAdd(1, ordering: .relaxed).newValue }
}
