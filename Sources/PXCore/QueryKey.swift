import DICOMData

/// A query key from the command line: `Keyword=value`, `(gggg,eeee)=value`, `gggg,eeee=value`,
/// or a bare key (a return key with no value).
public struct QueryKey: Hashable, Sendable {
    public var tag: Tag
    public var vr: VR
    /// `nil` or empty for a return key; several values separated by `\`.
    public var value: String?

    public init(tag: Tag, vr: VR, value: String?) {
        self.tag = tag
        self.vr = vr
        self.value = value
    }

    /// Parses one key.
    /// - Throws: ``PXError/usage(_:)`` for an unknown keyword or malformed tag.
    public static func parse(_ text: String) throws(PXError) -> QueryKey {
        let name: Substring
        let value: String?
        if let eq = text.firstIndex(of: "=") {
            name = text[..<eq]
            value = String(text[text.index(after: eq)...])
        } else {
            name = Substring(text)
            value = nil
        }
        return try make(name: String(name), value: value)
    }

    /// Matching keys by keyword or tag text (`"PatientName": "Doe*"`), in the order of their names.
    /// - Throws: ``PXError/usage(_:)`` for an unknown keyword or a malformed tag.
    public static func matching(_ keys: [String: String]) throws(PXError) -> [QueryKey] {
        var out: [QueryKey] = []
        for (name, value) in keys.sorted(by: { $0.key < $1.key }) { out.append(try make(name: name, value: value)) }
        return out
    }

    /// A C-FIND identifier: the return keys `returning` names (empty), then the matching keys `matching` over
    /// them.
    /// - Throws: ``PXError/usage(_:)`` for an unknown keyword or a malformed tag among `returning`.
    public static func identifier(returning: [String], matching: [QueryKey]) throws(PXError) -> DataSet {
        var identifier = DataSet()
        for name in returning where !name.isEmpty { identifier.set(try make(name: name, value: nil)) }
        for key in matching { identifier.set(key) }
        return identifier
    }

    /// A key from a keyword or tag text and a value.
    public static func make(name: String, value: String?) throws(PXError) -> QueryKey {
        var tag: Tag?
        if let t = DataDictionary.tag(forKeyword: name) {
            tag = t
        } else {
            var hex = name
            if hex.hasPrefix("("), hex.hasSuffix(")") { hex = String(hex.dropFirst().dropLast()) }
            hex = hex.replacingOccurrences(of: ",", with: "")
            if hex.count == 8, let raw = UInt32(hex, radix: 16) { tag = Tag(rawValue: raw) }
        }
        guard let tag else {
            throw .usage("unknown query key '\(HumanText.escaped(name))': use a DICOM keyword or (gggg,eeee)")
        }
        let vr = DataDictionary.entry(for: tag)?.vr ?? .LO
        let key = QueryKey(tag: tag, vr: vr, value: value)
        try key.checkIdentifierKey()
        return key
    }

    /// Checks that the key can go in a C-FIND identifier (PS3.4 §C.4.1.1.3): not a command element (group
    /// 0000, PS3.7 §E.1), not a file meta element (group 0002, PS3.10 §7.1), not an item or delimitation tag
    /// (group FFFE, PS3.5 §7.5), and a sequence (SQ) only empty, as a return key (a sequence's matching items
    /// are data sets, which no command-line value spells).
    /// - Throws: ``PXError/usage(_:)`` naming the key.
    func checkIdentifierKey() throws(PXError) {
        let name = DataDictionary.entry(for: tag).map { "\($0.keyword) \(tag)" } ?? "\(tag)"
        switch tag.group {
        case 0x0000:
            throw .usage("query key \(name) is a command element (group 0000): it has no place in an identifier")
        case 0x0002:
            throw .usage("query key \(name) is file meta information (group 0002): it has no place in an identifier")
        case 0xFFFE:
            throw .usage("query key \(name) is an item or delimitation tag (group FFFE), not an attribute")
        default:
            break
        }
        if vr == .SQ, let value, !value.isEmpty {
            throw .usage(
                "query key \(name) is a sequence (SQ): give it without a value, as a return key (\(keyword) or \(keyword)=)"
            )
        }
    }

    /// Whether a command-line word is a query key written as dcm writes them, `Keyword=value` or
    /// `(gggg,eeee)=value` (`px-find pacs StudyDate=20240101`), rather than a peer or a place: the text before
    /// the first `=` is a keyword or a tag (letters, digits, `(`, `,`, `)`), which no peer (`host:port`,
    /// `AE@host:port`, `host:AE:port`, a node name, a URL) nor a path (it has a `/` or `:`) is.
    public static func isAssignment(_ text: String) -> Bool {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else { return false }
        return text[..<eq].allSatisfy { ($0.isASCII && ($0.isLetter || $0.isNumber)) || "(),".contains($0) }
    }

    /// The words that are not `Keyword=value` (places, in order) and those that are (keys, in order): px-sync's
    /// positional words, where several places stand.
    public static func partition(_ words: [String]) -> (others: [String], keys: [String]) {
        (words.filter { !isAssignment($0) }, words.filter(isAssignment))
    }

    /// Sorts the positional words of px-find (`PEER KEY=VALUE...`) or px-ls (`PLACE KEY=VALUE...`): the one word
    /// that is not a `KEY=VALUE` is the peer or place, wherever it stands (ArgumentParser gives the first word
    /// to the peer, so `--serverIP h --serverPort p StudyDate=2024` would otherwise take the key for a peer).
    /// - Parameters:
    ///   - first: the word ArgumentParser took as the peer or place.
    ///   - rest: the words after it.
    /// - Returns: the peer or place (`nil` when every word is a key) and the `KEY=VALUE` words, in order.
    /// - Throws: ``PXError/usage(_:)`` for a second word that is not `KEY=VALUE`, or a key not in the dictionary.
    public static func separate(first: String?, rest: [String]) throws(PXError) -> (first: String?, keys: [String]) {
        var target: String?
        var keys: [String] = []
        for word in (first.map { [$0] } ?? []) + rest {
            if isAssignment(word) {
                _ = try parse(word)
                keys.append(word)
            } else if let target {
                throw .usage(
                    "unexpected argument '\(word)' after '\(target)': query keys on the command line are"
                        + " Keyword=value (e.g. StudyDate=20240101), or -k Keyword=value")
            } else {
                target = word
            }
        }
        return (target, keys)
    }

    /// The keyword (or hex tag) for messages.
    public var keyword: String { DataDictionary.entry(for: tag)?.keyword ?? tag.hexString }
}

extension DataSet {
    /// Sets a query key: values split on `\`, an empty element for a return key.
    public mutating func set(_ key: QueryKey) {
        let value = key.value ?? ""
        let values =
            value.isEmpty ? [] : value.split(separator: "\\", omittingEmptySubsequences: false).map(String.init)
        if values.contains(where: { $0.utf8.contains { $0 >= 0x80 } }), self[.specificCharacterSet] == nil {
            set(.specificCharacterSet, vr: .CS, string: "ISO_IR 192")
        }
        set(key.tag, vr: key.vr, strings: values)
    }
}

extension String {
    func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
