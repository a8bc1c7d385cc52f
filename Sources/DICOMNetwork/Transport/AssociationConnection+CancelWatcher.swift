import NIOCore

extension AssociationConnection {
    /// The association's ``CancelRequestWatcher``, added to the pipeline on first use: after the idle timer
    /// when there is one (so that it can hold back idle events), else after the read deadline handler.
    func cancelWatcher() async throws -> CancelRequestWatcher {
        let channel = self.channel
        return try await channel.eventLoop.submit {
            let operations = channel.pipeline.syncOperations
            if let existing = operations.firstHandler(CancelRequestWatcher.self) {
                return existing
            }
            let idle = operations.firstHandler(IdleStateHandler.self)
            let watcher = CancelRequestWatcher(idleTimeout: idle?.readTimeout)
            if let idle {
                try operations.addHandler(watcher, position: .after(idle))
            } else if let deadline = operations.firstHandler(ReadDeadlineHandler.self) {
                try operations.addHandler(watcher, position: .after(deadline))
            } else {
                throw DICOMNetworkError.protocolError("no PDU framing in the pipeline")
            }
            return watcher
        }.get()
    }
}

extension ChannelPipeline.SynchronousOperations {
    /// The first handler of a type, or `nil` when the pipeline has none.
    fileprivate func firstHandler<Handler: ChannelHandler>(_ type: Handler.Type) -> Handler? {
        do {
            return try self.handler(type: type)
        } catch {
            return nil  // ChannelPipelineError.notFound: absence is the answer, not a failure.
        }
    }
}
