import ArgumentParser
import PX
import PXCommandLine
import PXCore
import PXPlaces

/// px-echo: one C-ECHO (PS3.7 §9.1.5) to a DIMSE node, or a QIDO-RS search (PS3.18 §10.6) of a DICOMweb
/// service (what it checked: ``WebVerification``), its result as the envelope's data.
public enum EchoCommand {
    public static func run(
        connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions, logging: LoggingOptions,
        output: OutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-echo")
        try await CommandRunner.run(
            output: output.output, backend: backend, need: .verify, peer: connection, timeouts: timeouts.timeouts
        ) { peer, data in
            data = PXOutput.json(try await peer.verify(logger: logger))
            return nil
        }
    }
}

extension EchoCommand {
    /// px-echo with several peers (or `--all-nodes`): every peer verified at once, each with its own timeouts,
    /// and one envelope listing each peer's result or error in the order given. Exit 0 only when every peer
    /// answered; otherwise `partialFailure` ("2 of 5 peers failed") and exit 1, the failures in `data.peers`.
    /// - Parameter given: the peers as given; `nil` for every `[nodes.NAME]` of the config file, by name.
    public static func run(
        peers given: [String]?, connection: ConnectionOptions, timeouts: TimeoutOptions, backend: BackendOptions,
        logging: LoggingOptions, output: OutputOptions
    ) async throws {
        let logger = logging.makeLogger(label: "px-echo")
        let limits = timeouts.timeouts
        let names: [String]
        do throws(PXError) {
            if let given { names = given } else { names = try allNodes() }
        } catch {
            throw ExitCode(output.output.finish(backend: backend.reportedName, data: nil, error: error))
        }
        // Each peer's capability (a usage error for one of them, an unknown node say, is that peer's outcome).
        var outcomes = [PeerOutcome?](repeating: nil, count: names.count)
        var checks: [(index: Int, backend: String, peer: any Verifying)] = []
        for (index, name) in names.enumerated() {
            var options = connection
            options.peer = name
            do throws(PXError) {
                let resolved = try options.backend(backend, for: .echo, timeouts: limits)
                let peer = try PeerNeed.verify.capability(of: resolved) { () throws(PXError) in
                    try options.connection(timeouts: limits)
                }
                checks.append((index, resolved.name, peer))
            } catch {
                outcomes[index] = PeerOutcome(peer: name, backend: backend.reportedName, result: .failure(error))
            }
        }
        // At most `concurrentChecks` associations at once, however many nodes the config lists.
        await withTaskGroup(of: (Int, PeerOutcome).self) { group in
            var pending = checks[...]
            func startNext() {
                guard let check = pending.popFirst() else { return }
                let name = names[check.index]
                group.addTask {
                    do throws(PXError) {
                        let verification = try await check.peer.verify(logger: logger)
                        return (
                            check.index, PeerOutcome(peer: name, backend: check.backend, result: .success(verification))
                        )
                    } catch {
                        return (check.index, PeerOutcome(peer: name, backend: check.backend, result: .failure(error)))
                    }
                }
            }
            for _ in 0..<concurrentChecks { startNext() }
            for await (index, outcome) in group {
                outcomes[index] = outcome
                startNext()
            }
        }
        let done = outcomes.compactMap { $0 }
        let failed = done.filter { $0.error != nil }.count
        let error = failed == 0 ? nil : PXError.partialFailure(failed: failed, total: done.count, what: "peers")
        let status = output.output.finish(
            backend: backend.reportedName, data: JSONValueEncoder.encode(PeersOutput(peers: done, failed: failed)),
            error: error)
        if status != PXExit.success { throw ExitCode(status) }
    }

    /// How many peers a several-peer px-echo checks at once.
    static let concurrentChecks = 16

    /// Every node of the config file, by name.
    /// - Throws: ``PXError/usage(_:)`` when the file names none (or cannot be read).
    static func allNodes() throws(PXError) -> [String] {
        let nodes = try PX.config().nodes.keys.sorted()
        guard !nodes.isEmpty else {
            throw .usage("--all-nodes: \(PXConfig.defaultPath ?? "the config file") names no [nodes.NAME]")
        }
        return nodes
    }

    /// One peer's line in a several-peer px-echo: its name as given, the backend that checked it, and its
    /// verification (as a one-peer px-echo's `data`) or its error.
    struct PeerOutcome: Encodable, Sendable {
        var peer: String
        var backend: String
        var result: Result<Verification, PXError>

        var error: PXError? {
            if case .failure(let error) = result { return error }
            return nil
        }

        enum CodingKeys: String, CodingKey { case peer, backend, status, data, error }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(peer, forKey: .peer)
            try container.encode(backend, forKey: .backend)
            switch result {
            case .success(.echo(let result)):
                try container.encode("success", forKey: .status)
                try container.encode(PXOutput.EchoOutput(result), forKey: .data)
            case .success(.web(let result)):
                try container.encode("success", forKey: .status)
                try container.encode(PXOutput.WebVerificationOutput(result), forKey: .data)
            case .failure(let error):
                try container.encode("error", forKey: .status)
                try container.encode(PXOutput.ErrorOutput(error), forKey: .error)
            }
        }
    }

    /// `data` of a several-peer px-echo: `{"peers": [...], "succeeded": N, "failed": M}`.
    struct PeersOutput: Encodable {
        var peers: [PeerOutcome]
        var succeeded: Int
        var failed: Int

        init(peers: [PeerOutcome], failed: Int) {
            self.peers = peers
            self.succeeded = peers.count - failed
            self.failed = failed
        }
    }
}
