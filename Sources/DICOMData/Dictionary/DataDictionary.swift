// TEMPORARY stand-in until the generated dictionary lands (branch wip/dict).
public struct DictionaryEntry: Sendable, Hashable {
    public let tag: Tag
    public let vr: VR
    public let alternativeVRs: [VR]
    public let vm: String
    public let keyword: String
    public let name: String
    public let isRetired: Bool
}
public enum DataDictionary {
    static let table: [Tag: DictionaryEntry] = {
        var t: [Tag: DictionaryEntry] = [:]
        for (g, e, vr, alts, kw) in [
            (0x0008, 0x0005, VR.CS, [VR.CS], "SpecificCharacterSet"),
            (0x0008, 0x0016, .UI, [.UI], "SOPClassUID"), (0x0008, 0x0018, .UI, [.UI], "SOPInstanceUID"),
            (0x0008, 0x1140, .SQ, [.SQ], "ReferencedImageSequence"),
            (0x0010, 0x0010, .PN, [.PN], "PatientName"), (0x0010, 0x0020, .LO, [.LO], "PatientID"),
            (0x0028, 0x0106, .US, [.US, .SS], "SmallestImagePixelValue"),
            (0x0028, 0x0103, .US, [.US], "PixelRepresentation"),
            (0x7FE0, 0x0010, .OW, [.OB, .OW], "PixelData"),
        ] as [(UInt16, UInt16, VR, [VR], String)] {
            t[Tag(g, e)] = DictionaryEntry(tag: Tag(g, e), vr: vr, alternativeVRs: alts, vm: "1", keyword: kw, name: kw, isRetired: false)
        }
        return t
    }()
    public static func entry(for tag: Tag) -> DictionaryEntry? { table[tag] }
    public static func tag(forKeyword keyword: String) -> Tag? { table.values.first { $0.keyword == keyword }?.tag }
    public static func entry(forKeyword keyword: String) -> DictionaryEntry? { table.values.first { $0.keyword == keyword } }
}
