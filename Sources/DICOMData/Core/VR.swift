/// A value representation (PS3.5 §6.2, Table 6.2-1).
public enum VR: String, Sendable, Hashable, CaseIterable {
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // DICOM spells VRs in capitals (PS3.5 Table 6.2-1); the cases are those spellings.
    case AE, AS, AT, CS, DA, DS, DT, FD, FL, IS, LO, LT, OB, OD, OF, OL, OV, OW, PN, SH, SL, SQ, SS, ST, SV, TM,
        UC, UI, UL, UN, UR, US, UT, UV

    /// The two ASCII bytes of the VR as they appear in explicit VR encodings.
    @inlinable
    public var code: UInt16 {
        let u = Array(rawValue.utf8)
        return UInt16(u[0]) << 8 | UInt16(u[1])
    }

    /// Looks a VR up from the two bytes read off the wire in explicit VR encodings.
    @inlinable
    public init?(byte0: UInt8, byte1: UInt8) {
        switch (byte0, byte1) {
        case (0x41, 0x45): self = .AE
        case (0x41, 0x53): self = .AS
        case (0x41, 0x54): self = .AT
        case (0x43, 0x53): self = .CS
        case (0x44, 0x41): self = .DA
        case (0x44, 0x53): self = .DS
        case (0x44, 0x54): self = .DT
        case (0x46, 0x44): self = .FD
        case (0x46, 0x4C): self = .FL
        case (0x49, 0x53): self = .IS
        case (0x4C, 0x4F): self = .LO
        case (0x4C, 0x54): self = .LT
        case (0x4F, 0x42): self = .OB
        case (0x4F, 0x44): self = .OD
        case (0x4F, 0x46): self = .OF
        case (0x4F, 0x4C): self = .OL
        case (0x4F, 0x56): self = .OV
        case (0x4F, 0x57): self = .OW
        case (0x50, 0x4E): self = .PN
        case (0x53, 0x48): self = .SH
        case (0x53, 0x4C): self = .SL
        case (0x53, 0x51): self = .SQ
        case (0x53, 0x53): self = .SS
        case (0x53, 0x54): self = .ST
        case (0x53, 0x56): self = .SV
        case (0x54, 0x4D): self = .TM
        case (0x55, 0x43): self = .UC
        case (0x55, 0x49): self = .UI
        case (0x55, 0x4C): self = .UL
        case (0x55, 0x4E): self = .UN
        case (0x55, 0x52): self = .UR
        case (0x55, 0x53): self = .US
        case (0x55, 0x54): self = .UT
        case (0x55, 0x56): self = .UV
        default: return nil
        }
    }

    /// Explicit VR encodings use a 2-byte reserved field and a 4-byte length for these VRs,
    /// a 2-byte length for the others (PS3.5 §7.1.2, Table 7.1-1).
    @inlinable
    public var hasLongExplicitLength: Bool {
        switch self {
        case .OB, .OD, .OF, .OL, .OV, .OW, .SQ, .UC, .UN, .UR, .UT, .SV, .UV: return true
        default: return false
        }
    }

    /// String VRs whose values are text (as opposed to binary numbers, bytes or sequences).
    @inlinable
    public var isString: Bool {
        switch self {
        case .AE, .AS, .CS, .DA, .DS, .DT, .IS, .LO, .LT, .PN, .SH, .ST, .TM, .UC, .UI, .UR, .UT: return true
        default: return false
        }
    }

    /// String VRs whose bytes are interpreted through Specific Character Set (PS3.5 §6.1.2.3);
    /// the others use the default repertoire only.
    @inlinable
    public var usesSpecificCharacterSet: Bool {
        switch self {
        case .SH, .LO, .ST, .LT, .PN, .UC, .UT: return true
        default: return false
        }
    }

    /// VRs that hold exactly one value: the backslash is an ordinary character in them (PS3.5 §6.2).
    @inlinable
    public var isSingleValued: Bool {
        switch self {
        case .LT, .ST, .UT, .UR: return true
        default: return false
        }
    }

    /// The byte that pads a value to an even length: NUL for UI and the binary VRs, space for text (PS3.5 §6.2).
    @inlinable
    public var paddingByte: UInt8 {
        switch self {
        case .UI, .OB, .UN: return 0x00
        default: return isString ? 0x20 : 0x00
        }
    }

    /// For fixed-size binary VRs, the size of one value in bytes; nil for the others.
    @inlinable
    public var binaryValueSize: Int? {
        switch self {
        case .US, .SS, .OW: return 2
        case .UL, .SL, .FL, .OF, .OL, .AT: return 4
        case .FD, .OD, .SV, .UV, .OV: return 8
        default: return nil
        }
    }
}
