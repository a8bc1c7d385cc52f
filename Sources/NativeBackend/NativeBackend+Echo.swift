import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

extension NativeBackend {
    /// C-ECHO (PS3.4 Annex A) on its own association.
    public func echo(connection: Connection, logger: Logger) async throws(PXError) -> EchoResult {
        let start = ContinuousClock.now
        let client = self.client(connection, logger: logger)
        let peer = self.peer(connection)
        let (status, response) = try await run("C-ECHO", connection) {
            try await client.withAssociation(to: peer, proposing: [.verification]) { association in
                (try await association.echo(), association.userIdentityResponse)
            }
        }
        if status.isFailure { throw PXError.dimseFailure(status, operation: "C-ECHO") }
        let elapsed = ContinuousClock.now - start
        return EchoResult(
            node: connection.node, callingAETitle: connection.local.aeTitle, status: status,
            elapsed: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
            userIdentity: connection.userIdentity?.outcome(response))
    }
}
