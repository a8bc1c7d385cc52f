extension DataElement {
    /// The text of a string value, decoded with a character set, all values together (backslashes kept).
    public func text(characterSet: SpecificCharacterSet) -> String {
        characterSet.decode(bytes, vr: vr)
    }

    /// The values of a string element, decoded and split on backslash (except for the single-valued
    /// VRs LT, ST, UT and UR), each without its insignificant padding (PS3.5 §6.2).
    ///
    /// An empty element gives no values; an empty value between backslashes gives an empty string.
    public func stringValues(characterSet: SpecificCharacterSet) -> [String] {
        let raw = bytes
        if raw.isEmpty { return [] }
        if !vr.isSingleValued && characterSet.byte5CIsAlwaysBackslash(vr: vr) {
            // Split and trim the bytes, then decode each value: no String is split by Character.
            return raw.withUnsafeBufferPointer { buffer in
                var values: [String] = []
                var start = 0
                for i in 0...buffer.count where i == buffer.count || buffer[i] == 0x5C {
                    var lower = start
                    var upper = i
                    while upper > lower && (buffer[upper - 1] == 0x20 || buffer[upper - 1] == 0x00) { upper -= 1 }
                    while lower < upper && buffer[lower] == 0x20 { lower += 1 }
                    values.append(
                        characterSet.decode(buffer: UnsafeBufferPointer(rebasing: buffer[lower..<upper]), vr: vr))
                    start = i + 1
                }
                return values
            }
        }
        let decoded = characterSet.decode(raw, vr: vr)
        if vr.isSingleValued {
            return [Self.trim(Substring(decoded), vr: vr)]
        }
        return decoded.split(separator: "\\", omittingEmptySubsequences: false).map { Self.trim($0, vr: vr) }
    }

    /// Removes padding: trailing spaces (and NUL for UI) for every string VR, and leading spaces too
    /// except for LT, ST, UT and UR, where leading spaces are significant (PS3.5 Table 6.2-1).
    static func trim(_ value: Substring, vr: VR) -> String {
        var s = value
        while let c = s.last, c == " " || c == "\0" { s.removeLast() }
        if !vr.isSingleValued {
            while let c = s.first, c == " " { s.removeFirst() }
        }
        return String(s)
    }

    /// The values of a binary numeric element (US, SS, UL, SL, UV, SV, FL, FD, and the O* VRs), as integers
    /// or floating-point numbers converted to `Double`.
    public var numericValues: [Double] {
        switch vr {
        case .FL, .OF: return floats(Float.self).map(Double.init)
        case .FD, .OD: return floats(Double.self)
        default: return integerValues.map(Double.init)
        }
    }

    /// The values of an integer element: US, SS, UL, SL, UV (as its bit pattern), SV, OW, OL, OV; IS parsed
    /// from text.
    public var integerValues: [Int] {
        switch vr {
        case .US, .OW: return integers(UInt16.self).map(Int.init)
        case .SS: return integers(Int16.self).map(Int.init)
        case .UL, .OL: return integers(UInt32.self).map(Int.init)
        case .SL: return integers(Int32.self).map(Int.init)
        case .SV: return integers(Int64.self).map(Int.init)
        case .UV, .OV: return integers(UInt64.self).map { Int(truncatingIfNeeded: $0) }
        case .IS:
            return stringValues(characterSet: .defaultRepertoire).compactMap {
                Int($0.hasPrefix("+") ? String($0.dropFirst()) : $0)
            }
        default: return []
        }
    }

    /// The unsigned 64-bit values of a UV element.
    public var unsignedValues: [UInt64] { integers(UInt64.self) }

    /// Attribute tags of an AT element (PS3.5 §6.2: pairs of 16-bit group and element numbers).
    public var tagValues: [Tag] {
        let words = integers(UInt16.self)
        return stride(from: 0, to: words.count - 1, by: 2).map { Tag(words[$0], words[$0 + 1]) }
    }

    func integers<T: FixedWidthInteger>(_: T.Type) -> [T] {
        let size = MemoryLayout<T>.size
        let raw = bytes
        let count = raw.count / size
        guard count > 0 else { return [] }
        return raw.withUnsafeBytes { buffer in
            (0..<count).map { T(littleEndian: buffer.loadUnaligned(fromByteOffset: $0 * size, as: T.self)) }
        }
    }

    func floats<T: BinaryFloatingPoint>(_: T.Type) -> [T] {
        let size = MemoryLayout<T>.size
        let raw = bytes
        let count = raw.count / size
        guard count > 0 else { return [] }
        return raw.withUnsafeBytes { buffer in
            (0..<count).map { i in
                if size == 4 {
                    return T(
                        Float(
                            bitPattern: UInt32(
                                littleEndian: buffer.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))))
                }
                return T(
                    Double(
                        bitPattern: UInt64(littleEndian: buffer.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))))
            }
        }
    }
}
