extension SpecificCharacterSet {
    // MARK: Decoding

    /// Decodes one whole element value (all values, backslash separators included) for a VR.
    ///
    /// VRs outside PS3.5 §6.1.2.3 use the default repertoire; bytes above 7F there, and wherever no
    /// set is designated, are read as Latin-1 so nothing is lost. Invalid or unassigned byte sequences
    /// become U+FFFD. Pure ASCII takes a fast path with no table or iconv work.
    public func decode<C: Collection>(_ bytes: C, vr: VR) -> String where C.Element == UInt8 {
        if let s = bytes.withContiguousStorageIfAvailable({ decode(buffer: $0, vr: vr) }) { return s }
        return Array(bytes).withUnsafeBufferPointer { decode(buffer: $0, vr: vr) }
    }

    /// Whether every byte 5C of a value of `vr` is the value delimiter (PS3.5 §6.1.3), so values can be
    /// split before they are decoded: stateless encodings whose G0 is ASCII (the default repertoire, the
    /// ISO-IR 100…203 single-byte sets, UTF-8, and VRs that ignore (0008,0005)). Not GB18030/GBK (5C can
    /// be a second byte), ISO 2022 with escapes (5C inside a two-byte set) or ISO-IR 13 (5C is the yen
    /// sign of JIS X 0201 Romaji).
    func byte5CIsAlwaysBackslash(vr: VR) -> Bool {
        guard vr.usesSpecificCharacterSet else { return true }
        switch scheme {
        case .utf8: return true
        case .gb18030, .gbk: return false
        case .iso2022(let config): return !config.allowsEscapes && config.initialG0 == .ascii
        }
    }

    func decode(buffer: UnsafeBufferPointer<UInt8>, vr: VR) -> String {
        var high = false
        var escape = false
        var yenOrOverline = false
        for b in buffer {
            if b >= 0x80 {
                high = true
            } else if b == 0x1B {
                escape = true
            } else if b == 0x5C || b == 0x7E {
                yenOrOverline = true
            }
        }
        guard vr.usesSpecificCharacterSet else {
            return high ? SpecificCharacterSet.latin1(buffer) : String(decoding: buffer, as: UTF8.self)
        }
        switch scheme {
        case .utf8:
            return String(decoding: buffer, as: UTF8.self)
        case .gb18030, .gbk:
            if !high { return String(decoding: buffer, as: UTF8.self) }
            let pool = scheme == .gb18030 ? IconvPools.gb18030Decoder : IconvPools.gbkDecoder
            guard case .converted(let utf8)? = pool.convert(buffer, stopOnError: false) else {
                return SpecificCharacterSet.latin1(buffer)
            }
            return String(decoding: utf8, as: UTF8.self)
        case .iso2022(let config):
            let romaji = config.initialG0 == .jisRoman && yenOrOverline
            if !high && !romaji && !(escape && config.allowsEscapes) {
                return String(decoding: buffer, as: UTF8.self)
            }
            return SpecificCharacterSet.decodeISO2022(buffer, config: config, delimiters: CodeExtensionDelimiters(vr))
        }
    }

    static func latin1(_ buffer: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(buffer.count + buffer.count / 2)
        for b in buffer {
            if b < 0x80 { out.append(b) } else { appendUTF8(UInt32(b), to: &out) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Walks the bytes with the G0/G1 state of ISO 2022 (PS3.5 §6.1.2.5): an escape sequence designates a
    /// set, G0 bytes (21-7E) and G1 bytes (A1-FE) decode through the set designated there, one or two bytes
    /// per character, and each delimiter of §6.1.2.5.3 restores the sets of value 1.
    ///
    /// While a 94×94 set is in G0, bytes 21-7E are read in pairs, so `^`, `=` and `\` inside a
    /// two-byte code are not taken for delimiters (the standard requires a switch back before them).
    static func decodeISO2022(
        _ buffer: UnsafeBufferPointer<UInt8>, config: CodeExtensionConfiguration, delimiters: CodeExtensionDelimiters
    ) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(buffer.count * 2)
        var g0 = config.initialG0
        var g1 = config.initialG1
        var g0Table = tableFor(g0)
        var g1Table = g1.map(tableFor) ?? []
        let n = buffer.count
        var i = 0
        while i < n {
            let b = buffer[i]
            if b == 0x1B && config.allowsEscapes {
                if let (set, length) = GraphicSet.designation(in: buffer, at: i) {
                    if set.isG0 {
                        g0 = set
                        g0Table = tableFor(set)
                    } else {
                        g1 = set
                        g1Table = tableFor(set)
                    }
                    i += length
                } else {
                    // An escape sequence DICOM doesn't define: kept as it is.
                    out.append(b)
                    i += 1
                }
                continue
            }
            if b < 0x80 {
                if case .doubleByte = g0, b >= 0x21, b <= 0x7E {
                    if i + 1 < n, buffer[i + 1] >= 0x21, buffer[i + 1] <= 0x7E {
                        let index = Int(b - 0x21) * 94 + Int(buffer[i + 1] - 0x21)
                        appendUTF8(index < g0Table.count ? g0Table[index] : 0, to: &out)
                        i += 2
                    } else {
                        appendUTF8(0, to: &out)
                        i += 1
                    }
                    continue
                }
                if delimiters.contains(b) {
                    if g0 != config.initialG0 {
                        g0 = config.initialG0
                        g0Table = tableFor(g0)
                    }
                    if g1 != config.initialG1 {
                        g1 = config.initialG1
                        g1Table = g1.map(tableFor) ?? []
                    }
                    out.append(b)
                } else if g0 == .jisRoman && b == 0x5C {
                    appendUTF8(0xA5, to: &out)  // YEN SIGN
                } else if g0 == .jisRoman && b == 0x7E {
                    appendUTF8(0x203E, to: &out)  // OVERLINE
                } else {
                    out.append(b)
                }
                i += 1
                continue
            }
            switch g1 {
            case .upperHalf?:
                appendUTF8(g1Table.count == 128 ? g1Table[Int(b - 0x80)] : 0, to: &out)
                i += 1
            case .jisKatakana?:
                // JIS X 0201 Katakana: A1-DF are U+FF61-U+FF9F (half-width forms).
                appendUTF8(b >= 0xA1 && b <= 0xDF ? UInt32(b - 0xA1) + 0xFF61 : 0, to: &out)
                i += 1
            case .doubleByte?:
                if b >= 0xA1, b <= 0xFE, i + 1 < n, buffer[i + 1] >= 0xA1, buffer[i + 1] <= 0xFE {
                    let index = Int(b - 0xA1) * 94 + Int(buffer[i + 1] - 0xA1)
                    appendUTF8(index < g1Table.count ? g1Table[index] : 0, to: &out)
                    i += 2
                } else {
                    appendUTF8(0, to: &out)
                    i += 1
                }
            case .ascii?, .jisRoman?, nil:
                // No G1 set: Latin-1, so nothing is lost.
                appendUTF8(UInt32(b), to: &out)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func tableFor(_ set: GraphicSet) -> [UInt32] {
        switch set {
        case .upperHalf(let s): return s.table
        case .doubleByte(let s): return s.table
        case .ascii, .jisRoman, .jisKatakana: return []
        }
    }

    /// Appends a scalar as UTF-8; 0 (the tables' "unassigned"), surrogates and out-of-range values become U+FFFD.
    @inline(__always)
    static func appendUTF8(_ value: UInt32, to out: inout [UInt8]) {
        switch value {
        case 0x01..<0x80:
            out.append(UInt8(value))
        case 0x80..<0x800:
            out.append(0xC0 | UInt8(value >> 6))
            out.append(0x80 | UInt8(value & 0x3F))
        case 0x800..<0xD800, 0xE000..<0x10000:
            out.append(0xE0 | UInt8(value >> 12))
            out.append(0x80 | UInt8((value >> 6) & 0x3F))
            out.append(0x80 | UInt8(value & 0x3F))
        case 0x10000...0x10FFFF:
            out.append(0xF0 | UInt8(value >> 18))
            out.append(0x80 | UInt8((value >> 12) & 0x3F))
            out.append(0x80 | UInt8((value >> 6) & 0x3F))
            out.append(0x80 | UInt8(value & 0x3F))
        default:
            out.append(contentsOf: [0xEF, 0xBF, 0xBD])
        }
    }

    // MARK: Encoding

    /// Encodes a string for sending, e.g. as a query key. Returns nil if the string can't be represented.
    ///
    /// VRs outside PS3.5 §6.1.2.3 take ASCII only. With code extensions the encoder keeps to the sets in
    /// G0/G1 while it can, designates another set of the terms (in their order) when it must, and returns
    /// G0 to the set of value 1 before every delimiter and at the end of the value (PS3.5 §6.1.2.5.3);
    /// G1 is designated again after a delimiter, as in the examples of PS3.5 Annexes H to J.
    public func encode(_ string: String, vr: VR) -> [UInt8]? {
        let isASCII = string.utf8.allSatisfy { $0 < 0x80 }
        guard vr.usesSpecificCharacterSet else { return isASCII ? Array(string.utf8) : nil }
        switch scheme {
        case .utf8:
            return Array(string.utf8)
        case .gb18030, .gbk:
            if isASCII { return Array(string.utf8) }
            let pool = scheme == .gb18030 ? IconvPools.gb18030Encoder : IconvPools.gbkEncoder
            var utf8 = Array(string.utf8)
            let outcome = utf8.withUnsafeMutableBufferPointer {
                pool.convert(UnsafeBufferPointer($0), stopOnError: true)
            }
            guard case .converted(let bytes)? = outcome else { return nil }
            return bytes
        case .iso2022(let config):
            return SpecificCharacterSet.encodeISO2022(string, config: config, delimiters: CodeExtensionDelimiters(vr))
        }
    }

    static func encodeISO2022(
        _ string: String, config: CodeExtensionConfiguration, delimiters: CodeExtensionDelimiters
    ) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(string.utf8.count + 8)
        var g0 = config.initialG0
        var g1 = config.initialG1
        for scalar in string.unicodeScalars {
            let v = scalar.value
            if v < 0x80, delimiters.contains(UInt8(v)) {
                if g0 != config.initialG0 {
                    out += config.initialG0.escapeSequence
                    g0 = config.initialG0
                }
                g1 = config.initialG1
                out.append(UInt8(v))
                continue
            }
            if v == 0x1B { return nil }
            if v <= 0x20 || v == 0x7F {
                out.append(UInt8(v))
                continue
            }
            if let bytes = g0.encode(v) {
                out += bytes
                continue
            }
            if let g1, let bytes = g1.encode(v) {
                out += bytes
                continue
            }
            var found = false
            for set in config.candidates where set != g0 && set != g1 {
                guard let bytes = set.encode(v) else { continue }
                out += set.escapeSequence
                if set.isG0 { g0 = set } else { g1 = set }
                out += bytes
                found = true
                break
            }
            if !found { return nil }
        }
        if g0 != config.initialG0 { out += config.initialG0.escapeSequence }
        return out
    }
}

/// iconv descriptors for the multi-byte sets without code extensions (PS3.3 Table C.12-5).
enum IconvPools {
    static let gb18030Decoder = IconvPool(from: "GB18030", to: "UTF-8")
    static let gb18030Encoder = IconvPool(from: "UTF-8", to: "GB18030")
    static let gbkDecoder = IconvPool(from: "GBK", to: "UTF-8")
    static let gbkEncoder = IconvPool(from: "UTF-8", to: "GBK")
}
