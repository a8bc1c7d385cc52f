extension DataSet {
    /// The data set in the DICOM JSON Model (PS3.18 §F.2): an object keyed by eight hex digits, each
    /// member `{"vr": ..., "Value": [...]}` or `{"vr": ..., "InlineBinary": "..."}`.
    ///
    /// Text is decoded with the data set's Specific Character Set; since the JSON is Unicode, a present
    /// (0008,0005) is written as `ISO_IR 192`, as DCMTK's dcm2json does. Group length elements are left
    /// out (PS3.18 §F.2.1.1 notes they carry no meaning in JSON).
    public func dicomJSON() -> JSONValue {
        var members: [JSONMember] = []
        members.reserveCapacity(elements.count)
        for element in elements where !element.tag.isGroupLength {
            members.append(JSONMember(element.tag.hexString, element.dicomJSON(characterSet: characterSet)))
        }
        return .object(members)
    }
}

extension DataElement {
    /// One attribute object of the DICOM JSON Model (PS3.18 §F.2.2).
    public func dicomJSON(characterSet: SpecificCharacterSet) -> JSONValue {
        var members = [JSONMember("vr", .string(vr.rawValue))]
        switch value {
        case .sequence(let items):
            if !items.isEmpty {
                members.append(JSONMember("Value", .array(items.map { $0.dataSet.dicomJSON() })))
            }
        case .fragments(let pixelData):
            // Encapsulated pixel data is written as its item stream: Basic Offset Table item and
            // fragment items, without the closing delimiter (as pydicom writes it; dcm2json refuses).
            members.append(JSONMember("InlineBinary", .string(Base64.encode(pixelData.itemStream()))))
        case .bytes(let bytes):
            if tag == .specificCharacterSet && vr == .CS {
                // The JSON text is Unicode, whatever the file used (dcm2json does the same). Under any other
                // VR the element is not a character set (a broken file): it is written by its VR like any other.
                members.append(JSONMember("Value", .array([.string("ISO_IR 192")])))
                break
            }
            if bytes.isEmpty { break }
            if let values = jsonValues(characterSet: characterSet) {
                // A value made only of padding or empty values has no Value (as dcm2json writes it).
                if values.contains(where: { $0 != .null }) {
                    members.append(JSONMember("Value", .array(values)))
                }
            } else if bytes.count & 1 == 1 {
                // An odd-length value is padded to even length, as every DICOM encoding requires.
                members.append(JSONMember("InlineBinary", .string(Base64.encode(bytes + [0]))))
            } else {
                members.append(JSONMember("InlineBinary", .string(Base64.encode(bytes))))
            }
        }
        return .object(members)
    }

    /// The `Value` array for string and number VRs; nil for the VRs written as InlineBinary.
    func jsonValues(characterSet: SpecificCharacterSet) -> [JSONValue]? {
        switch vr {
        case .OB, .OD, .OF, .OL, .OV, .OW, .UN:
            return nil
        case .SQ:
            return []
        case .US, .SS, .UL, .SL:
            return integerValues.map { .integer($0) }
        case .SV:
            // 64-bit values beyond 2^53 lose precision as JSON numbers: they are strings (PS3.18 §F.2.3.1).
            return integers(Int64.self).map { abs($0) > Self.largestExactInteger ? .string(String($0)) : .integer($0) }
        case .UV:
            return unsignedValues.map { $0 > UInt64(Self.largestExactInteger) ? .string(String($0)) : .integer($0) }
        case .FL:
            return floats(Float.self).map {
                $0.isFinite ? .number(Self.jsonNumber($0.description)) : .string($0.description)
            }
        case .FD:
            return floats(Double.self).map {
                $0.isFinite ? .number(Self.jsonNumber($0.description)) : .string($0.description)
            }
        case .AT:
            return tagValues.map { .string($0.hexString) }
        case .PN:
            return stringValues(characterSet: characterSet).map { text in
                // Trailing empty components are insignificant (PS3.5 §6.2.1): "OB^^^^" is "OB".
                let groups = text.split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
                var members: [JSONMember] = []
                for (key, group) in zip(["Alphabetic", "Ideographic", "Phonetic"], groups) {
                    var g = group
                    while g.last == "^" { g.removeLast() }
                    if !g.isEmpty { members.append(JSONMember(key, .string(String(g)))) }
                }
                return members.isEmpty ? .null : .object(members)
            }
        case .DS:
            return stringValues(characterSet: .defaultRepertoire).map { text in
                if text.isEmpty { return .null }
                return Self.decimalJSON(text).map(JSONValue.number) ?? .string(text)
            }
        case .IS:
            return stringValues(characterSet: .defaultRepertoire).map { text in
                if text.isEmpty { return .null }
                let t = text.hasPrefix("+") ? String(text.dropFirst()) : text
                if let n = Int(t) { return .integer(n) }
                return Self.decimalJSON(text).map(JSONValue.number) ?? .string(text)
            }
        default:
            return stringValues(characterSet: characterSet).map { $0.isEmpty ? .null : .string($0) }
        }
    }

    /// 2^53 - 1, the largest integer a JSON number holds exactly in common parsers.
    static let largestExactInteger: Int64 = (1 << 53) - 1

    /// Swift prints `1e-05` and `inf`; JSON takes the former as is.
    static func jsonNumber(_ text: String) -> String { text }

    /// A DS or IS text as a JSON number: no leading `+`, no leading zeros, digits on both sides of the
    /// point; nil when the text is not a decimal number at all.
    static func decimalJSON(_ text: String) -> String? {
        var s = Substring(text)
        var sign = ""
        if s.first == "+" {
            s = s.dropFirst()
        } else if s.first == "-" {
            sign = "-"
            s = s.dropFirst()
        }
        var mantissa = s
        var exponent: Substring? = nil
        if let e = s.firstIndex(where: { $0 == "e" || $0 == "E" }) {
            mantissa = s[..<e]
            exponent = s[s.index(after: e)...]
        }
        var intPart = mantissa
        var fracPart: Substring? = nil
        if let dot = mantissa.firstIndex(of: ".") {
            intPart = mantissa[..<dot]
            fracPart = mantissa[mantissa.index(after: dot)...]
        }
        guard intPart.allSatisfy({ $0.isASCII && $0.isNumber }),
            fracPart?.allSatisfy({ $0.isASCII && $0.isNumber }) ?? true,
            !(intPart.isEmpty && (fracPart?.isEmpty ?? true))
        else { return nil }
        while intPart.count > 1, intPart.first == "0" { intPart = intPart.dropFirst() }
        var out = sign + (intPart.isEmpty ? "0" : String(intPart))
        if let f = fracPart, !f.isEmpty { out += "." + f }
        if var e = exponent {
            var eSign = ""
            if e.first == "+" || e.first == "-" {
                eSign = e.first == "-" ? "-" : ""
                e = e.dropFirst()
            }
            guard !e.isEmpty, e.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            out += "e" + eSign + e
        }
        return out
    }
}
