import ArgumentParser
import DICOMData
import PXCommandLine
import PXCore

/// The run-and-report path every network command shares: resolve the backend the peer and options choose,
/// take from it the capability the command needs, bound to the peer (``PeerNeed``: a DIMSE node's backend with
/// its connection, or a DICOMweb service; a peer without the capability is a usage error), run the command's
/// work with it, print the envelope (`status`, `backend`, `command`, `data`, `error`) and exit with
/// the status the error calls for (``PXExit``).
public enum CommandRunner {
    /// Runs `body` with the capability `need` asks for and reports.
    ///
    /// `state` is what the command has done so far; `body` updates it and returns the failure it
    /// noted without stopping (a failure status), or throws what stopped it. Either way the envelope's
    /// `data` is `data(state)`: a command that stops early still lists what it did. With
    /// `envelopeOnSuccess` false nothing more is printed when there is no failure (px-find's table).
    /// `executables` are the DCMTK tool paths when there is no `peer` (a peer has its own); `userIdentity`, whether
    /// the command checks or presents a user identity then (``PX/backend(_:executables:for:userIdentity:)``).
    /// `timeouts` bound the peer's operations (a DIMSE node's connection, a DICOMweb service's requests).
    ///
    /// - Throws: `ExitCode` with the envelope's status when it is not 0.
    public static func run<State, Capability>(
        output: CommandOutput, backend options: BackendOptions, executables: [String: String] = [:],
        userIdentity: Bool = false, need: PeerNeed<Capability>, peer: ConnectionOptions? = nil,
        timeouts: Timeouts = .standard, state initial: State,
        data: (State) -> JSONValue?, envelopeOnSuccess: Bool = true,
        _ body: (Capability, inout State) async throws -> PXError?
    ) async throws {
        var backendName = options.reportedName
        var state = initial
        var failure: PXError?
        do {
            let capability: Capability
            if let peer {
                let backend = try peer.backend(options, for: need.operation, timeouts: timeouts)
                backendName = backend.name
                capability = try need.capability(of: backend) { () throws(PXError) in
                    try peer.connection(timeouts: timeouts)
                }
            } else {
                let backend = ResolvedBackend.dimse(
                    try options.make(executables: executables, for: need.operation, userIdentity: userIdentity))
                backendName = backend.name
                capability = try need.capability(of: backend)
            }
            failure = try await body(capability, &state)
        } catch {
            failure = error.asPXError
        }
        if failure == nil && !envelopeOnSuccess { return }
        let status = output.finish(backend: backendName, data: data(state), error: failure)
        if status != PXExit.success { throw ExitCode(status) }
    }

    /// ``run(output:backend:executables:userIdentity:need:peer:timeouts:state:data:envelopeOnSuccess:_:)`` for a
    /// command whose `data` is built once, when it succeeds.
    public static func run<Capability>(
        output: CommandOutput, backend options: BackendOptions, executables: [String: String] = [:],
        userIdentity: Bool = false, need: PeerNeed<Capability>, peer: ConnectionOptions? = nil,
        timeouts: Timeouts = .standard, envelopeOnSuccess: Bool = true,
        _ body: (Capability, inout JSONValue?) async throws -> PXError?
    ) async throws {
        try await run(
            output: output, backend: options, executables: executables, userIdentity: userIdentity, need: need,
            peer: peer, timeouts: timeouts, state: nil,
            data: { $0 },
            envelopeOnSuccess: envelopeOnSuccess, body)
    }
}
