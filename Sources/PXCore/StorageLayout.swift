import DICOMData

/// Where a received instance goes: by default pypx's tree under a root,
/// `<PatientID>-<PatientName>/<StudyDescription>-<StudyDate>-<StudyInstanceUID>/`
/// `<SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/<InstanceNumber, 5 digits>-<SOPInstanceUID>.dcm`,
/// or any ``template`` of `{Keyword}` fields (px-listen `--layout`).
///
/// Every value is sanitised so no received value can name a path outside the root: only letters,
/// digits, `.`, `-` and `_` survive (everything else, `/`, `\`, NUL and control characters
/// included, becomes `_`); a component never starts with `.`; an empty value becomes
/// ``placeholder``; a value longer than ``maximumFieldLength`` UTF-8 bytes is cut and ends in `~`
/// and eight hex digits of a hash of the whole value, so distinct long values stay distinct.
/// The literal text of a template is checked once, when it is parsed.
public struct StorageLayout: Hashable, Sendable {
    /// pypx's tree.
    public static let pypxTemplate =
        "{PatientID}-{PatientName}/{StudyDescription}-{StudyDate}-{StudyInstanceUID}/"
        + "{SeriesDescription}-{SeriesDate}-{SeriesInstanceUID}/{InstanceNumber}-{SOPInstanceUID}.dcm"

    /// One piece of a path component: literal text or a data element's value.
    enum Piece: Hashable, Sendable {
        case literal(String)
        case field(Tag)
    }

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
        self.maximumFieldLength = max(16, maximumFieldLength)
        self.template = Self.pypxTemplate
        // The built-in template is valid.
        self.parsed = (try? Self.parse(Self.pypxTemplate)) ?? []
    }

    /// A layout from a template such as `{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm`: components
    /// separated by `/`, each literal text and `{Keyword}` fields (DICOM keywords from the data dictionary;
    /// `{InstanceNumber}` is zero-padded to 5 digits). The last component names the file.
    ///
    /// - Throws: ``PXError/usage(_:)`` for an unknown keyword, an unclosed `{`, an empty, `.` or `..`
    ///   component, a component with no field and a leading `.`, or a NUL or `\` in literal text.
    public init(template: String, placeholder: String = "unknown", maximumFieldLength: Int = 64) throws(PXError) {
        self.placeholder = placeholder
        self.maximumFieldLength = max(16, maximumFieldLength)
        self.template = template
        self.parsed = try Self.parse(template)
    }

    static func parse(_ template: String) throws(PXError) -> [[Piece]] {
        var text = Substring(template)
        while text.hasPrefix("/") { text = text.dropFirst() }
        guard !text.isEmpty else { throw .usage("empty --layout template") }
        var components: [[Piece]] = []
        for component in text.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty, component != ".", component != ".." else {
                throw .usage("--layout: empty, . or .. component in \"\(template)\"")
            }
            var pieces: [Piece] = []
            var rest = component
            while !rest.isEmpty {
                if rest.first == "{" {
                    guard let close = rest.firstIndex(of: "}") else { throw .usage("--layout: unclosed { in \"\(template)\"") }
                    let keyword = String(rest[rest.index(after: rest.startIndex)..<close])
                    guard let tag = DataDictionary.tag(forKeyword: keyword) else {
                        throw .usage("--layout: unknown DICOM keyword {\(keyword)}")
                    }
                    pieces.append(.field(tag))
                    rest = rest[rest.index(after: close)...]
                } else {
                    let end = rest.firstIndex(of: "{") ?? rest.endIndex
                    let literal = String(rest[..<end])
                    guard !literal.contains("\0"), !literal.contains("\\"),
                        literal.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
                    else { throw .usage("--layout: control character, NUL or \\ in \"\(template)\"") }
                    pieces.append(.literal(literal))
                    rest = rest[end...]
                }
            }
            if case .literal(let first)? = pieces.first, first.hasPrefix(".") {
                throw .usage("--layout: a component may not start with . in \"\(template)\"")
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
                case .field(let tag): text += value(tag, in: dataSet)
                }
            }
            while text.hasPrefix(".") { text = "_" + text.dropFirst() }
            return text
        }
    }

    /// One field's sanitised text; InstanceNumber is zero-padded to 5 digits.
    private func value(_ tag: Tag, in dataSet: DataSet) -> String {
        if tag == .instanceNumber {
            guard let text = dataSet.string(.instanceNumber)?.trimmingSpaces, let n = Int(text), n >= 0 else {
                return "00000"
            }
            let digits = String(n)
            return digits.count >= 5 ? digits : String(repeating: "0", count: 5 - digits.count) + digits
        }
        return sanitise(dataSet.string(tag) ?? "")
    }

    /// The full path under `root` for a data set.
    /// - Throws: ``PXError/io(_:path:)`` if the result would not lie inside `root` (it cannot, by
    ///   construction; this is the second line of defence).
    public func path(for dataSet: DataSet, root: String) throws(PXError) -> String {
        let parts = components(for: dataSet)
        let base = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        let path = ([base] + parts).joined(separator: "/")
        guard StorageLayout.isInside(path, root: base) else { throw .io("refusing a path outside the root", path: path) }
        return path
    }

    /// Whether `path` lies strictly inside `root`, lexically: it starts with `root/` and no
    /// component after that is empty, `.` or `..` or holds a NUL.
    public static func isInside(_ path: String, root: String) -> Bool {
        let base = root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
        guard path.hasPrefix(base + "/") else { return false }
        let rest = path.dropFirst(base.count + 1)
        let parts = rest.split(separator: "/", omittingEmptySubsequences: false)
        guard !parts.isEmpty else { return false }
        for part in parts {
            if part.isEmpty || part == "." || part == ".." || part.contains("\0") { return false }
        }
        return true
    }

    /// One value made safe for a path component.
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
        while text.hasPrefix(".") { text = "_" + text.dropFirst() }
        if text.utf8.count > maximumFieldLength {
            let hash = StorageLayout.fnv1a(Array(trimmed.utf8))
            var cut = ""
            for character in text {
                if cut.utf8.count + character.utf8.count > maximumFieldLength - 9 { break }
                cut.append(character)
            }
            text = cut + "~" + hash
        }
        return text
    }

    /// FNV-1a, 32 bits, as eight hex digits.
    static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt32 = 0x811C_9DC5
        for b in bytes {
            hash ^= UInt32(b)
            hash = hash &* 0x0100_0193
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}

extension String {
    /// The string without leading and trailing spaces and NULs (DICOM padding).
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let f = scalars.first, f == " " || f == "\0" { scalars = scalars.dropFirst() }
        while let l = scalars.last, l == " " || l == "\0" { scalars = scalars.dropLast() }
        return String(scalars)
    }
}
