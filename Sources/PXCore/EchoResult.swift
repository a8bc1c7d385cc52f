import DICOMData

/// The outcome of a successful C-ECHO (PS3.7 §9.1.5).
public struct EchoResult: Hashable, Sendable {
    public var node: DICOMNode
    public var callingAETitle: String
    /// The C-ECHO-RSP status.
    public var status: DIMSEStatus
    /// Wall time from start to release, in seconds.
    public var elapsed: Double
    /// The user identity presented and the acceptor's answer to it (PS3.7 §D.3.3.7); `nil`: none presented.
    public var userIdentity: UserIdentityOutcome?

    public init(
        node: DICOMNode, callingAETitle: String, status: DIMSEStatus, elapsed: Double,
        userIdentity: UserIdentityOutcome? = nil
    ) {
        self.node = node
        self.callingAETitle = callingAETitle
        self.status = status
        self.elapsed = elapsed
        self.userIdentity = userIdentity
    }
}

/// What px-echo checked on a DICOMweb service (PS3.18): a QIDO-RS search for at most one study
/// (§10.6) answered with a success status and a DICOM JSON array (§F.2), with the credentials given.
/// A DICOMweb service has no C-ECHO and no AE title: this is its verification, named by its URL.
public struct WebVerification: Hashable, Sendable {
    /// The service's base URL.
    public var url: String
    public var host: String
    public var port: Int
    /// The transaction that answered: `QIDO-RS`.
    public var checked: String
    /// The request sent, relative to the base URL: `GET /studies?limit=1`.
    public var request: String
    /// The HTTP status of the answer (200, or 204 No Content for an empty archive).
    public var httpStatus: Int
    /// The answer's `Content-Type` (`nil` when the service sent none, as with 204).
    public var contentType: String?
    /// The studies in the answer's JSON array (0 or 1): the array was read whole and each match decoded.
    public var matches: Int
    /// Wall time of the request and answer, in seconds.
    public var elapsed: Double

    public init(
        url: String, host: String, port: Int, checked: String, request: String, httpStatus: Int,
        contentType: String?, matches: Int, elapsed: Double
    ) {
        self.url = url
        self.host = host
        self.port = port
        self.checked = checked
        self.request = request
        self.httpStatus = httpStatus
        self.contentType = contentType
        self.matches = matches
        self.elapsed = elapsed
    }
}

/// How a peer answered a verification, by what it is: a DIMSE node's C-ECHO (PS3.7 §9.1.5), a DICOMweb
/// service's search (``WebVerification``).
public enum Verification: Hashable, Sendable {
    case echo(EchoResult)
    case web(WebVerification)
}

extension PXOutput {
    /// px-echo's data for a DIMSE node: `{"host", "port", "calledAETitle", "callingAETitle", "dimseStatus"}`, and
    /// `"userIdentity"` (``UserIdentityOutput``) when one was presented.
    public struct EchoOutput: Encodable {
        public var host: String
        public var port: Int
        public var calledAETitle: String
        public var callingAETitle: String
        public var dimseStatus: StatusOutput
        public var userIdentity: UserIdentityOutput?

        public init(_ result: EchoResult) {
            host = result.node.host
            port = result.node.port
            calledAETitle = result.node.calledAETitle
            callingAETitle = result.callingAETitle
            dimseStatus = StatusOutput(result.status)
            userIdentity = result.userIdentity.map(UserIdentityOutput.init)
        }
    }

    /// The user identity presented (PS3.7 §D.3.3.7) and the acceptor's answer: `{"type", "username",
    /// "positiveResponseRequested", "positiveResponseReceived", "serverResponse"}`. `username` is absent for token
    /// types, `positiveResponseReceived` and `serverResponse` (the Server-response field as UTF-8 text, empty for
    /// username types) are present only when a positive response was asked for. Never the passcode.
    public struct UserIdentityOutput: Encodable {
        public var type: String
        public var username: String?
        public var positiveResponseRequested: Bool
        public var positiveResponseReceived: Bool?
        public var serverResponse: String?

        public init(_ outcome: UserIdentityOutcome) {
            type = outcome.type
            username = outcome.username
            positiveResponseRequested = outcome.positiveResponseRequested
            positiveResponseReceived = outcome.positiveResponseReceived
            serverResponse =
                outcome.positiveResponseReceived == true
                ? String(decoding: outcome.serverResponse, as: UTF8.self) : nil
        }
    }

    /// px-echo's data for a DICOMweb service, what was checked and never a DIMSE status: `{"checked", "url",
    /// "host", "port", "request", "httpStatus", "contentType", "matches"}`.
    public struct WebVerificationOutput: Encodable {
        public var checked: String
        public var url: String
        public var host: String
        public var port: Int
        public var request: String
        public var httpStatus: Int
        public var contentType: Nullable<String>
        public var matches: Int

        public init(_ result: WebVerification) {
            checked = result.checked
            url = result.url
            host = result.host
            port = result.port
            request = result.request
            httpStatus = result.httpStatus
            contentType = Nullable(result.contentType)
            matches = result.matches
        }
    }

    /// px-echo's data (``EchoOutput``).
    public static func json(_ result: EchoResult) -> JSONValue { JSONValueEncoder.encode(EchoOutput(result)) }

    /// px-echo's data for a DICOMweb service (``WebVerificationOutput``).
    public static func json(_ result: WebVerification) -> JSONValue {
        JSONValueEncoder.encode(WebVerificationOutput(result))
    }

    /// px-echo's data: ``json(_:)-(EchoResult)`` for a node, ``json(_:)-(WebVerification)`` for a DICOMweb service.
    public static func json(_ verification: Verification) -> JSONValue {
        switch verification {
        case .echo(let result): return json(result)
        case .web(let result): return json(result)
        }
    }
}
