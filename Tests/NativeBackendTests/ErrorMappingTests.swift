import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCommandLine
import PXCore
import Testing

@testable import NativeBackend

/// How the native backend reports a network failure: each ``DICOMNetworkError`` code becomes the
/// ``PXError`` the DCMTK backend reports for the same failure, and so the same `error.code` in the JSON
/// and the same exit status.
@Suite(.timeLimit(.minutes(2))) struct ErrorMappingTests {
    static let connection = try! Connection(
        node: DICOMNode(host: "pacs.example", port: 4242, calledAETitle: "PACS"), local: LocalAE(aeTitle: "PXSCU"),
        timeouts: Timeouts(connect: 3, acse: 7, dimse: 11, deadline: 60))

    static func mapped(_ error: DICOMNetworkError) -> PXError {
        NativeBackend.pxError(error, operation: "C-FIND", connection: Self.connection)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        let error: DICOMNetworkError
        let code: PXError.Code
        let exit: Int32
        var testDescription: String { "\(error.code) → \(code)" }
    }

    static let cases: [Case] = [
        Case(error: .connectionRefused(host: "pacs.example", port: 4242), code: .connectionRefused, exit: 1),
        Case(
            error: .connectionFailed(host: "pacs.example", port: 4242, DICOMNetworkError.invalidArgument("x")),
            code: .connectionRefused, exit: 1),
        Case(error: .unknownHost("pacs.example"), code: .unknownHost, exit: 1),
        Case(error: .connectTimeout(host: "pacs.example", port: 4242), code: .timeout, exit: 75),
        Case(error: .acseTimeout("an A-ASSOCIATE-AC"), code: .timeout, exit: 75),
        Case(error: .dimseTimeout("a C-FIND-RSP"), code: .timeout, exit: 75),
        Case(error: .idleTimeout(), code: .timeout, exit: 75),
        Case(
            error: .associationRejected(
                AssociateRJ(result: .rejectedPermanent, source: .serviceUser, reason: .calledAETitleNotRecognized)),
            code: .associationRejected, exit: 1),
        Case(error: .noAcceptablePresentationContext("C-FIND"), code: .noAcceptablePresentationContext, exit: 1),
        Case(error: .invalidArgument("no SOP Instance UID"), code: .usage, exit: 64),
        Case(error: .fileError("cannot open x"), code: .io, exit: 1),
        Case(
            error: .operationFailed("C-FIND", status: DIMSEStatus(code: 0xA700, service: .find)), code: .dimseFailure,
            exit: 1),
        Case(error: .aborted(by: Abort.provider(.unexpectedPDU)), code: .aborted, exit: 1),
        Case(error: .protocolError("invalid PDU"), code: .aborted, exit: 1),
        Case(error: .connectionClosed("the peer closed the connection"), code: .aborted, exit: 1),
    ]

    @Test("each network error becomes a PXError code and an exit status", arguments: Self.cases)
    func mapping(_ c: Case) {
        let error = Self.mapped(c.error)
        #expect(error.code == c.code)
        #expect(PXExit.code(for: error) == c.exit)
    }

    @Test("timeouts name the one that expired, with the connection's value")
    func timeoutsNameTheirValue() {
        #expect(Self.mapped(.connectTimeout(host: "h", port: 1)).message == "connect timeout after 3 s")
        #expect(Self.mapped(.acseTimeout("an A-ASSOCIATE-AC")).message == "ACSE timeout after 7 s")
        #expect(Self.mapped(.dimseTimeout("a C-FIND-RSP")).message == "DIMSE timeout after 11 s")
        #expect(Self.mapped(.idleTimeout()).details == ["timeout": "DIMSE"])
    }

    @Test("a rejection keeps DCMTK's wording of result, source and reason")
    func rejection() {
        let rejection = AssociateRJ(
            result: .rejectedTransient, source: .serviceProviderPresentation, reason: .localLimitExceeded)
        let error = Self.mapped(.associationRejected(rejection))
        #expect(error.details["result"] == "Rejected Transient")
        #expect(error.details["source"] == "Service Provider (Presentation Related)")
        #expect(error.details["reason"] == rejection.reasonDescription)
    }

    @Test("a failure status keeps its code and its name from the one table")
    func failureStatus() {
        let error = Self.mapped(.operationFailed("C-MOVE", status: DIMSEStatus(code: 0xA801, service: .move)))
        #expect(error.status?.code == 0xA801)
        #expect(error.details == ["status": "0xa801", "statusName": "Refused: MoveDestinationUnknown"])
        #expect(error.message == "C-FIND failed: Refused: MoveDestinationUnknown (0xa801)")
    }

    @Test("the refused and unknown-host errors name the peer of the connection")
    func peerNamed() {
        #expect(
            Self.mapped(.connectionRefused(host: "pacs.example", port: 4242)).message
                == "connection refused by pacs.example:4242")
        #expect(Self.mapped(.unknownHost("pacs.example")).message == "unknown host: pacs.example")
        let aborted = Self.mapped(.aborted(by: Abort.provider(.unexpectedPDU)))
        #expect(aborted.message.contains("association aborted by the peer"))
    }

    @Test("a real refused connection on loopback maps to connectionRefused and exit status 1")
    func refusedOnLoopback() async throws {
        // Port 1 on loopback: nothing listens there for an unprivileged test, so the connect is refused.
        let connection = try Connection(
            node: DICOMNode(host: "127.0.0.1", port: 1, calledAETitle: "NOBODY"), local: LocalAE(aeTitle: "PXSCU"),
            timeouts: Timeouts(connect: 5, acse: 5, dimse: 5, deadline: 30))
        let logger = Logger(label: "px.test.native")
        await #expect {
            _ = try await NativeBackend().echo(connection: connection, logger: logger)
        } throws: { error in
            guard let error = error as? PXError else { return false }
            return error.code == .connectionRefused && PXExit.code(for: error) == 1
        }
    }
}
