/// Matching of one C-FIND/C-MOVE/C-GET key against an attribute of a stored record (PS3.4 §C.2.2.2).
///
/// Kinds of matching, chosen from the key's value and VR:
/// - universal matching (§C.2.2.2.3): a zero-length key matches every record, and asks for the value;
/// - list of UID matching (§C.2.2.2.2): a UI key with several values matches any one of them;
/// - range matching (§C.2.2.2.5): DA, TM and DT keys of the form `a-b`, `-b` or `a-`;
/// - wild card matching (§C.2.2.2.4): `*` (any run of characters) and `?` (one character), for every string VR
///   except DA, TM, DT, UI and the numeric ones;
/// - single value matching (§C.2.2.2.1): everything else, compared exactly after removing padding
///   (PN also without regard to case, which the standard permits);
/// - sequence matching (§C.2.2.2.6), minimal: an empty sequence, or one whose single item holds only
///   universal keys, matches every record; otherwise each key of the item must match some item of the record.
///
/// A multi-valued attribute of the record matches when any of its values does. A record that lacks the
/// attribute, or has it empty, matches only universal keys.
public enum AttributeMatching {
    /// Whether every matching key of `identifier` matches `record` (keys that are not matched, such as
    /// Query/Retrieve Level, Specific Character Set and command group elements, are skipped).
    public static func matches(_ identifier: DataSet, _ record: DataSet) -> Bool {
        for key in identifier where self.isMatchingKey(key.tag) {
            if !self.matches(key, in: identifier, record: record) { return false }
        }
        return true
    }

    /// Whether the element takes part in matching.
    public static func isMatchingKey(_ tag: Tag) -> Bool {
        tag.group > 0x0002 && tag != .specificCharacterSet && tag != .queryRetrieveLevel && !tag.isGroupLength
            && tag != Tag(0x0008, 0x0054)  // Retrieve AE Title: return key only.
    }

    /// Whether one key matches the record.
    static func matches(_ key: DataElement, in identifier: DataSet, record: DataSet) -> Bool {
        if key.vr == .SQ {
            return self.matchesSequence(key, record: record)
        }
        guard key.vr.isString else {
            // Binary numbers (US, UL, FD, ...): universal when empty, else any value equal to any of the record's.
            let wanted = key.numericValues
            if wanted.isEmpty { return true }
            guard let values = record[key.tag]?.numericValues else { return false }
            return values.contains { wanted.contains($0) }
        }
        let keyValues = key.stringValues(characterSet: identifier.characterSet)
        // Universal matching: zero length, or a single "*" for string VRs where wild cards apply.
        if keyValues.isEmpty || keyValues.allSatisfy({ $0.isEmpty }) { return true }
        if keyValues.count == 1 && keyValues[0] == "*" && self.allowsWildcards(key.vr) { return true }
        guard let element = record[key.tag], !element.isEmpty else { return false }
        let recordValues = element.stringValues(characterSet: record.characterSet)
        switch key.vr {
        case .UI:
            let wanted = Set(keyValues)
            return recordValues.contains { wanted.contains($0) }
        case .IS, .DS:
            // Numbers as text: "5" matches "5.0" and "+5".
            let wanted = keyValues.compactMap { Double($0.hasPrefix("+") ? String($0.dropFirst()) : $0) }
            return recordValues.contains { value in
                Double(value.hasPrefix("+") ? String(value.dropFirst()) : value).map(wanted.contains)
                    ?? keyValues.contains(value)
            }
        case .DA, .TM, .DT:
            return keyValues.contains { pattern in
                recordValues.contains { self.matchesRange(pattern, $0, vr: key.vr) }
            }
        default:
            let caseInsensitive = key.vr == .PN
            return keyValues.contains { pattern in
                recordValues.contains { value in
                    if self.allowsWildcards(key.vr) && (pattern.contains("*") || pattern.contains("?")) {
                        return self.wildcardMatch(pattern, value, caseInsensitive: caseInsensitive)
                    }
                    return caseInsensitive ? pattern.lowercased() == value.lowercased() : pattern == value
                }
            }
        }
    }

    /// Sequence matching, minimal (PS3.4 §C.2.2.2.6).
    static func matchesSequence(_ key: DataElement, record: DataSet) -> Bool {
        guard let keyItems = key.items, let keyItem = keyItems.first else { return true }
        let matchingKeys = keyItem.dataSet.elements.filter { self.isMatchingKey($0.tag) }
        if matchingKeys.isEmpty { return true }
        guard let recordItems = record[key.tag]?.items, !recordItems.isEmpty else {
            return matchingKeys.allSatisfy { self.matches($0, in: keyItem.dataSet, record: DataSet()) }
        }
        return recordItems.contains { self.matches(keyItem.dataSet, $0.dataSet) }
    }

    /// Wild cards apply to every string VR except the dates, times, UIDs and numbers (PS3.4 §C.2.2.2.4).
    static func allowsWildcards(_ vr: VR) -> Bool {
        switch vr {
        case .AE, .CS, .LO, .LT, .PN, .SH, .ST, .UC, .UT, .UR, .AS: return true
        default: return false
        }
    }

    /// `*` matches any run of characters (also none), `?` exactly one.
    static func wildcardMatch(_ pattern: String, _ value: String, caseInsensitive: Bool) -> Bool {
        let p = Array(caseInsensitive ? pattern.lowercased() : pattern)
        let v = Array(caseInsensitive ? value.lowercased() : value)
        var pi = 0
        var vi = 0
        var star = -1
        var mark = 0
        while vi < v.count {
            if pi < p.count && (p[pi] == "?" || p[pi] == v[vi]) {
                pi += 1
                vi += 1
            } else if pi < p.count && p[pi] == "*" {
                star = pi
                mark = vi
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                vi = mark
            } else {
                return false
            }
        }
        while pi < p.count && p[pi] == "*" { pi += 1 }
        return pi == p.count
    }

    /// Range matching for DA, TM and DT (PS3.4 §C.2.2.2.5); a value without `-` is single value matching.
    /// (A DT key with a UTC offset such as `-0500` is read as a range: not supported.)
    ///
    /// Times are compared after padding both sides to the same precision: `1015` in a range covers
    /// `101500` to `101559.999999` for an upper bound. Values are compared as text, which orders DA (YYYYMMDD),
    /// TM (HHMMSS.FFFFFF) and DT alike.
    static func matchesRange(_ pattern: String, _ value: String, vr: VR) -> Bool {
        let normalized = vr == .TM ? value.replacingColons() : value
        guard let dash = pattern.firstIndex(of: "-") else {
            let single = vr == .TM ? pattern.replacingColons() : pattern
            if vr == .TM || vr == .DT {
                // A time key matches every value that starts with it (10 matches 10:xx:xx).
                return normalized.hasPrefix(single)
            }
            return normalized == single
        }
        var lower = String(pattern[..<dash])
        var upper = String(pattern[pattern.index(after: dash)...])
        if vr == .TM {
            lower = lower.replacingColons()
            upper = upper.replacingColons()
        }
        if !lower.isEmpty && normalized < lower { return false }
        if !upper.isEmpty {
            // Upper bound inclusive at its own precision: compare only as many characters as it has.
            let prefix = String(normalized.prefix(upper.count))
            if prefix > upper { return false }
        }
        return true
    }
}

extension String {
    fileprivate func replacingColons() -> String {
        self.filter { $0 != ":" }
    }
}
