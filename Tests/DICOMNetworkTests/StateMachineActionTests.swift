import DICOMData
import DICOMProtocol
import Foundation
import NIOCore
import PXTestSupport
import Testing

@testable import DICOMNetwork

/// The transport does what ``AssociationStateMachine`` says: ARTIM runs from the action that starts it to
/// the one that stops it, and a request the server does not perform is answered, not aborted.
@Suite("State machine actions on the wire", .serialized, .timeLimit(.minutes(10)))
struct StateMachineActionTests {
    /// An A-ASSOCIATE-RQ for Verification, as bytes.
    static func associateRQ(called: String) throws -> String {
        let rq = try AssociationRequestParameters(
            callingAETitle: "RAWSCU", calledAETitle: called, presentationContexts: [.verification],
            implementationClassUID: "1.2.3.4"
        ).makeAssociateRQ()
        var buffer = ByteBuffer()
        try PDU.associateRQ(rq).encode(into: &buffer)
        return buffer.readableBytesView.map { String(format: "%02x", $0) }.joined()
    }

    @Test(
        "ARTIM started by the A-ASSOCIATE-RJ bounds the whole Sta13 wait: PDUs the peer keeps sending do not extend it",
        .tags(.integration), .integrationTier)
    func artimSpansSta13() async throws {
        let rq = try Self.associateRQ(called: "WRONG")
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir, configure: { $0.artimTimeout = .milliseconds(600) }) {
                server in
                // After the RJ, an A-RELEASE-RQ every 100 ms (Sta13 ignores them, AA-6) and never a close:
                // only ARTIM can end the connection. Prints the reply and when the server closed.
                let script = """
                    import socket, time
                    s = socket.create_connection(("127.0.0.1", \(server.localPort)))
                    s.sendall(bytes.fromhex("\(rq)"))
                    s.settimeout(0.1)
                    t = time.time(); data = b""; closed = None
                    while time.time() - t < 20:
                        try:
                            chunk = s.recv(65536)
                            if not chunk:
                                closed = time.time() - t; break
                            data += chunk
                        except socket.timeout:
                            pass
                        except ConnectionResetError:
                            # The server closed with our unread A-RELEASE-RQs in its buffer: a reset is a close.
                            closed = time.time() - t; break
                        try:
                            s.sendall(bytes.fromhex("050000000004" + "00000000"))
                        except OSError:
                            closed = time.time() - t; break
                    print(data[:1].hex(), -1 if closed is None else round(closed, 3))
                    """
                let result = try await TestSupport.run("python3", ["-c", script])
                let parts = result.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
                #expect(parts.first == "03", "an A-ASSOCIATE-RJ first: \(result.output)")
                let closedAfter = Double(parts.last ?? "") ?? -1
                // Not before ARTIM (0.6 s), and while the peer was still sending: had its PDUs restarted
                // ARTIM, the server would never close. (How soon after 0.6 s depends on the machine's load:
                // a full parallel run on two cores has delayed it by seconds.)
                #expect(closedAfter >= 0.5, "closed after \(closedAfter) s (-1: never)")
            }
        }
    }

    @Test("a request the server does not perform gets 0x0211 Unrecognized Operation, and the association goes on")
    func unrecognizedOperation() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            try await TestSupport.withServer(directory: dir) { server in
                let client = DICOMClient(
                    configuration: .init(callingAETitle: "PXSCU"), logger: TestSupport.logger("px.test.client"))
                let peer = DICOMPeer(host: "127.0.0.1", port: server.localPort, aeTitle: "PXSCP")
                let (response, echo) = try await client.withAssociation(to: peer, proposing: [.verification]) {
                    association in
                    // N-GET-RQ (PS3.7 §10.3.2) on the Verification context.
                    var request = CommandSet()
                    request[CommandSet.Element.commandField] = .uint16(0x0110)
                    request[CommandSet.Element.messageID] = .uint16(5)
                    request[CommandSet.Element.requestedSOPClassUID] = .string(WellKnownUID.verificationSOPClass)
                    request[CommandSet.Element.commandDataSetType] = .uint16(CommandSet.noDataSet)
                    let context = try association.context(for: WellKnownUID.verificationSOPClass, "N-GET")
                    try await association.connection.send(
                        .unrecognized(request), presentationContextID: context.id, dataSet: nil)
                    let (response, _) = try await association.response(to: 5, waitingFor: "the N-GET-RSP")
                    return (response, try await association.echo())
                }
                #expect(response.commandField.rawValue == 0x8110)
                #expect(response.status == .unrecognizedOperation)
                #expect(
                    response.commandSet.string(CommandSet.Element.affectedSOPClassUID)
                        == WellKnownUID.verificationSOPClass)
                #expect(echo == .success)
            }
        }
    }
}
