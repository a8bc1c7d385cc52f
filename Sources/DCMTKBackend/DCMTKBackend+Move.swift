import DICOMData
import Logging
import PXCore

extension DCMTKBackend {
    /// C-MOVE with `movescu -S|-P -d -aem <destination>` (PS3.4 C.4.2).
    ///
    /// `-d` is used because only the debug log shows the sub-operation counts and the numeric
    /// status of each C-MOVE-RSP. movescu's exit codes 68 (warning) and 69 (failure status) are
    /// statuses, not errors: the result carries them.
    public func move(
        _ request: MoveRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> MoveResult {
        try Self.requirePlain(connection, tool: "movescu")
        var arguments = [request.model == .studyRoot ? "-S" : "-P", "-d", "-aem", request.destination]
        arguments += Self.associationArguments(connection)
        arguments += try Self.userIdentityArguments(connection, tool: "movescu")
        for key in request.keys { arguments += ["-k", "\(key.keyword)=\(key.value)"] }
        arguments += Self.peerArguments(connection)

        var parser = MoveLogParser()
        var last: MoveProgress?
        var responses = 0
        let outcome = try await runner("movescu").run(arguments, deadline: connection.timeouts.deadline, logger: logger)
        { line in
            if let progress = parser.feed(line) {
                responses += 1
                last = progress
                await onProgress(progress)
            }
        }
        if outcome.timedOut || outcome.signal != nil || ![0, 68, 69].contains(outcome.exitCode ?? -1) {
            if let error = Self.failure(tool: "movescu", outcome: outcome, connection: connection) { throw error }
        }
        guard let last, parser.sawFinal || last.status.category != .pending else {
            if let error = Self.failure(tool: "movescu", outcome: outcome, connection: connection) { throw error }
            throw PXError.invalidResponse(
                "movescu ended without a final C-MOVE response (exit \(outcome.exitCode ?? -1))")
        }
        return MoveResult(
            request: request, status: last.status, completed: last.completed, failed: last.failed,
            warning: last.warning, responses: responses)
    }
}
