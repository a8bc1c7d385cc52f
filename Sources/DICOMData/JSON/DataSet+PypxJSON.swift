extension DataSet {
    /// The data set in pypx's entry shape: `{"PatientID": {"tag": "0010,0020", "value": "32124",
    /// "label": "PatientID"}}`, keyed by keyword (eight hex digits for elements the dictionary does not
    /// name).
    ///
    /// Unlike pypx, this is real JSON and keeps multiple values apart: `value` is a string for an element
    /// with one value or none (`""` when empty), an array of strings for several values, an array of
    /// objects of this shape for a sequence, and base64 text for binary VRs.
    ///
    /// `strict` renders values as pypx 3.12.6 does (it reads them from findscu's log, `Base.parseResponse`): an
    /// element without a value is `"no value provided for gggg,eeee"` and several values are one string joined
    /// with `\`, so that scripts and pypx's px-report read px's output as they read pypx's.
    public func pypxJSON(strict: Bool = false) -> JSONValue {
        var members: [JSONMember] = []
        members.reserveCapacity(elements.count)
        for element in elements where !element.tag.isGroupLength {
            let keyword = element.keyword
            let hex = element.tag.hexString.lowercased()
            let tagText = "\(hex.prefix(4)),\(hex.suffix(4))"
            var value = element.pypxValue(characterSet: characterSet, strict: strict)
            if strict {
                switch value {
                case .string(""): value = .string(Self.pypxNoValue(tag: tagText))
                case .array(let values) where element.items == nil:
                    value = .string(values.compactMap(\.stringValue).joined(separator: "\\"))
                default: break
                }
            }
            members.append(
                JSONMember(
                    keyword,
                    .object([
                        JSONMember("tag", .string(tagText)),
                        JSONMember("value", value),
                        JSONMember("label", .string(keyword)),
                    ])))
        }
        return .object(members)
    }

    /// pypx's text for an element the peer returned empty: `no value provided for 0010,1010`.
    public static func pypxNoValue(tag: String) -> String { "no value provided for \(tag)" }

    /// Whether a pypx `value` is pypx's text for an empty element (``pypxNoValue(tag:)``), which a reader of
    /// pypx JSON takes as no value.
    public static func isPypxNoValue(_ value: String) -> Bool { value.hasPrefix("no value provided") }

    /// The data set as one flat object, `{"PatientID": "32124", "OtherPatientIDs": ["A", "B"]}`:
    /// the shape of px-find's NDJSON lines.
    public func flatJSON() -> JSONValue {
        var members: [JSONMember] = []
        for element in elements where !element.tag.isGroupLength {
            let value: JSONValue
            if let items = element.items {
                value = .array(items.map { $0.dataSet.flatJSON() })
            } else {
                value = element.pypxValue(characterSet: characterSet)
            }
            members.append(JSONMember(element.keyword, value))
        }
        return .object(members)
    }
}

extension DataElement {
    /// The element's keyword from the data dictionary, or its tag as eight hex digits.
    public var keyword: String {
        if !tag.isPrivate, let keyword = DataDictionary.keyword(for: tag) { return keyword }
        return tag.hexString
    }

    /// The value in pypx's shape: one string, an array of strings, nested objects, or base64 text.
    func pypxValue(characterSet: SpecificCharacterSet, strict: Bool = false) -> JSONValue {
        switch value {
        case .sequence(let items):
            return .array(items.map { $0.dataSet.pypxJSON(strict: strict) })
        case .fragments(let pixelData):
            var joined: [UInt8] = []
            for f in pixelData.fragments { joined.append(contentsOf: f) }
            return .string(Base64.encode(joined))
        case .bytes(let bytes):
            let texts: [String]
            switch vr {
            case .OB, .OD, .OF, .OL, .OV, .OW, .UN:
                return .string(Base64.encode(bytes))
            case .US, .SS, .UL, .SL, .SV, .UV, .FL, .FD:
                texts = (jsonValues(characterSet: characterSet) ?? []).map {
                    if case .number(let n) = $0 { return n }
                    return $0.stringValue ?? ""
                }
            case .AT:
                texts = tagValues.map(\.hexString)
            default:
                texts = stringValues(characterSet: characterSet)
            }
            switch texts.count {
            case 0: return .string("")
            case 1: return .string(texts[0])
            default: return .array(texts.map(JSONValue.string))
            }
        }
    }
}
