import DICOMData
import Logging
import PXCore

#if canImport(Glibc)
import Glibc
#endif

extension DCMTKBackend {
    /// C-GET with `getscu -v +B -od <staging>` (PS3.4 C.4.3): getscu proposes the storage SOP classes
    /// with the SCP role and writes each C-STORE sub-operation bit-preserving (`+B`) to a staging
    /// directory under the root; px then moves each file into the ``StorageLayout`` tree.
    ///
    /// What this backend cannot promise: getscu has answered each C-STORE with success before px
    /// moves the file, so a failure to move it is a `storeFailures` entry, not a failed sub-operation.
    /// getscu exits 0 on a failure status, so the status comes from the log.
    public func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try Self.requirePlain(connection, tool: "getscu")
        try InstancePlacer.makeDirectories(request.root)
        let staging = try TemporaryDirectory(prefix: ".px-incoming", in: request.root)
        defer { staging.remove(logger: logger) }
        var arguments = [request.model == .studyRoot ? "-S" : "-P", "-v", "+B", "-od", staging.path]
        arguments += Self.associationArguments(connection)
        for key in request.keys { arguments += ["-k", "\(key.keyword)=\(key.value)"] }
        arguments += Self.peerArguments(connection)

        var parser = GetSCULogParser()
        let outcome = try await runner("getscu").run(arguments, deadline: connection.timeouts.deadline, logger: logger) { line in
            if let progress = parser.feed(line) { await onProgress(progress) }
        }
        guard let status = parser.finalStatus, !outcome.timedOut, outcome.signal == nil else {
            if let error = Self.failure(tool: "getscu", outcome: outcome, connection: connection) { throw error }
            throw PXError.invalidResponse("getscu ended without a final C-GET response (exit \(outcome.exitCode ?? -1))")
        }
        var instances: [ReceivedInstance] = []
        var failures: [ListenEvent] = []
        for name in try Self.fileNames(in: staging.path).sorted() {
            let path = staging.path + "/" + name
            do throws(PXError) {
                instances.append(try Self.place(path, request: request, sender: connection.node.calledAETitle))
            } catch {
                logger.info("could not store a received file", metadata: ["path": "\(path)", "error": "\(error)"])
                failures.append(.storeFailed(path: path, sopInstanceUID: nil, error: error))
            }
        }
        let final = MoveProgress(
            remaining: parser.remaining ?? 0, completed: parser.completed ?? parser.storesAnswered,
            failed: parser.failed ?? parser.storesRefused, warning: parser.warning ?? 0, status: status)
        await onProgress(final)
        return GetResult(
            request: request, status: status, remaining: final.remaining, completed: final.completed, failed: final.failed,
            warning: final.warning, responses: parser.responses, instances: instances, storeFailures: failures)
    }

    /// Moves one received file into the tree; `bytes` is its data set's length (file size less the
    /// preamble, prefix and meta group, PS3.10 §7.1).
    static func place(_ path: String, request: GetRequest, sender: String) throws(PXError) -> ReceivedInstance {
        let file: Part10File
        do {
            file = try Part10File.readHeader(contentsOf: path)
        } catch {
            throw PXError.io("cannot read the received file: \(error)", path: path)
        }
        let ds = file.dataSet
        let destination = try request.layout.path(for: ds, root: request.root)
        let directory = String(destination[..<destination.lastIndex(of: "/")!])
        try InstancePlacer.makeDirectories(directory)
        guard rename(path, destination) == 0 else {
            throw PXError.io("cannot move the received file into place (\(POSIX.errorText()))", path: destination)
        }
        var info = stat()
        let size = stat(destination, &info) == 0 ? Int(info.st_size) : 0
        return ReceivedInstance(
            path: destination,
            sopClassUID: ds.string(.sopClassUID) ?? file.meta.string(.mediaStorageSOPClassUID) ?? "",
            sopInstanceUID: ds.string(.sopInstanceUID) ?? file.meta.string(.mediaStorageSOPInstanceUID) ?? "",
            studyInstanceUID: ds.string(.studyInstanceUID) ?? "", seriesInstanceUID: ds.string(.seriesInstanceUID) ?? "",
            callingAETitle: sender, bytes: max(0, size - file.dataSetOffset),
            transferSyntaxUID: file.transferSyntax.uid)
    }

    /// The regular files directly in `directory`.
    static func fileNames(in directory: String) throws(PXError) -> [String] {
        guard let dir = opendir(directory) else { throw PXError.io("cannot read the staging directory (\(POSIX.errorText()))", path: directory) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }
}
