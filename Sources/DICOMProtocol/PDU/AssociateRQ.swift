import NIOCore

/// The A-ASSOCIATE-RQ PDU, type 0x01 (PS3.8 §9.3.2).
///
/// The protocol version is decoded without validation so that an acceptor can answer an unsupported
/// version with an A-ASSOCIATE-RJ (PS3.8 §9.3.4, AE-6) instead of an abort; see
/// ``supportsProtocolVersion1``.
public struct AssociateRQ: PDUMessage {
    public static var pduType: PDUType { .associateRQ }

    /// The protocol-version bit field; bit 0 set means version 1 (PS3.8 §9.3.2).
    public var protocolVersion: UInt16
    /// The called AE title, trimmed of padding spaces.
    public var calledAETitle: String
    /// The calling AE title, trimmed of padding spaces.
    public var callingAETitle: String
    /// The application context name (Item 0x10).
    public var applicationContextName: String
    /// The proposed presentation contexts (Items 0x20).
    public var presentationContexts: [PresentationContextRQ]
    /// The user information (Item 0x50).
    public var userInformation: UserInformation

    /// The standard DICOM application context name, "1.2.840.10008.3.1.1.1" (PS3.7 Annex A.2.1).
    public static let dicomApplicationContextName = "1.2.840.10008.3.1.1.1"

    /// Creates an A-ASSOCIATE-RQ.
    public init(
        protocolVersion: UInt16 = 1,
        calledAETitle: String,
        callingAETitle: String,
        applicationContextName: String = AssociateRQ.dicomApplicationContextName,
        presentationContexts: [PresentationContextRQ],
        userInformation: UserInformation
    ) {
        self.protocolVersion = protocolVersion
        self.calledAETitle = calledAETitle
        self.callingAETitle = callingAETitle
        self.applicationContextName = applicationContextName
        self.presentationContexts = presentationContexts
        self.userInformation = userInformation
    }

    /// Whether bit 0 of the protocol version (DICOM UL version 1) is set.
    public var supportsProtocolVersion1: Bool { self.protocolVersion & 1 == 1 }

    public init(body buffer: inout ByteBuffer) throws {
        let body = try AssociationPDUBody<PresentationContextRQ>(
            body: &buffer,
            pduName: "A-ASSOCIATE-RQ",
            contextItemType: .presentationContextRQ
        ) { try PresentationContextRQ(itemBody: &$0) }
        guard !body.presentationContexts.isEmpty else {
            throw PDUError.missingItem("presentation context item (0x20)", in: "A-ASSOCIATE-RQ")
        }
        self.protocolVersion = body.protocolVersion
        self.calledAETitle = body.calledAETitle
        self.callingAETitle = body.callingAETitle
        self.applicationContextName = body.applicationContextName
        self.presentationContexts = body.presentationContexts
        self.userInformation = body.userInformation
    }

    public func encodeBody(into buffer: inout ByteBuffer) throws {
        let body = AssociationPDUBody(
            protocolVersion: self.protocolVersion,
            calledAETitle: self.calledAETitle,
            callingAETitle: self.callingAETitle,
            applicationContextName: self.applicationContextName,
            presentationContexts: self.presentationContexts,
            userInformation: self.userInformation
        )
        try body.encode(into: &buffer) { context, out in try context.encode(into: &out) }
    }
}
