/// An error raised while decoding, framing or building upper-layer PDUs (PS3.8 §9.3).
///
/// Every malformed input surfaces as a ``PDUError``: the codecs never trap on peer data.
/// The ``code`` is stable and meant for matching; ``detail`` is a human-readable explanation.
/// ``abortReason`` tells the connection layer which A-ABORT reason (PS3.8 §9.3.8) to send.
public struct PDUError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A stable identifier of the kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case truncated
            case lengthExceedsParent
            case invalidLength
            case unrecognizedPDUType
            case unrecognizedItemType
            case unsupportedProtocolVersion
            case missingItem
            case unexpectedItem
            case invalidParameterValue
            case pduTooLarge
            case valueTooLong
            case tooManyPresentationContexts
            case invalidMaximumPDULength
            case unexpectedFragment
            case messageTooLarge
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The input ended before a declared field or item did.
        public static let truncated = Code(.truncated)
        /// An item or sub-item declares a length past the end of its enclosing PDU or item.
        public static let lengthExceedsParent = Code(.lengthExceedsParent)
        /// A PDU or item has a length that its type does not allow (e.g. an A-RELEASE-RQ not of length 4).
        public static let invalidLength = Code(.invalidLength)
        /// The PDU-type byte is not one of the seven PS3.8 PDU types.
        public static let unrecognizedPDUType = Code(.unrecognizedPDUType)
        /// An item type is not allowed where it was found.
        public static let unrecognizedItemType = Code(.unrecognizedItemType)
        /// The protocol-version field does not have bit 0 set (PS3.8 §9.3.3.2).
        public static let unsupportedProtocolVersion = Code(.unsupportedProtocolVersion)
        /// A mandatory item is absent.
        public static let missingItem = Code(.missingItem)
        /// An item occurs more often than allowed, or in a PDU where it does not belong.
        public static let unexpectedItem = Code(.unexpectedItem)
        /// A field holds a value outside its defined range.
        public static let invalidParameterValue = Code(.invalidParameterValue)
        /// A PDU header announces a length above the configured cap.
        public static let pduTooLarge = Code(.pduTooLarge)
        /// A value does not fit in its length field when encoding (e.g. a UID longer than 65535 bytes).
        public static let valueTooLong = Code(.valueTooLong)
        /// More presentation contexts were proposed than odd IDs exist (PS3.8 §9.3.2.2).
        public static let tooManyPresentationContexts = Code(.tooManyPresentationContexts)
        /// A maximum PDU length too small to carry any PDV data (PS3.8 §D.1).
        public static let invalidMaximumPDULength = Code(.invalidMaximumPDULength)
        /// A PDV arrived that does not continue the message being reassembled (PS3.8 §E.2).
        public static let unexpectedFragment = Code(.unexpectedFragment)
        /// A reassembled message exceeds the configured limit.
        public static let messageTooLarge = Code(.messageTooLarge)

        public var description: String { self.base.rawValue }
    }

    /// The kind of failure.
    public let code: Code
    /// What exactly was wrong, for logs.
    public let detail: String

    private init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "PDUError.\(self.code): \(self.detail)" }

    /// The A-ABORT reason (PS3.8 §9.3.8, source 2) that best reports this error to the peer.
    public var abortReason: Abort.Reason {
        switch self.code {
        case .unrecognizedPDUType: return .unrecognizedPDU
        case .unrecognizedItemType: return .unrecognizedPDUParameter
        case .unexpectedItem, .unexpectedFragment: return .unexpectedPDUParameter
        case .invalidParameterValue, .unsupportedProtocolVersion, .invalidLength, .lengthExceedsParent,
            .truncated, .missingItem, .pduTooLarge, .messageTooLarge:
            return .invalidPDUParameterValue
        default: return .reasonNotSpecified
        }
    }

    /// The input ended inside `what`: `needed` bytes were required but only `available` remained.
    public static func truncated(_ what: String, needed: Int, available: Int) -> PDUError {
        PDUError(.truncated, "\(what): needed \(needed) bytes, \(available) available")
    }

    /// `what` declares `length` bytes but only `available` remain in its parent.
    public static func lengthExceedsParent(_ what: String, length: Int, available: Int) -> PDUError {
        PDUError(.lengthExceedsParent, "\(what): length \(length) exceeds the \(available) bytes remaining")
    }

    /// `what` has length `length`, which its definition does not allow (`expected`).
    public static func invalidLength(_ what: String, length: Int, expected: String) -> PDUError {
        PDUError(.invalidLength, "\(what): length \(length), expected \(expected)")
    }

    /// The PDU-type byte `type` is unknown.
    public static func unrecognizedPDUType(_ type: UInt8) -> PDUError {
        PDUError(.unrecognizedPDUType, "unrecognized PDU type 0x\(hex(type))")
    }

    /// Item type `type` is not allowed inside `parent`.
    public static func unrecognizedItemType(_ type: UInt8, in parent: String) -> PDUError {
        PDUError(.unrecognizedItemType, "item type 0x\(hex(type)) is not allowed in \(parent)")
    }

    /// The protocol-version field `version` lacks bit 0.
    public static func unsupportedProtocolVersion(_ version: UInt16) -> PDUError {
        PDUError(.unsupportedProtocolVersion, "protocol version 0x\(String(version, radix: 16)) lacks bit 0")
    }

    /// The mandatory `item` is absent from `parent`.
    public static func missingItem(_ item: String, in parent: String) -> PDUError {
        PDUError(.missingItem, "\(parent) lacks the mandatory \(item)")
    }

    /// `item` occurred where it is not allowed in `parent`.
    public static func unexpectedItem(_ item: String, in parent: String) -> PDUError {
        PDUError(.unexpectedItem, "\(item) is not allowed here in \(parent)")
    }

    /// `field` holds `value`, which is outside its range.
    public static func invalidParameterValue(_ field: String, value: String) -> PDUError {
        PDUError(.invalidParameterValue, "\(field) has the invalid value \(value)")
    }

    /// A PDU of type `type` announces `announced` bytes, above the cap `maximum`.
    public static func pduTooLarge(type: UInt8, announced: UInt32, maximum: UInt32) -> PDUError {
        PDUError(.pduTooLarge, "PDU type 0x\(hex(type)) announces \(announced) bytes, above the limit of \(maximum)")
    }

    /// `what` is `length` bytes long, which does not fit in its length field (`maximum`).
    public static func valueTooLong(_ what: String, length: Int, maximum: Int) -> PDUError {
        PDUError(.valueTooLong, "\(what) is \(length) bytes long, more than the \(maximum) its length field allows")
    }

    /// `count` presentation contexts were proposed, more than the 128 odd IDs 1...255.
    public static func tooManyPresentationContexts(_ count: Int) -> PDUError {
        PDUError(.tooManyPresentationContexts, "\(count) presentation contexts proposed, at most 128 are allowed")
    }

    /// `length` cannot carry PDV data.
    public static func invalidMaximumPDULength(_ length: UInt32) -> PDUError {
        PDUError(.invalidMaximumPDULength, "maximum PDU length \(length) leaves no room for PDV data")
    }

    /// A PDV did not continue the message being reassembled.
    public static func unexpectedFragment(_ detail: String) -> PDUError {
        PDUError(.unexpectedFragment, detail)
    }

    /// A reassembled `what` would exceed `maximum` bytes.
    public static func messageTooLarge(_ what: String, size: Int, maximum: Int) -> PDUError {
        PDUError(.messageTooLarge, "\(what) of \(size) bytes exceeds the limit of \(maximum)")
    }
}

@inline(__always)
private func hex(_ byte: UInt8) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return byte < 0x10 ? "0" + digits : digits
}
