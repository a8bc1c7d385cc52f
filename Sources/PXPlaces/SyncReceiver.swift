import DICOMData
import Logging
import NativeBackend
import PXCore
import PXIndex
import PXStorage
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// px's own C-STORE receiver (native backend, in this process) for a sync whose source node sends by C-MOVE
/// (PS3.4 §C.4.2) into a folder place: each instance placed in the folder's tree and recorded in its index.
public enum SyncReceiver {
    /// Runs `body` with the receiver listening on `port` as `aeTitle`, placing into `folder`; stops it after.
    /// - Throws: ``PXError`` when the receiver cannot start; what `body` throws.
    public static func run<T: Sendable>(
        port: Int, aeTitle: String, into folder: FolderPlace, logger: Logger,
        _ body: () async throws(PXError) -> T
    ) async throws(PXError) -> T {
        let configuration = try ListenConfiguration(
            port: port, aeTitle: aeTitle, root: folder.root, layout: folder.layout, duplicates: .overwrite,
            acceptsAnyCalledAETitle: false, shutdownGrace: 5)
        let receiver = NativeBackend()
        let started = ReceiverState()
        let task = Task {
            do {
                try await receiver.listen(configuration, logger: logger) { event in
                    switch event {
                    case .listening: started.ready()
                    case .instanceReceived(let instance):
                        do {
                            if let header = instance.header {
                                try await folder.record([FolderPlace.PlacedFile(path: instance.path, header: header)])
                            } else {
                                try await folder.record(path: instance.path)
                            }
                        } catch {
                            logger.warning(
                                "received file not indexed",
                                metadata: ["file": "\(instance.path)", "error": "\(error)"])
                        }
                    case .storeFailed(let path, let uid, let error, _):
                        logger.warning(
                            "receiver could not store",
                            metadata: ["path": "\(path ?? "-")", "uid": "\(uid ?? "-")", "error": "\(error)"])
                    default: break
                    }
                }
            } catch {
                started.fail(PXError.from(error))
            }
        }
        defer { task.cancel() }
        if let failure = await started.wait() { throw failure }
        let value = try await body()
        task.cancel()
        _ = await task.result
        return value
    }
}

/// Whether the receiver is listening, or why it could not.
final class ReceiverState: Sendable {
    private let state = Mutex<(ready: Bool, failure: PXError?)>((false, nil))
    func ready() { state.withLock { $0.ready = true } }
    func fail(_ error: PXError) { state.withLock { $0.failure = error } }
    func wait() async -> PXError? {
        while true {
            let now = state.withLock { $0 }
            if let failure = now.failure { return failure }
            if now.ready { return nil }
            do { try await Task.sleep(for: .milliseconds(10)) } catch { return .aborted("cancelled") }
        }
    }
}

/// Keeps a folder destination's staging folder (`.px-incoming`) for the whole run: every retrieval into the
/// folder (C-GET on the native backend, WADO-RS) removes it with rmdir when it ends, which, with `--parallel`
/// retrievals into the same root, pulled it from under the others (their next temporary file failed with
/// ENOENT). A file in it makes those rmdirs fail harmlessly; it is removed, and the folder with it, at the end.
struct StagingHold {
    let file: String?
    let folder: String?

    init(destination: Endpoint, dryRun: Bool) throws(PXError) {
        guard !dryRun, let place = destination.receivingFolder else {
            (file, folder) = (nil, nil)
            return
        }
        let staging: String
        do { staging = try StorageRoot(path: place.root).stagingFolder() } catch { throw .storage(error) }
        // One name per run: with a shared name the first run to end removed the others' hold (and, with it
        // gone, the folder under their transfers).
        let path = staging + "/" + StorageRoot.holdName()
        let descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw .io("cannot hold the staging folder (\(POSIX.errorText()))", path: path) }
        close(descriptor)
        (file, folder) = (path, staging)
    }

    func release() {
        if let file { unlink(file) }
        if let folder { rmdir(folder) }
    }
}
