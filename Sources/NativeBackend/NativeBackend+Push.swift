import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import PXCore

extension NativeBackend {
    /// C-STORE SCU (PS3.4 Annex B) on ONE association: only the contexts the files need are
    /// proposed (``StorableFile/presentationContexts(for:)``), and each data set is streamed from disk
    /// in PDU-sized chunks when the accepted context has the file's transfer syntax. Up to
    /// ``PushRequest/window`` files are outstanding when the peer agrees to an asynchronous operations
    /// window (PS3.7 §D.3.3.3); results are reported as responses arrive. When the association
    /// fails after some files were stored, the result carries the failure instead of throwing it.
    public func push(
        _ request: PushRequest, connection: Connection, logger: Logger,
        onFile: @Sendable (PushFileResult) async -> Void
    ) async throws(PXError) -> PushResult {
        var results: [PushFileResult?] = Array(repeating: nil, count: request.files.count)
        var pending: [(index: Int, file: StorableFile)] = []
        for (index, file) in request.files.enumerated() {
            if let error = file.error {
                results[index] = PushFileResult(file: file, status: nil, error: error)
            } else {
                pending.append((index, StorableFile(
                    path: file.path, sopClassUID: file.sopClassUID, sopInstanceUID: file.sopInstanceUID,
                    transferSyntaxUID: file.transferSyntaxUID)))
            }
        }
        for result in results.compactMap({ $0 }) { await onFile(result) }
        var failure: PXError?
        if !pending.isEmpty {
            let client = self.client(connection, logger: logger, window: request.window)
            let peer = self.peer(connection)
            let contexts = StorableFile.presentationContexts(for: pending.map(\.file))
            let work = pending
            let (stream, continuation) = AsyncStream<(Int, StoreResult)>.makeStream()
            async let sent: Void = run("C-STORE", connection) {
                defer { continuation.finish() }
                try await client.withAssociation(to: peer, proposing: contexts) { association in
                    try await association.store(work.map(\.file)) { position, stored in
                        continuation.yield((work[position].index, stored))
                    }
                }
            }
            for await (index, stored) in stream {
                let file = request.files[index]
                let result: PushFileResult
                if let status = stored.status {
                    result = PushFileResult(file: file, status: status)
                } else if stored.error?.hasPrefix("no accepted presentation context") == true {
                    result = .noContext(file)
                } else {
                    result = PushFileResult(file: file, status: nil, error: .io("cannot send the file: \(stored.error ?? "unknown")", path: file.path))
                }
                results[index] = result
                await onFile(result)
            }
            do {
                try await sent
            } catch let error as PXError where pending.contains(where: { results[$0.index] != nil }) {
                // Some files went: report them, and what ended the association.
                failure = error
            } catch {
                throw PXError.from(error)
            }
        }
        return PushResult(
            files: results.enumerated().map { index, result in result ?? PushResult.notSent(request.files[index]) },
            failure: failure)
    }
}
