import NIOCore

/// The A-ASSOCIATE-RJ PDU, type 0x03 (PS3.8 §9.3.4).
///
/// The variable field is 4 bytes: reserved, result, source, reason/diagnostic. Descriptions follow
/// DCMTK's wording ("Rejected Permanent", "Service User", "Called AE Title Not Recognized").
public struct AssociateRJ: PDUMessage {
    public static var pduType: PDUType { .associateRJ }

    /// Whether the rejection is permanent or transient (PS3.8 Table 9-21).
    public enum Result: UInt8, Sendable, Hashable, CustomStringConvertible {
        /// 1: rejected-permanent.
        case rejectedPermanent = 1
        /// 2: rejected-transient.
        case rejectedTransient = 2

        public var description: String {
            switch self {
            case .rejectedPermanent: return "Rejected Permanent"
            case .rejectedTransient: return "Rejected Transient"
            }
        }
    }

    /// Who rejected the association (PS3.8 Table 9-21).
    public enum Source: UInt8, Sendable, Hashable, CustomStringConvertible {
        /// 1: DICOM UL service-user.
        case serviceUser = 1
        /// 2: DICOM UL service-provider (ACSE related function).
        case serviceProviderACSE = 2
        /// 3: DICOM UL service-provider (Presentation related function).
        case serviceProviderPresentation = 3

        public var description: String {
            switch self {
            case .serviceUser: return "Service User"
            case .serviceProviderACSE: return "Service Provider (ACSE Related)"
            case .serviceProviderPresentation: return "Service Provider (Presentation Related)"
            }
        }
    }

    /// The reason/diagnostic byte, whose meaning depends on the ``Source`` (PS3.8 Table 9-21).
    public struct Reason: RawRepresentable, Sendable, Hashable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// 1: no-reason-given (service-user or ACSE provider).
        public static let noReasonGiven = Reason(rawValue: 1)
        /// 2 (service-user): application-context-name-not-supported.
        public static let applicationContextNameNotSupported = Reason(rawValue: 2)
        /// 3 (service-user): calling-AE-title-not-recognized.
        public static let callingAETitleNotRecognized = Reason(rawValue: 3)
        /// 7 (service-user): called-AE-title-not-recognized.
        public static let calledAETitleNotRecognized = Reason(rawValue: 7)
        /// 2 (ACSE provider): protocol-version-not-supported.
        public static let protocolVersionNotSupported = Reason(rawValue: 2)
        /// 1 (presentation provider): temporary-congestion.
        public static let temporaryCongestion = Reason(rawValue: 1)
        /// 2 (presentation provider): local-limit-exceeded.
        public static let localLimitExceeded = Reason(rawValue: 2)
    }

    /// Permanent or transient.
    public var result: Result
    /// Who rejected.
    public var source: Source
    /// Why, interpreted according to ``source``.
    public var reason: Reason

    /// Creates an A-ASSOCIATE-RJ.
    public init(result: Result, source: Source, reason: Reason) {
        self.result = result
        self.source = source
        self.reason = reason
    }

    /// The reason in DCMTK's wording, interpreted according to the source.
    public var reasonDescription: String {
        switch (self.source, self.reason.rawValue) {
        case (.serviceUser, 1), (.serviceProviderACSE, 1): return "No Reason"
        case (.serviceUser, 2): return "App Context Name Not Supported"
        case (.serviceUser, 3): return "Calling AE Title Not Recognized"
        case (.serviceUser, 7): return "Called AE Title Not Recognized"
        case (.serviceProviderACSE, 2): return "Protocol Version Not Supported"
        case (.serviceProviderPresentation, 1): return "Temporary Congestion"
        case (.serviceProviderPresentation, 2): return "Local Limit Exceeded"
        default: return "Reserved (\(self.reason.rawValue))"
        }
    }

    public init(body buffer: inout ByteBuffer) throws {
        guard buffer.readableBytes == 4 else {
            throw PDUError.invalidLength("A-ASSOCIATE-RJ", length: buffer.readableBytes, expected: "4")
        }
        try buffer.skipReserved(1, in: "A-ASSOCIATE-RJ")
        let result: UInt8 = try buffer.readPDUInteger("A-ASSOCIATE-RJ result")
        let source: UInt8 = try buffer.readPDUInteger("A-ASSOCIATE-RJ source")
        let reason: UInt8 = try buffer.readPDUInteger("A-ASSOCIATE-RJ reason")
        guard let decodedResult = Result(rawValue: result) else {
            throw PDUError.invalidParameterValue("A-ASSOCIATE-RJ result", value: "\(result)")
        }
        guard let decodedSource = Source(rawValue: source) else {
            throw PDUError.invalidParameterValue("A-ASSOCIATE-RJ source", value: "\(source)")
        }
        self.result = decodedResult
        self.source = decodedSource
        self.reason = Reason(rawValue: reason)
    }

    public func encodeBody(into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(0))
        buffer.writeInteger(self.result.rawValue)
        buffer.writeInteger(self.source.rawValue)
        buffer.writeInteger(self.reason.rawValue)
    }
}

extension AssociateRJ: CustomStringConvertible {
    /// "Result: Rejected Permanent, Source: Service User, Reason: Called AE Title Not Recognized".
    public var description: String {
        "Result: \(self.result), Source: \(self.source), Reason: \(self.reasonDescription)"
    }
}
