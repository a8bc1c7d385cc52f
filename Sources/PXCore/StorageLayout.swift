import DICOMData

/// Where a received instance goes: pypx's tree under a root,
/// `<PatientID>-<PatientName>/<StudyDescription>-<StudyDate>-<StudyInstanceUID>/`
/// `<SeriesDescription>-<SeriesDate>-<SeriesInstanceUID>/<InstanceNumber, 5 digits>-<SOPInstanceUID>.dcm`.
///
/// Every value is sanitised so no received value can name a path outside the root: only letters,
/// digits, `.`, `-` and `_` survive (everything else, `/`, `\`, NUL and control characters
/// included, becomes `_`); a component never starts with `.`; an empty value becomes
/// ``placeholder``; a value longer than ``maximumFieldLength`` UTF-8 bytes is cut and ends in `~`
/// and eight hex digits of a hash of the whole value, so distinct long values stay distinct.
public struct StorageLayout: Hashable, Sendable {
    /// The text for an empty or missing value.
    public var placeholder: String
    /// The longest a single field may be, in UTF-8 bytes.
    public var maximumFieldLength: Int

    public init(placeholder: String = "unknown", maximumFieldLength: Int = 64) {
        self.placeholder = placeholder
        self.maximumFieldLength = max(16, maximumFieldLength)
    }

    /// The relative path components (patient, study, series, file) for a data set.
    public func components(for dataSet: DataSet) -> [String] {
        func field(_ tag: Tag) -> String { sanitise(dataSet.string(tag) ?? "") }
        let instanceNumber: String = {
            guard let text = dataSet.string(.instanceNumber)?.trimmingSpaces, let n = Int(text), n >= 0 else {
                return "00000"
            }
            let digits = String(n)
            return digits.count >= 5 ? digits : String(repeating: "0", count: 5 - digits.count) + digits
        }()
        return [
            join([field(.patientID), field(.patientName)]),
            join([field(.studyDescription), field(.studyDate), field(.studyInstanceUID)]),
            join([field(.seriesDescription), field(.seriesDate), field(.seriesInstanceUID)]),
            join([instanceNumber, field(.sopInstanceUID)]) + ".dcm",
        ]
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

    private func join(_ fields: [String]) -> String {
        var text = fields.joined(separator: "-")
        while text.hasPrefix(".") { text = "_" + text.dropFirst() }
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
