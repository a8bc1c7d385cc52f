/// The character repertoires of Specific Character Set (0008,0005) and the decoding and encoding of
/// text values through them (PS3.5 §6.1; PS3.3 §C.12.1.1.2, Tables C.12-2 to C.12-5).
///
/// Three schemes exist:
/// - a single-byte set without code extensions (PS3.3 Table C.12-2): G0 is ASCII (JIS X 0201 Romaji for
///   `ISO_IR 13`) and G1 the upper half of the named set; escape sequences are ordinary bytes;
/// - ISO 2022 code extensions (PS3.5 §6.1.2.5, Tables C.12-3/C.12-4): more than one value, or a value with
///   the `ISO 2022` prefix; escape sequences designate new sets to G0 or G1, and the sets of value 1
///   come back at the delimiters of PS3.5 §6.1.2.5.3;
/// - a multi-byte set without code extensions (Table C.12-5): `ISO_IR 192` (UTF-8), `GB18030`, `GBK`,
///   decoded as a whole.
///
/// Only the VRs of PS3.5 §6.1.2.3 (SH, LO, ST, LT, PN, UC, UT; ``VR/usesSpecificCharacterSet``) are
/// affected; the others use the default repertoire.
public struct SpecificCharacterSet: Sendable, Hashable {
    /// The values of (0008,0005), trimmed of leading and trailing spaces.
    public let terms: [String]
    /// The terms this implementation cannot decode; their bytes fall back to ASCII with Latin-1 for bytes above 7F.
    public let unknownTerms: [String]
    let scheme: Scheme

    enum Scheme: Hashable, Sendable {
        case iso2022(CodeExtensionConfiguration)
        case utf8
        case gb18030
        case gbk
    }

    /// The state an ISO 2022 value starts in, and what it may switch to.
    struct CodeExtensionConfiguration: Hashable, Sendable {
        /// G0 at the start of the value and after each delimiter: ASCII, or JIS X 0201 Romaji for ISO-IR 13.
        var initialG0: GraphicSet
        /// G1 at the start of the value and after each delimiter; nil when value 1 designates none.
        var initialG1: GraphicSet?
        /// Whether escape sequences are interpreted (PS3.5 §6.1.2.5); false for a single Table C.12-2 term.
        var allowsEscapes: Bool
        /// Sets the encoder may designate, in the order of the terms.
        var candidates: [GraphicSet]
    }

    /// The default repertoire, ISO-IR 6 (PS3.5 §6.1.2.1): no (0008,0005) or an empty one.
    public static let defaultRepertoire = SpecificCharacterSet(terms: [])

    /// From the values of (0008,0005), e.g. `[]`, `["ISO_IR 100"]`, `["ISO_IR 192"]`, `["", "ISO 2022 IR 87"]`
    /// or `["ISO 2022 IR 6", "ISO 2022 IR 87", "ISO 2022 IR 159"]`.
    ///
    /// Values are trimmed of spaces (and NUL padding). Unknown terms are kept in ``terms`` and listed in
    /// ``unknownTerms``; decoding then falls back without failing.
    public init(terms: [String]) {
        let trimmed = terms.map(SpecificCharacterSet.trim)
        var lastNonEmpty = trimmed.count
        while lastNonEmpty > 1 && trimmed[lastNonEmpty - 1].isEmpty { lastNonEmpty -= 1 }
        self.terms = trimmed.allSatisfy(\.isEmpty) ? [] : Array(trimmed[..<lastNonEmpty])
        let parsed = self.terms.map(SpecificCharacterSet.parse)
        var unknown: [String] = []
        for (term, kind) in zip(self.terms, parsed) where kind == nil && !term.isEmpty {
            unknown.append(term)
        }
        self.unknownTerms = unknown

        switch parsed.first ?? nil {
        case .utf8?: scheme = .utf8
        case .gb18030?: scheme = .gb18030
        case .gbk?: scheme = .gbk
        default:
            var initialG0 = GraphicSet.ascii
            var initialG1: GraphicSet?
            if case .graphic(let g0, let g1, _)? = parsed.first ?? nil {
                if let g0, g0 == .ascii || g0 == .jisRoman { initialG0 = g0 }
                initialG1 = g1
            }
            var extensions = self.terms.count > 1
            if case .graphic(_, _, true)? = parsed.first ?? nil { extensions = true }
            var candidates: [GraphicSet] = []
            if extensions {
                for case .graphic(let g0, let g1, _)? in parsed {
                    for set in [g0, g1].compactMap({ $0 }) where !candidates.contains(set) {
                        candidates.append(set)
                    }
                }
                if !candidates.contains(.ascii) { candidates.append(.ascii) }
            }
            scheme = .iso2022(
                CodeExtensionConfiguration(
                    initialG0: initialG0, initialG1: initialG1, allowsEscapes: extensions, candidates: candidates))
        }
    }

    /// From the whole (0008,0005) value string, values separated by backslashes.
    public init(attributeValue: String) {
        self.init(terms: attributeValue.split(separator: "\\", omittingEmptySubsequences: false).map(String.init))
    }

    /// Whether the value uses ISO 2022 code extensions (escape sequences, PS3.5 §6.1.2.5).
    public var usesCodeExtensions: Bool {
        if case .iso2022(let config) = scheme { return config.allowsEscapes }
        return false
    }

    // MARK: Defined terms

    enum TermKind: Equatable {
        /// A set of Table C.12-2/3/4: what it puts in G0 and G1, and whether it carries the `ISO 2022` prefix.
        case graphic(g0: GraphicSet?, g1: GraphicSet?, codeExtensions: Bool)
        case utf8
        case gb18030
        case gbk
    }

    static func trim(_ s: String) -> String {
        let scalars = s.unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\0" }),
            let last = scalars.lastIndex(where: { $0 != " " && $0 != "\0" })
        else { return "" }
        return String(scalars[first...last])
    }

    /// Maps a defined term of PS3.3 Tables C.12-2 to C.12-5. Also accepts the common misspellings
    /// `ISO IR nnn`, `ISO-IR nnn` and `ISO_IRnnn` for the single-byte terms.
    static func parse(_ term: String) -> TermKind? {
        switch term {
        case "": return .graphic(g0: .ascii, g1: nil, codeExtensions: false)
        case "ISO_IR 192": return .utf8
        case "GB18030": return .gb18030
        case "GBK": return .gbk
        default: break
        }
        let codeExtensions: Bool
        let number: Substring
        if term.hasPrefix("ISO 2022 IR ") {
            codeExtensions = true
            number = term.dropFirst("ISO 2022 IR ".count)
        } else if let prefix = ["ISO_IR ", "ISO IR ", "ISO-IR ", "ISO_IR", "ISO-IR"].first(where: term.hasPrefix) {
            codeExtensions = false
            number = term.dropFirst(prefix.count)
        } else {
            return nil
        }
        func single(_ set: UpperHalfSet) -> TermKind {
            .graphic(g0: .ascii, g1: .upperHalf(set), codeExtensions: codeExtensions)
        }
        switch number {
        case "6": return .graphic(g0: .ascii, g1: nil, codeExtensions: codeExtensions)
        case "100": return single(.latin1)
        case "101": return single(.latin2)
        case "109": return single(.latin3)
        case "110": return single(.latin4)
        case "144": return single(.cyrillic)
        case "127": return single(.arabic)
        case "126": return single(.greek)
        case "138": return single(.hebrew)
        case "148": return single(.latin5)
        case "203": return single(.latin9)
        case "166": return single(.thai)
        case "13": return .graphic(g0: .jisRoman, g1: .jisKatakana, codeExtensions: codeExtensions)
        // Table C.12-4 sets exist only with the ISO 2022 prefix.
        case "87" where codeExtensions: return .graphic(g0: .doubleByte(.jisX0208), g1: nil, codeExtensions: true)
        case "159" where codeExtensions: return .graphic(g0: .doubleByte(.jisX0212), g1: nil, codeExtensions: true)
        case "149" where codeExtensions: return .graphic(g0: nil, g1: .doubleByte(.ksX1001), codeExtensions: true)
        case "58" where codeExtensions: return .graphic(g0: nil, g1: .doubleByte(.gb2312), codeExtensions: true)
        default: return nil
        }
    }
}

// MARK: - Delimiters

/// The bytes at which ISO 2022 decoding returns to the sets of value 1 (PS3.5 §6.1.2.5.3):
/// CR, LF, FF and TAB for all text; the value separator for multi-valued VRs; `^` and `=` for PN.
struct CodeExtensionDelimiters {
    let backslash: Bool
    let personName: Bool

    init(_ vr: VR) {
        backslash = !vr.isSingleValued
        personName = vr == .PN
    }

    @inline(__always)
    func contains(_ b: UInt8) -> Bool {
        switch b {
        case 0x09, 0x0A, 0x0C, 0x0D: return true
        case 0x5C: return backslash
        case 0x3D, 0x5E: return personName
        default: return false
        }
    }
}
