/// The upper half (bytes A0-FF) of a single-byte character set, invoked into G1
/// (PS3.3 Tables C.12-2 and C.12-3).
enum UpperHalfSet: String, Hashable, Sendable, CaseIterable {
    case latin1 = "ISO-8859-1"  // ISO-IR 100
    case latin2 = "ISO-8859-2"  // ISO-IR 101
    case latin3 = "ISO-8859-3"  // ISO-IR 109
    case latin4 = "ISO-8859-4"  // ISO-IR 110
    case cyrillic = "ISO-8859-5"  // ISO-IR 144
    case arabic = "ISO-8859-6"  // ISO-IR 127
    case greek = "ISO-8859-7"  // ISO-IR 126
    case hebrew = "ISO-8859-8"  // ISO-IR 138
    case latin5 = "ISO-8859-9"  // ISO-IR 148
    case latin9 = "ISO-8859-15"  // ISO-IR 203
    case thai = "TIS-620"  // ISO-IR 166

    /// The final byte F of its designation escape sequence ESC 02/13 F (PS3.3 Table C.12-3).
    var finalByte: UInt8 {
        switch self {
        case .latin1: return 0x41  // A
        case .latin2: return 0x42  // B
        case .latin3: return 0x43  // C
        case .latin4: return 0x44  // D
        case .cyrillic: return 0x4C  // L
        case .arabic: return 0x47  // G
        case .greek: return 0x46  // F
        case .hebrew: return 0x48  // H
        case .latin5: return 0x4D  // M
        case .latin9: return 0x62  // b
        case .thai: return 0x54  // T
        }
    }

    init?(finalByte: UInt8) {
        guard let match = UpperHalfSet.allCases.first(where: { $0.finalByte == finalByte }) else { return nil }
        self = match
    }

    /// Unicode scalar values for bytes 80-FF; 0 where the byte is unassigned.
    var table: [UInt32] {
        switch self {
        case .latin1: return CharsetTables.latin1
        case .latin2: return CharsetTables.latin2
        case .latin3: return CharsetTables.latin3
        case .latin4: return CharsetTables.latin4
        case .cyrillic: return CharsetTables.cyrillic
        case .arabic: return CharsetTables.arabic
        case .greek: return CharsetTables.greek
        case .hebrew: return CharsetTables.hebrew
        case .latin5: return CharsetTables.latin5
        case .latin9: return CharsetTables.latin9
        case .thai: return CharsetTables.thai
        }
    }

    /// The byte (80-FF) for a Unicode scalar value, if the set has it.
    func byte(for scalar: UInt32) -> UInt8? {
        let reverse: [UInt32: UInt8]
        switch self {
        case .latin1: return scalar >= 0x80 && scalar <= 0xFF ? UInt8(scalar) : nil
        case .latin2: reverse = CharsetTables.latin2Reverse
        case .latin3: reverse = CharsetTables.latin3Reverse
        case .latin4: reverse = CharsetTables.latin4Reverse
        case .cyrillic: reverse = CharsetTables.cyrillicReverse
        case .arabic: reverse = CharsetTables.arabicReverse
        case .greek: reverse = CharsetTables.greekReverse
        case .hebrew: reverse = CharsetTables.hebrewReverse
        case .latin5: reverse = CharsetTables.latin5Reverse
        case .latin9: reverse = CharsetTables.latin9Reverse
        case .thai: reverse = CharsetTables.thaiReverse
        }
        return reverse[scalar]
    }
}

/// A 94×94 double-byte set of PS3.3 Table C.12-4.
enum DoubleByteSet: Hashable, Sendable, CaseIterable {
    /// JIS X 0208 (ISO-IR 87), in G0.
    case jisX0208
    /// JIS X 0212 (ISO-IR 159), in G0.
    case jisX0212
    /// KS X 1001 (ISO-IR 149), in G1.
    case ksX1001
    /// GB 2312 (ISO-IR 58), in G1.
    case gb2312

    /// The EUC encoding through which iconv reaches the set, and the byte prefix of its code set.
    var eucName: String {
        switch self {
        case .jisX0208, .jisX0212: return "EUC-JP"
        case .ksX1001: return "EUC-KR"
        case .gb2312: return "EUC-CN"
        }
    }

    /// JIS X 0212 is code set 3 of EUC-JP, reached with single shift SS3 (8F).
    var eucPrefix: UInt8? { self == .jisX0212 ? 0x8F : nil }

    /// Unicode scalar values indexed by (row - 1) * 94 + (cell - 1); 0 where unassigned.
    var table: [UInt32] {
        switch self {
        case .jisX0208: return CharsetTables.jisX0208
        case .jisX0212: return CharsetTables.jisX0212
        case .ksX1001: return CharsetTables.ksX1001
        case .gb2312: return CharsetTables.gb2312
        }
    }

    /// The two 7-bit code bytes (21-7E each) for a Unicode scalar value, if the set has it.
    func code(for scalar: UInt32) -> UInt16? {
        switch self {
        case .jisX0208: return CharsetTables.jisX0208Reverse[scalar]
        case .jisX0212: return CharsetTables.jisX0212Reverse[scalar]
        case .ksX1001: return CharsetTables.ksX1001Reverse[scalar]
        case .gb2312: return CharsetTables.gb2312Reverse[scalar]
        }
    }
}

/// A graphic character set that an ISO 2022 escape sequence designates to G0 or G1
/// (PS3.5 §6.1.2.5; PS3.3 Tables C.12-3 and C.12-4).
enum GraphicSet: Hashable, Sendable {
    /// ISO-IR 6, ASCII, in G0.
    case ascii
    /// ISO-IR 14, JIS X 0201 Romaji, in G0: ASCII with YEN SIGN at 5C and OVERLINE at 7E.
    case jisRoman
    /// ISO-IR 13, JIS X 0201 half-width Katakana, in G1.
    case jisKatakana
    /// The upper half of an ISO 8859 part or TIS 620, in G1.
    case upperHalf(UpperHalfSet)
    /// A 94×94 multi-byte set, in G0 or G1.
    case doubleByte(DoubleByteSet)

    /// True for sets designated to G0 (bytes 21-7E), false for G1 (bytes A1-FE).
    var isG0: Bool {
        switch self {
        case .ascii, .jisRoman: return true
        case .jisKatakana, .upperHalf: return false
        case .doubleByte(let set): return set == .jisX0208 || set == .jisX0212
        }
    }

    /// The escape sequence that designates this set (PS3.3 Tables C.12-3 and C.12-4).
    var escapeSequence: [UInt8] {
        switch self {
        case .ascii: return [0x1B, 0x28, 0x42]  // ESC ( B
        case .jisRoman: return [0x1B, 0x28, 0x4A]  // ESC ( J
        case .jisKatakana: return [0x1B, 0x29, 0x49]  // ESC ) I
        case .upperHalf(let set): return [0x1B, 0x2D, set.finalByte]  // ESC - F
        case .doubleByte(.jisX0208): return [0x1B, 0x24, 0x42]  // ESC $ B
        case .doubleByte(.jisX0212): return [0x1B, 0x24, 0x28, 0x44]  // ESC $ ( D
        case .doubleByte(.ksX1001): return [0x1B, 0x24, 0x29, 0x43]  // ESC $ ) C
        case .doubleByte(.gb2312): return [0x1B, 0x24, 0x29, 0x41]  // ESC $ ) A
        }
    }

    /// Recognises the escape sequence starting at `start` (which holds ESC).
    /// Returns the designated set and the sequence length; nil for sequences DICOM doesn't define.
    /// ESC $ @ (JIS C 6226-1978) is read as JIS X 0208, as ISO-2022-JP decoders do.
    static func designation(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (GraphicSet, Int)? {
        func byte(_ offset: Int) -> UInt8? {
            let i = start + offset
            return i < bytes.count ? bytes[i] : nil
        }
        switch (byte(1), byte(2)) {
        case (0x28, 0x42): return (.ascii, 3)
        case (0x28, 0x4A): return (.jisRoman, 3)
        case (0x29, 0x49): return (.jisKatakana, 3)
        case (0x2D, let f?):
            guard let set = UpperHalfSet(finalByte: f) else { return nil }
            return (.upperHalf(set), 3)
        case (0x24, 0x42), (0x24, 0x40): return (.doubleByte(.jisX0208), 3)
        case (0x24, 0x28):
            return byte(3) == 0x44 ? (.doubleByte(.jisX0212), 4) : nil
        case (0x24, 0x29):
            switch byte(3) {
            case 0x43: return (.doubleByte(.ksX1001), 4)
            case 0x41: return (.doubleByte(.gb2312), 4)
            default: return nil
            }
        default: return nil
        }
    }

    /// The bytes for one Unicode scalar in this set as designated (G0 sets in 21-7E, G1 sets in A1-FE),
    /// or nil when the set doesn't have it. Only graphic characters are looked up here; controls and
    /// space are handled by the caller.
    func encode(_ scalar: UInt32) -> [UInt8]? {
        switch self {
        case .ascii:
            return scalar >= 0x21 && scalar <= 0x7E ? [UInt8(scalar)] : nil
        case .jisRoman:
            switch scalar {
            case 0x5C, 0x7E: return nil
            case 0xA5: return [0x5C]
            case 0x203E: return [0x7E]
            case 0x21...0x7E: return [UInt8(scalar)]
            default: return nil
            }
        case .jisKatakana:
            return scalar >= 0xFF61 && scalar <= 0xFF9F ? [UInt8(scalar - 0xFF61 + 0xA1)] : nil
        case .upperHalf(let set):
            guard scalar >= 0xA0, let b = set.byte(for: scalar), b >= 0xA0 else { return nil }
            return [b]
        case .doubleByte(let set):
            guard scalar >= 0x80, let code = set.code(for: scalar) else { return nil }
            let high = UInt8(truncatingIfNeeded: code >> 8)
            let low = UInt8(truncatingIfNeeded: code)
            return isG0 ? [high, low] : [high | 0x80, low | 0x80]
        }
    }
}
