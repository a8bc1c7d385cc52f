import DICOMData
import Logging
import PXCore
import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

extension DCMTKBackend {
    /// C-GET with `getscu -v +B -od <staging>` (PS3.4 C.4.3): getscu proposes the storage SOP classes
    /// with the SCP role and writes each C-STORE sub-operation bit-preserving (`+B`) to a staging
    /// directory under the root; px then places each file into the ``StorageLayout`` tree with
    /// ``InstancePlacer`` (overwriting the same instance, as getscu and the native backend do).
    ///
    /// What this backend cannot promise: getscu has answered each C-STORE with success before px
    /// moves the file, so a failure to move it is a `storeFailures` entry, not a failed sub-operation.
    /// getscu exits 0 on a failure status, so the status comes from the log.
    public func get(
        _ request: GetRequest, connection: Connection, logger: Logger,
        onProgress: @Sendable (MoveProgress) async -> Void
    ) async throws(PXError) -> GetResult {
        try Self.requirePlain(connection, tool: "getscu")
        let placer = try request.placer()
        let staging = try TemporaryDirectory(prefix: ".px-incoming", in: placer.root)
        defer { staging.remove(logger: logger) }
        var arguments = [request.model == .studyRoot ? "-S" : "-P", "-v", "+B", "-od", staging.path]
        arguments += Self.associationArguments(connection)
        arguments += try Self.userIdentityArguments(connection, tool: "getscu")
        for key in request.keys { arguments += ["-k", "\(key.keyword)=\(key.value)"] }
        arguments += Self.peerArguments(connection)

        var parser = GetSCULogParser()
        let outcome = try await runner("getscu").run(arguments, deadline: connection.timeouts.deadline, logger: logger)
        { line in
            if let progress = parser.feed(line) { await onProgress(progress) }
        }
        guard let status = parser.finalStatus, !outcome.timedOut, outcome.signal == nil else {
            if let error = Self.failure(tool: "getscu", outcome: outcome, connection: connection) { throw error }
            throw PXError.invalidResponse(
                "getscu ended without a final C-GET response (exit \(outcome.exitCode ?? -1))")
        }
        var instances: [ReceivedInstance] = []
        var failures: [ListenEvent] = []
        for name in try Self.fileNames(in: staging.path).sorted() {
            let path = staging.path + "/" + name
            do throws(PXError) {
                let (instance, _, _) = try Self.place(
                    staged: path, with: placer, sender: connection.node.calledAETitle, reportsDataSetLength: true,
                    association: nil)
                instances.append(instance)
            } catch {
                logger.info("could not store a received file", metadata: ["path": "\(path)", "error": "\(error)"])
                failures.append(.storeFailed(path: path, sopInstanceUID: nil, error: error))
            }
        }
        let final = MoveProgress(
            remaining: parser.remaining ?? 0, completed: parser.completed ?? parser.storesAnswered,
            failed: parser.failed ?? parser.storesRefused, warning: parser.warning ?? 0, status: status)
        await onProgress(final)
        var result = GetResult(
            request: request, status: status, remaining: final.remaining, completed: final.completed,
            failed: final.failed,
            warning: final.warning, responses: parser.responses, instances: instances, storeFailures: failures)
        if final.failed > 0 { result.limitation = Self.getscuStorageLimitation }
        return result
    }

    /// What getscu 3.6.7 cannot receive: it proposes its storage contexts (PS3.4 §C.4.3) with the uncompressed
    /// transfer syntaxes only (its `+x?` options add one compressed syntax for a whole run), so an instance the
    /// peer holds compressed arrives only when the peer can convert it, and otherwise fails.
    static let getscuStorageLimitation =
        "getscu 3.6.7 (--backend dcmtk) proposes uncompressed storage contexts only, so an instance the peer "
        + "holds compressed (JPEG, JPEG-LS, JPEG 2000, RLE) fails unless the peer converts it; "
        + "--backend native proposes every transfer syntax"

    /// Places one file getscu or storescp wrote into the tree with `placer`, the one placement path
    /// of both backends; `bytes` is the file's size, or with `reportsDataSetLength` its data set's
    /// (file size less ``DICOMData/Part10File/dataSetOffset``, PS3.10 §7.1). With `requestedSOPInstanceUID`
    /// (the C-STORE-RQ's, when known) a data set holding another UID is not placed. The staged file is
    /// gone afterwards in every case.
    static func place(
        staged path: String, with placer: InstancePlacer, sender: String?, reportsDataSetLength: Bool,
        association: UInt64?,
        requestedSOPInstanceUID: String? = nil
    ) throws(PXError) -> (ReceivedInstance, InstancePlacer.Placement, DataSet) {
        let file: Part10File
        do {
            file = try Part10File.readHeader(contentsOf: path)
        } catch {
            unlink(path)
            throw PXError.io("cannot read the received file: \(error)", path: path)
        }
        var info = stat()
        let size = stat(path, &info) == 0 ? Int(info.st_size) : 0
        let ds = file.dataSet
        if let requested = requestedSOPInstanceUID {
            let stored = ds.uid(.sopInstanceUID) ?? []
            if !stored.elementsEqual(requested.utf8) {
                unlink(path)
                throw .sopInstanceMismatch(request: requested, dataSet: String(decoding: stored, as: UTF8.self))
            }
        }
        let placement: InstancePlacer.Placement
        do {
            placement = try placer.place(temporaryFile: path, dataSet: ds)
        } catch {
            throw PXError.storage(error)
        }
        let instance = ReceivedInstance(
            path: placement.path,
            sopClassUID: ds.string(.sopClassUID) ?? file.meta.string(.mediaStorageSOPClassUID) ?? "",
            sopInstanceUID: ds.string(.sopInstanceUID) ?? file.meta.string(.mediaStorageSOPInstanceUID) ?? "",
            studyInstanceUID: ds.string(.studyInstanceUID) ?? "",
            seriesInstanceUID: ds.string(.seriesInstanceUID) ?? "",
            callingAETitle: sender, bytes: reportsDataSetLength ? max(0, size - file.dataSetOffset) : size,
            transferSyntaxUID: file.transferSyntax.uid, duplicate: placement.duplicate, association: association)
        return (instance, placement, ds)
    }

    /// The regular files directly in `directory`.
    static func fileNames(in directory: String) throws(PXError) -> [String] {
        guard let dir = opendir(directory) else {
            throw PXError.io("cannot read the staging directory (\(POSIX.errorText()))", path: directory)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            names.append(name)
        }
        return names
    }
}
