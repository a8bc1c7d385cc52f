#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Lookup tables for the ISO 2022 graphic sets, built once from the system iconv on first use.
///
/// Decoding through tables keeps the per-element path free of locks and iconv calls, and makes the
/// piecewise decoding of PS3.5 §6.1.2.5 (one set per escape sequence) a simple byte walk.
/// Each `static let` is initialised lazily and thread-safely by the runtime.
/// A table whose iconv encoding is missing is all zeros: its bytes decode to U+FFFD and nothing encodes.
enum CharsetTables {
    // MARK: Single-byte upper halves, bytes 80-FF.

    static let latin1: [UInt32] = (0x80...0xFF).map { UInt32($0) }
    static let latin2 = upperHalf(UpperHalfSet.latin2.rawValue)
    static let latin3 = upperHalf(UpperHalfSet.latin3.rawValue)
    static let latin4 = upperHalf(UpperHalfSet.latin4.rawValue)
    static let cyrillic = upperHalf(UpperHalfSet.cyrillic.rawValue)
    static let arabic = upperHalf(UpperHalfSet.arabic.rawValue)
    static let greek = upperHalf(UpperHalfSet.greek.rawValue)
    static let hebrew = upperHalf(UpperHalfSet.hebrew.rawValue)
    static let latin5 = upperHalf(UpperHalfSet.latin5.rawValue)
    static let latin9 = upperHalf(UpperHalfSet.latin9.rawValue)
    static let thai = upperHalf(UpperHalfSet.thai.rawValue)

    static let latin2Reverse = reverseUpperHalf(latin2)
    static let latin3Reverse = reverseUpperHalf(latin3)
    static let latin4Reverse = reverseUpperHalf(latin4)
    static let cyrillicReverse = reverseUpperHalf(cyrillic)
    static let arabicReverse = reverseUpperHalf(arabic)
    static let greekReverse = reverseUpperHalf(greek)
    static let hebrewReverse = reverseUpperHalf(hebrew)
    static let latin5Reverse = reverseUpperHalf(latin5)
    static let latin9Reverse = reverseUpperHalf(latin9)
    static let thaiReverse = reverseUpperHalf(thai)

    // MARK: 94×94 sets, indexed by (first - 0x21) * 94 + (second - 0x21) on the 7-bit code bytes.

    static let jisX0208 = doubleByte(.jisX0208)
    static let jisX0212 = doubleByte(.jisX0212)
    static let ksX1001 = doubleByte(.ksX1001)
    static let gb2312 = doubleByte(.gb2312)

    static let jisX0208Reverse = reverseDoubleByte(jisX0208)
    static let jisX0212Reverse = reverseDoubleByte(jisX0212)
    static let ksX1001Reverse = reverseDoubleByte(ksX1001)
    static let gb2312Reverse = reverseDoubleByte(gb2312)

    // MARK: Builders

    /// Decodes each byte 80-FF alone; C1 controls (80-9F) map to themselves when iconv leaves them out.
    static func upperHalf(_ encoding: String) -> [UInt32] {
        var table = [UInt32](repeating: 0, count: 128)
        for b in 0x80...0x9F { table[b - 0x80] = UInt32(b) }
        guard let d = IconvPool.open(from: encoding, to: "UTF-32LE") else { return table }
        defer { _ = iconv_close(d.raw) }
        for b in 0xA0...0xFF {
            if let scalar = decodeOne([UInt8(b)], with: d) { table[b - 0x80] = scalar }
        }
        return table
    }

    static func doubleByte(_ set: DoubleByteSet) -> [UInt32] {
        var table = [UInt32](repeating: 0, count: 94 * 94)
        guard let d = IconvPool.open(from: set.eucName, to: "UTF-32LE") else { return table }
        defer { _ = iconv_close(d.raw) }
        var sequence: [UInt8] = set.eucPrefix.map { [$0] } ?? []
        let base = sequence.count
        sequence += [0, 0]
        for row in 0..<94 {
            for cell in 0..<94 {
                sequence[base] = UInt8(0xA1 + row)
                sequence[base + 1] = UInt8(0xA1 + cell)
                if let scalar = decodeOne(sequence, with: d) { table[row * 94 + cell] = scalar }
            }
        }
        return table
    }

    /// One character through iconv to UTF-32LE; nil unless it yields exactly one scalar.
    private static func decodeOne(_ bytes: [UInt8], with d: IconvDescriptor) -> UInt32? {
        let outcome = bytes.withUnsafeBufferPointer { IconvPool.convert($0, with: d, stopOnError: true) }
        guard case .converted(let out) = outcome, out.count == 4 else { return nil }
        let scalar = UInt32(out[0]) | UInt32(out[1]) << 8 | UInt32(out[2]) << 16 | UInt32(out[3]) << 24
        return scalar == 0 ? nil : scalar
    }

    static func reverseUpperHalf(_ table: [UInt32]) -> [UInt32: UInt8] {
        var reverse: [UInt32: UInt8] = [:]
        for (i, scalar) in table.enumerated() where scalar != 0 && reverse[scalar] == nil {
            reverse[scalar] = UInt8(0x80 + i)
        }
        return reverse
    }

    static func reverseDoubleByte(_ table: [UInt32]) -> [UInt32: UInt16] {
        var reverse: [UInt32: UInt16] = [:]
        reverse.reserveCapacity(table.count)
        for (i, scalar) in table.enumerated() where scalar != 0 && reverse[scalar] == nil {
            reverse[scalar] = UInt16(0x21 + i / 94) << 8 | UInt16(0x21 + i % 94)
        }
        return reverse
    }
}
