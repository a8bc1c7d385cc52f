// TEMPORARY stand-in until the full implementation lands (branch wip/charset).
public struct SpecificCharacterSet: Sendable, Hashable {
    public let terms: [String]
    public init(terms: [String]) { self.terms = terms }
    public static let defaultRepertoire = SpecificCharacterSet(terms: [])
    public var unknownTerms: [String] { [] }
    public func decode<C: Collection>(_ bytes: C, vr: VR) -> String where C.Element == UInt8 {
        if terms.contains("ISO_IR 100") { return String(bytes.map { Character(Unicode.Scalar($0)) }) }
        return String(decoding: bytes, as: UTF8.self)
    }
    public func encode(_ string: String, vr: VR) -> [UInt8]? { Array(string.utf8) }
}
