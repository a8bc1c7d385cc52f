extension DataSet {
    /// The first value of a string element, decoded with this data set's character set and trimmed;
    /// nil when the element is absent, "" when it is empty.
    public func string(_ tag: Tag) -> String? {
        guard let element = self[tag] else { return nil }
        return element.stringValues(characterSet: characterSet).first ?? ""
    }

    /// All values of a string element, decoded and trimmed; nil when the element is absent.
    public func strings(_ tag: Tag) -> [String]? {
        self[tag].map { $0.stringValues(characterSet: characterSet) }
    }

    /// The first value of an element as an integer (IS, US, SS, UL, SL, SV, UV).
    public func integer(_ tag: Tag) -> Int? { self[tag]?.integerValues.first }

    /// All values of a numeric element (DS, IS, and the binary numbers) as `Double`s.
    public func doubles(_ tag: Tag) -> [Double]? {
        guard let element = self[tag] else { return nil }
        switch element.vr {
        case .DS, .IS:
            return element.stringValues(characterSet: .defaultRepertoire).compactMap { Double($0) }
        default:
            return element.numericValues
        }
    }

    /// The person names of a PN element.
    public func personNames(_ tag: Tag) -> [PersonName]? {
        strings(tag).map { $0.map(PersonName.init(parsing:)) }
    }

    /// The items of a sequence element.
    public func items(_ tag: Tag) -> [Item]? { self[tag]?.items }

    /// Sets a string element from values, encoded in this data set's character set (UTF-8 is used,
    /// and (0008,0005) set to ISO_IR 192, when a value cannot be encoded otherwise).
    public mutating func set(_ tag: Tag, vr: VR, strings values: [String]) {
        let text = values.joined(separator: "\\")
        var bytes: [UInt8]
        if vr.usesSpecificCharacterSet {
            if let encoded = characterSet.encode(text, vr: vr) {
                bytes = encoded
            } else {
                set(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: Array("ISO_IR 192".utf8)))
                bytes = Array(text.utf8)
            }
        } else {
            bytes = Array(text.utf8)
        }
        if bytes.count & 1 == 1 { bytes.append(vr.paddingByte) }
        set(DataElement(tag: tag, vr: vr, bytes: bytes))
    }

    /// Sets a one-valued string element.
    public mutating func set(_ tag: Tag, vr: VR, string value: String) {
        set(tag, vr: vr, strings: [value])
    }
}
