import NIOCore

/// The A-ABORT PDU, type 0x07 (PS3.8 §9.3.8).
///
/// Supports both the A-ABORT service (source 0, service-user) and the A-P-ABORT service
/// (source 2, service-provider, with a reason).
public struct Abort: PDUMessage {
    public static var pduType: PDUType { .abort }

    /// Who aborted (PS3.8 Table 9-26).
    public struct Source: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0: DICOM UL service-user (initiated abort).
        public static let serviceUser = Source(rawValue: 0)
        /// 1: reserved.
        public static let reserved = Source(rawValue: 1)
        /// 2: DICOM UL service-provider (initiated abort).
        public static let serviceProvider = Source(rawValue: 2)

        public var description: String {
            switch self.rawValue {
            case 0: return "Service User"
            case 2: return "Service Provider"
            default: return "Reserved (\(self.rawValue))"
            }
        }
    }

    /// Why the provider aborted; meaningful only for source 2 (PS3.8 Table 9-26).
    public struct Reason: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 0: reason-not-specified.
        public static let reasonNotSpecified = Reason(rawValue: 0)
        /// 1: unrecognized-PDU.
        public static let unrecognizedPDU = Reason(rawValue: 1)
        /// 2: unexpected-PDU.
        public static let unexpectedPDU = Reason(rawValue: 2)
        /// 4: unrecognized-PDU parameter.
        public static let unrecognizedPDUParameter = Reason(rawValue: 4)
        /// 5: unexpected-PDU parameter.
        public static let unexpectedPDUParameter = Reason(rawValue: 5)
        /// 6: invalid-PDU-parameter value.
        public static let invalidPDUParameterValue = Reason(rawValue: 6)

        public var description: String {
            switch self.rawValue {
            case 0: return "Reason Not Specified"
            case 1: return "Unrecognized PDU"
            case 2: return "Unexpected PDU"
            case 4: return "Unrecognized PDU Parameter"
            case 5: return "Unexpected PDU Parameter"
            case 6: return "Invalid PDU Parameter Value"
            default: return "Reserved (\(self.rawValue))"
            }
        }
    }

    /// Who aborted.
    public var source: Source
    /// Why (not significant when the source is the service-user).
    public var reason: Reason

    /// Creates an A-ABORT; the default is a service-user abort.
    public init(source: Source = .serviceUser, reason: Reason = .reasonNotSpecified) {
        self.source = source
        self.reason = reason
    }

    /// A service-provider A-ABORT (A-P-ABORT) with `reason`.
    public static func provider(_ reason: Reason) -> Abort {
        Abort(source: .serviceProvider, reason: reason)
    }

    public init(body buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength("A-ABORT", length: buffer.readableBytes, expected: "4")
        }
        try buffer.skipReserved(2, in: "A-ABORT")
        self.source = Source(rawValue: try buffer.readPDUInteger("A-ABORT source"))
        self.reason = Reason(rawValue: try buffer.readPDUInteger("A-ABORT reason"))
    }

    public func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt16(0))
        buffer.writeInteger(self.source.rawValue)
        buffer.writeInteger(self.reason.rawValue)
    }
}
