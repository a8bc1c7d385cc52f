import DICOMData

/// Where a received instance goes: by default pypx's tree under a root,
/// `<PatientID>-<PatientName>/<StudyDescription>-<StudyDate>-<StudyInstanceUID>/`
/// `<SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/<InstanceNumber, 5 digits>-<SOPInstanceUID>.dcm`,
/// or any ``template`` of `{Keyword}` fields (px-listen `--layout`).
///
/// Every value is made safe so no received value can name a path outside the root; a component never
/// starts with `.`; an empty value becomes ``placeholder``:
/// - a UID field (VR UI: `{SOPInstanceUID}`, `{StudyInstanceUID}`, ...) is encoded injectively, so
///   distinct UIDs always give distinct names: a valid UID (digits and dots, PS3.5 §9.1) is kept as it
///   is; in anything else each byte other than ASCII letters, digits, `.` and `-` becomes `_` and two
///   upper-case hex digits (`1.2.3.4+5` is `1.2.3.4_2B5`, `1.2.3.4/5` is `1.2.3.4_2F5`), as does a
///   leading `.`;
/// - any other field keeps letters and digits (of any script), `.`, `-` and `_`; everything else,
///   `/`, `\`, NUL and control characters included, becomes `_` (pypx's names: `Doe^John` is
///   `Doe_John`);
/// - a value longer than ``maximumFieldLength`` UTF-8 bytes (after that) is cut and ends in `~` and 32
///   hex digits (128 bits) of the SHA-256 of the whole value, so distinct long values stay distinct
///   unless someone finds a SHA-256 collision.
///
/// The template is checked once, when it is parsed: literal text, and that no folder or file name can
/// exceed ``nameMaximum`` bytes whatever the values.
public struct StorageLayout: Hashable, Sendable {
    /// pypx's tree.
    public static let pypxTemplate =
        "{PatientID}-{PatientName}/{StudyDescription}-{StudyDate}-{StudyInstanceUID}/"
        + "{SeriesDescription}-{SeriesDate}-{SeriesInstanceUID}/{InstanceNumber}-{SOPInstanceUID}.dcm"

    /// One piece of a path component: literal text or a data element's value.
    enum Piece: Hashable, Sendable {
        case literal(String)
        case field(Tag, Field)
    }

    /// How a field's value becomes text.
    enum Field: Hashable, Sendable {
        /// InstanceNumber: zero-padded to 5 digits.
        case instanceNumber
        /// A UID (VR UI): encoded injectively.
        case uid
        /// Anything else: pypx's sanitised text.
        case text
    }

    /// The longest file or folder name (NAME_MAX of Linux file systems), in bytes.
    public static let nameMaximum = 255
    /// The most an InstanceNumber can add: an Int's digits.
    static let instanceNumberMaximum = String(Int.max).utf8.count
    /// What a duplicate or colliding file's alternative name adds at most (`-100000`).
    static let alternativeSuffixMaximum = "-\(InstancePlacer.maximumAlternativeNames)".utf8.count
    /// The shortest ``maximumFieldLength``: room for a cut value, `~` and the hash.
    static let minimumFieldLength = 40

    /// The text for an empty or missing value.
    public var placeholder: String
    /// The longest a single field may be, in UTF-8 bytes.
    public var maximumFieldLength: Int
    /// The template this layout was made from.
    public let template: String
    /// The parsed template: one entry per path component; the last is the file name.
    let parsed: [[Piece]]

    /// The pypx layout.
    public init(placeholder: String = "unknown", maximumFieldLength: Int = 64) {
        self.placeholder = placeholder
        self.maximumFieldLength = max(Self.minimumFieldLength, maximumFieldLength)
        self.template = Self.pypxTemplate
        // The built-in template is valid (a test parses it).
        self.parsed = (try? Self.parse(Self.pypxTemplate)) ?? []
    }

    /// A layout from a template such as `{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm`: components
    /// separated by `/`, each literal text and `{Keyword}` fields (DICOM keywords from the data dictionary;
    /// `{InstanceNumber}` is zero-padded to 5 digits). The last component names the file.
    ///
    /// - Throws: ``StorageError/Code/layout`` for a template that starts with `/` (it is relative to
    ///   the root), an unknown keyword, an unclosed `{`, an empty, `.` or `..` component, a component
    ///   with no field and a leading `.`, a NUL or `\` in literal text, or a folder or file name that
    ///   could be longer than ``nameMaximum`` bytes.
    public init(template: String, placeholder: String = "unknown", maximumFieldLength: Int = 64) throws(StorageError) {
        self.placeholder = placeholder
        self.maximumFieldLength = max(Self.minimumFieldLength, maximumFieldLength)
        self.template = template
        self.parsed = try Self.parse(template)
        try checkNameLengths()
    }

    /// Refuses a template one of whose names can exceed ``nameMaximum`` bytes for some values: each
    /// field counts at its longest (``maximumFieldLength``, or the ``placeholder`` if longer; an
    /// InstanceNumber its digits), the file name also the `-N` of an alternative name.
    func checkNameLengths() throws(StorageError) {
        let field = max(maximumFieldLength, placeholder.utf8.count)
        for (index, pieces) in parsed.enumerated() {
            var longest = index == parsed.count - 1 ? Self.alternativeSuffixMaximum : 0
            var fields = 0
            for piece in pieces {
                switch piece {
                case .literal(let literal): longest += literal.utf8.count
                case .field(_, .instanceNumber): longest += max(Self.instanceNumberMaximum, placeholder.utf8.count)
                case .field:
                    longest += field
                    fields += 1
                }
            }
            guard longest <= Self.nameMaximum else {
                let component = Substring(
                    template.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false)[index])
                throw .layout(
                    "--layout: \"\(component)\" can make a name of \(longest) bytes (\(fields) fields of up to \(field) bytes each"
                        + (index == parsed.count - 1 ? ", and -N for a duplicate" : "")
                        + "), more than the \(Self.nameMaximum) a file system allows: split it into folders")
            }
        }
    }

    static func parse(_ template: String) throws(StorageError) -> [[Piece]] {
        guard !template.hasPrefix("/") else {
            throw .layout("--layout is relative to the storage root and may not start with /: \"\(template)\"")
        }
        let text = Substring(template)
        guard !text.isEmpty else { throw .layout("empty --layout template") }
        var components: [[Piece]] = []
        // Split on the "/" scalar: as Characters, "/" and a following combining mark (U+0747) are one
        // Character, and the "/" stayed inside a component (found by fuzz-layout).
        for scalars in text.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false) {
            let component = Substring(scalars)
            guard !component.isEmpty, component != ".", component != ".." else {
                throw .layout("--layout: empty, . or .. component in \"\(template)\"")
            }
            var pieces: [Piece] = []
            var rest = component
            while !rest.isEmpty {
                if rest.first == "{" {
                    guard let close = rest.firstIndex(of: "}") else {
                        throw .layout("--layout: unclosed { in \"\(template)\"")
                    }
                    let keyword = String(rest[rest.index(after: rest.startIndex)..<close])
                    guard let entry = DataDictionary.entry(forKeyword: keyword) else {
                        throw .layout("--layout: unknown DICOM keyword {\(keyword)}")
                    }
                    let field: Field = entry.tag == .instanceNumber ? .instanceNumber : entry.vr == .UI ? .uid : .text
                    pieces.append(.field(entry.tag, field))
                    rest = rest[rest.index(after: close)...]
                } else {
                    let end = rest.firstIndex(of: "{") ?? rest.endIndex
                    let literal = String(rest[..<end])
                    guard !literal.contains("\0"), !literal.contains("\\"),
                        literal.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
                    else { throw .layout("--layout: control character, NUL or \\ in \"\(template)\"") }
                    pieces.append(.literal(literal))
                    rest = rest[end...]
                }
            }
            if case .literal(let first)? = pieces.first, first.hasPrefix(".") {
                throw .layout("--layout: a component may not start with . in \"\(template)\"")
            }
            components.append(pieces)
        }
        return components
    }

    /// The relative path components (for the pypx layout: patient, study, series, file) for a data set.
    public func components(for dataSet: DataSet) -> [String] {
        parsed.map { pieces in
            var text = ""
            for piece in pieces {
                switch piece {
                case .literal(let literal): text += literal
                case .field(let tag, let field): text += value(tag, field, in: dataSet)
                }
            }
            // By scalar: ".\u{0651}" is one Character, not ".", yet its first byte is a dot.
            while text.unicodeScalars.first == "." { text = "_" + String(text.unicodeScalars.dropFirst()) }
            return text
        }
    }

    /// One field's text.
    private func value(_ tag: Tag, _ field: Field, in dataSet: DataSet) -> String {
        switch field {
        case .instanceNumber:
            guard let text = dataSet.string(.instanceNumber)?.trimmingSpaces, let n = Int(text), n >= 0 else {
                return "00000"
            }
            let digits = String(n)
            return digits.count >= 5 ? digits : String(repeating: "0", count: 5 - digits.count) + digits
        case .uid:
            return encodeUID(dataSet.uid(tag) ?? [])
        case .text:
            return sanitise(dataSet.string(tag) ?? "")
        }
    }

    /// A UID made safe for a path component, injectively: distinct values give distinct names (up to
    /// a SHA-256 collision for values longer than ``maximumFieldLength``).
    ///
    /// DICOM padding (trailing NUL or spaces) is not part of a UID (PS3.5 §9.1) and is dropped. A valid
    /// UID, digits and dots, is unchanged. In any other value a byte that is not an ASCII letter,
    /// digit, `.` or `-` becomes `_XX` (its upper-case hex; `_` itself included), so the text decodes
    /// back to exactly one value; so does a leading `.` and the first byte of a value whose encoding
    /// would equal the ``placeholder`` that stands for an empty one.
    public func encodeUID(_ value: String) -> String {
        encodeUID(DataSet.trimmingUIDPadding(value.utf8))
    }

    /// ``encodeUID(_:)-(String)`` of a value's bytes, as stored (``DataSet/uid(_:)``).
    func encodeUID(_ bytes: [UInt8]) -> String {
        if bytes.isEmpty { return placeholder }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        func escape(_ byte: UInt8) {
            let digits = Array("0123456789ABCDEF".utf8)
            out += [UInt8(ascii: "_"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
        }
        for (index, byte) in bytes.enumerated() {
            switch byte {
            case UInt8(ascii: "."): if index == 0 { escape(byte) } else { out.append(byte) }
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "-"):
                out.append(byte)
            default: escape(byte)
            }
        }
        var text = String(decoding: out, as: UTF8.self)
        if text == placeholder {
            out.removeAll(keepingCapacity: true)
            escape(bytes[0])
            text = String(decoding: out, as: UTF8.self) + text.dropFirst()
        }
        return shortened(text, of: bytes)
    }

    /// One value made safe for a path component, pypx's way (not injective: `Doe^John` and `Doe John`
    /// are both `Doe_John`; only UIDs need to be told apart, ``encodeUID(_:)``).
    public func sanitise(_ value: String) -> String {
        let trimmed = value.trimmingSpaces
        if trimmed.isEmpty { return placeholder }
        var out = String.UnicodeScalarView()
        for scalar in trimmed.unicodeScalars {
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "-", "_":
                out.append(scalar)
            default:
                // Letters and digits of other scripts are kept (山田 stays readable); anything
                // else, separators, controls, NUL and punctuation, becomes "_".
                if scalar.value >= 0x80, scalar.properties.isAlphabetic || scalar.properties.numericType != nil {
                    out.append(scalar)
                } else {
                    out.append("_")
                }
            }
        }
        var text = String(out)
        while text.unicodeScalars.first == "." { text = "_" + String(text.unicodeScalars.dropFirst()) }
        return shortened(text, of: Array(trimmed.utf8))
    }

    /// `text`, or when longer than ``maximumFieldLength`` bytes its start, `~` and 32 hex digits
    /// (128 bits) of the SHA-256 of `original` (the whole value). `~` appears in no other output.
    private func shortened(_ text: String, of original: [UInt8]) -> String {
        guard text.utf8.count > maximumFieldLength else { return text }
        let hash = SHA256.hex(original, bytes: 16)
        var cut = ""
        for character in text {
            if cut.utf8.count + character.utf8.count > maximumFieldLength - 1 - hash.utf8.count { break }
            cut.append(character)
        }
        return cut + "~" + hash
    }
}

extension String {
    /// The string without leading and trailing spaces and NULs (DICOM padding).
    package var trimmingSpaces: String {
        var scalars = Substring(self)
        while let f = scalars.first, f == " " || f == "\0" { scalars = scalars.dropFirst() }
        while let l = scalars.last, l == " " || l == "\0" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
