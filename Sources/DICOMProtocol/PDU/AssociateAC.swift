import NIOCore

/// The A-ASSOCIATE-AC PDU, type 0x02 (PS3.8 §9.3.3).
///
/// The AE-title fields are reserved in an AC: they should echo the RQ and are decoded, but must not be tested.
/// A protocol version without bit 0 is a malformed AC and throws ``PDUError/unsupportedProtocolVersion(_:)``.
public struct AssociateAC: PDUMessage {
    public static var pduType: PDUType { .associateAC }

    /// The protocol-version bit field; bit 0 set means version 1.
    public var protocolVersion: UInt16
    /// The called AE title echoed from the RQ (reserved; not to be tested).
    public var calledAETitle: String
    /// The calling AE title echoed from the RQ (reserved; not to be tested).
    public var callingAETitle: String
    /// The application context name (Item 0x10).
    public var applicationContextName: String
    /// The per-context answers (Items 0x21).
    public var presentationContexts: [PresentationContextAC]
    /// The user information (Item 0x50).
    public var userInformation: UserInformation

    /// Creates an A-ASSOCIATE-AC.
    public init(
        protocolVersion: UInt16 = 1,
        calledAETitle: String,
        callingAETitle: String,
        applicationContextName: String = AssociateRQ.dicomApplicationContextName,
        presentationContexts: [PresentationContextAC],
        userInformation: UserInformation
    ) {
        self.protocolVersion = protocolVersion
        self.calledAETitle = calledAETitle
        self.callingAETitle = callingAETitle
        self.applicationContextName = applicationContextName
        self.presentationContexts = presentationContexts
        self.userInformation = userInformation
    }

    public init(body buffer: inout ByteBuffer) throws {
        let body = try AssociationPDUBody<PresentationContextAC>(
            body: &buffer,
            pduName: "A-ASSOCIATE-AC",
            contextItemType: .presentationContextAC
        ) { try PresentationContextAC(itemBody: &$0) }
        guard body.protocolVersion & 1 == 1 else {
            throw PDUError.unsupportedProtocolVersion(body.protocolVersion)
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
