/// A person name (VR PN): up to three component groups, alphabetic, ideographic and phonetic,
/// each with five components, family^given^middle^prefix^suffix (PS3.5 §6.2.1).
public struct PersonName: Hashable, Sendable, CustomStringConvertible {
    /// One component group.
    public struct ComponentGroup: Hashable, Sendable {
        public var familyName: String
        public var givenName: String
        public var middleName: String
        public var namePrefix: String
        public var nameSuffix: String
        /// The group as written, with its carets (trailing empty components dropped).
        public var text: String

        init(parsing text: Substring) {
            var parts = text.split(separator: "^", omittingEmptySubsequences: false).map(String.init)
            while parts.count < 5 { parts.append("") }
            familyName = parts[0]
            givenName = parts[1]
            middleName = parts[2]
            namePrefix = parts[3]
            nameSuffix = parts[4]
            self.text = String(text)
        }

        public var isEmpty: Bool { text.isEmpty }
    }

    public var alphabetic: ComponentGroup
    public var ideographic: ComponentGroup
    public var phonetic: ComponentGroup

    /// Parses `Alphabetic=Ideographic=Phonetic`, each `Family^Given^Middle^Prefix^Suffix`.
    public init(parsing text: String) {
        let groups = text.split(separator: "=", maxSplits: 2, omittingEmptySubsequences: false)
        alphabetic = ComponentGroup(parsing: groups.first ?? "")
        ideographic = ComponentGroup(parsing: groups.count > 1 ? groups[1] : "")
        phonetic = ComponentGroup(parsing: groups.count > 2 ? groups[2] : "")
    }

    public var description: String {
        var text = alphabetic.text
        if !ideographic.isEmpty || !phonetic.isEmpty { text += "=" + ideographic.text }
        if !phonetic.isEmpty { text += "=" + phonetic.text }
        return text
    }
}
