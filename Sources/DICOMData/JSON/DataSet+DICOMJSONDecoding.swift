extension DataSet {
    /// Builds a data set from the DICOM JSON Model (PS3.18 §F.2), the inverse of ``dicomJSON()``.
    ///
    /// Text is encoded as UTF-8 and (0008,0005) set to `ISO_IR 192` when any value is not ASCII.
    /// BulkDataURI values cannot be fetched here and are an error.
    /// - Throws: ``DICOMDataError`` with code ``DICOMDataError/Code/invalidJSON``.
    public init(dicomJSON json: JSONValue) throws(DICOMDataError) {
        self = try Self.decodeDICOMJSON(json, depth: 0)
    }

    /// Parses JSON text in the DICOM JSON Model; a top-level array of one data set is accepted too.
    public init(dicomJSONText text: String) throws(DICOMDataError) {
        var json = try JSONParser.parse(text)
        if case .array(let sets) = json, sets.count == 1 { json = sets[0] }
        try self.init(dicomJSON: json)
    }

    private static func decodeDICOMJSON(_ json: JSONValue, depth: Int) throws(DICOMDataError) -> DataSet {
        guard depth < 64 else { throw .invalidJSON("sequences nested deeper than 64 levels") }
        guard case .object(let members) = json else { throw .invalidJSON("a data set must be an object") }
        var elements: [DataElement] = []
        var needsUTF8 = false
        for member in members {
            guard let tag = Tag(parsing: member.key) else { throw .invalidJSON("'\(member.key)' is not a tag") }
            guard let vrText = member.value["vr"]?.stringValue, let vr = VR(rawValue: vrText) else {
                throw .invalidJSON("attribute \(member.key) has no valid vr")
            }
            if member.value["BulkDataURI"] != nil {
                throw .invalidJSON("attribute \(member.key) refers to bulk data by URI, which px cannot fetch")
            }
            if let inline = member.value["InlineBinary"] {
                guard let text = inline.stringValue, let bytes = Base64.decode(text) else {
                    throw .invalidJSON("attribute \(member.key) has invalid InlineBinary")
                }
                elements.append(DataElement(tag: tag, vr: vr, bytes: bytes))
                continue
            }
            let values = member.value["Value"]?.arrayValue ?? []
            if vr == .SQ {
                var items: [Item] = []
                for value in values {
                    items.append(Item(dataSet: try decodeDICOMJSON(value, depth: depth + 1), hasUndefinedLength: true))
                }
                elements.append(DataElement(tag: tag, vr: .SQ, value: .sequence(items), hasUndefinedLength: true))
                continue
            }
            let (bytes, nonASCII) = try encodeValues(values, vr: vr, key: member.key)
            needsUTF8 = needsUTF8 || nonASCII
            elements.append(DataElement(tag: tag, vr: vr, bytes: bytes))
        }
        var set = DataSet(elements)
        if needsUTF8 {
            set.set(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: Array("ISO_IR 192".utf8)))
        }
        return set
    }

    private static func encodeValues(_ values: [JSONValue], vr: VR, key: String) throws(DICOMDataError) -> (
        [UInt8], Bool
    ) {
        var out: [UInt8] = []
        func number(_ v: JSONValue) throws(DICOMDataError) -> Double {
            switch v {
            case .number(let text): if let d = Double(text) { return d }
            case .string(let text): if let d = Double(text) { return d }
            default: break
            }
            throw .invalidJSON("attribute \(key) (\(vr.rawValue)) has a value that is not a number")
        }
        func append<T: FixedWidthInteger>(_ v: T) {
            withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
        }
        /// A number as an integer of type `T`, truncated toward zero; one that `T` cannot hold (1e300, NaN, a
        /// negative UV) is an error, not a trap.
        func integer<T: FixedWidthInteger>(_ v: JSONValue, as type: T.Type) throws(DICOMDataError) -> T {
            guard let value = T(exactly: try number(v).rounded(.towardZero)) else {
                throw .invalidJSON("attribute \(key) (\(vr.rawValue)) has a value out of range")
            }
            return value
        }
        switch vr {
        case .US: for v in values { append(UInt16(truncatingIfNeeded: try integer(v, as: Int.self))) }
        case .SS: for v in values { append(Int16(truncatingIfNeeded: try integer(v, as: Int.self))) }
        case .UL: for v in values { append(UInt32(truncatingIfNeeded: try integer(v, as: Int.self))) }
        case .SL: for v in values { append(Int32(truncatingIfNeeded: try integer(v, as: Int.self))) }
        case .SV: for v in values { append(try integer(v, as: Int64.self)) }
        case .UV: for v in values { append(try integer(v, as: UInt64.self)) }
        case .FL: for v in values { append(Float(try number(v)).bitPattern) }
        case .FD: for v in values { append(try number(v).bitPattern) }
        case .AT:
            for v in values {
                guard let text = v.stringValue, let t = Tag(parsing: text) else {
                    throw .invalidJSON("attribute \(key) (AT) has a value that is not a tag")
                }
                append(t.group)
                append(t.element)
            }
        case .OB, .OD, .OF, .OL, .OV, .OW, .UN, .SQ:
            if !values.isEmpty { throw .invalidJSON("attribute \(key) (\(vr.rawValue)) needs InlineBinary") }
        default:
            var texts: [String] = []
            for v in values {
                switch v {
                case .null: texts.append("")
                case .string(let s): texts.append(s)
                case .number(let n): texts.append(n)
                case .object where vr == .PN:
                    var groups = [
                        v["Alphabetic"]?.stringValue ?? "", v["Ideographic"]?.stringValue ?? "",
                        v["Phonetic"]?.stringValue ?? "",
                    ]
                    while let last = groups.last, last.isEmpty, groups.count > 1 { groups.removeLast() }
                    texts.append(groups.joined(separator: "="))
                default:
                    throw .invalidJSON("attribute \(key) (\(vr.rawValue)) has a value of the wrong type")
                }
            }
            let text = texts.joined(separator: "\\")
            // Values of VRs outside Specific Character Set are default repertoire only (PS3.5 §6.1.2.3): read
            // back, other bytes would not decode to the text given.
            guard vr.usesSpecificCharacterSet || text.utf8.allSatisfy({ $0 < 0x80 }) else {
                throw .invalidJSON(
                    "attribute \(key) (\(vr.rawValue)) has a value outside the default character repertoire")
            }
            out = Array(text.utf8)
            if out.count & 1 == 1 { out.append(vr.paddingByte) }
            return (out, vr.usesSpecificCharacterSet && text.utf8.contains { $0 >= 0x80 })
        }
        return (out, false)
    }
}
