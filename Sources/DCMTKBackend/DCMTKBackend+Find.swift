import DICOMData
import Logging
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

extension DCMTKBackend {
    /// C-FIND with `findscu -S|-P -v -X -od <fresh temp dir>`, or `findscu -W -d -X -od <fresh temp dir>` for a
    /// worklist query (PS3.4 C.4.1, K.4.1).
    ///
    /// The statuses come from the log (``FindLogParser``). For a worklist query they and each response's
    /// Affected SOP Class UID come from findscu's debug dump of each C-FIND-RSP (``FindDebugLogParser``): a
    /// response naming another SOP class than the request's (a Query/Retrieve match answering a worklist
    /// query; PS3.7 §9.1.2.1) fails the query with
    /// ``PXError/invalidResponse(_:)`` before its identifier is read, and findscu is ended, as the native backend
    /// aborts the association. Each identifier is decoded from its `rspNNNN.dcm` file as soon as findscu
    /// reports writing it, handed to `onResponse` and removed, so neither memory nor the temporary
    /// directory grows with the responses (identifiers are kept only with ``FindRequest/keepMatches``). Each is
    /// shaped to the keys asked (``FindRequest/shapedResponse(_:)``).
    /// ``FindRequest/maxResponses`` is findscu's `--cancel` one past the bound; a run that reaches it
    /// fails with ``PXError/tooManyResponses(limit:)``. The temporary directory is removed.
    public func find(
        _ request: FindRequest, connection: Connection, logger: Logger,
        onResponse: @Sendable (FindResponse) async throws(PXError) -> Void
    ) async throws(PXError) -> FindResult {
        let directory = try TemporaryDirectory(prefix: "px-find")
        defer { directory.remove(logger: logger) }
        // A worklist query at `-d`: findscu names a response's SOP class only in its debug dump of the C-FIND-RSP.
        // A Query/Retrieve query at `-v`: the dump costs 2.5x a query's time (300 matches: 116 ms against 47 ms,
        // scripts/bench-before-after.sh), and its answers are not checked for their class.
        let checksClass = request.model == .worklist
        var arguments = [Self.modelOption(request.model), checksClass ? "-d" : "-v", "-X", "-od", directory.path]
        if let cancel = request.cancelAfter { arguments += ["--cancel", String(cancel)] }
        arguments += Self.associationArguments(connection)
        arguments += try Self.userIdentityArguments(connection, tool: "findscu")
        arguments += Self.keyArguments(request.identifierWithLevel)
        arguments += Self.peerArguments(connection)

        var matches: [DataSet] = []
        var count = 0
        var exceeded = false
        var afterCancel = 0
        var ignoredCancel = false
        var pendingStatus: DIMSEStatus?
        var pendingFile: String?
        var finalStatus: DIMSEStatus?
        // findscu logs "Writing response dataset to file" before it writes the file: a file is
        // read once the next response (or the end) shows it is complete.
        func takePending() async throws(PXError) {
            guard let path = pendingFile else { return }
            pendingFile = nil
            let full = path.hasPrefix("/") ? path : directory.path + "/" + path
            defer { directory.removeFile(full, logger: logger) }
            // Past the limit: findscu has sent its C-CANCEL, but the peer may have sent more
            // matches before it arrived; like the native backend, they are dropped, up to
            // FindRequest.responsesAfterCancel: past them the peer ignores the cancel, and the error thrown
            // here ends findscu.
            let pastLimit = request.limit.map { count >= $0 } ?? false
            let pastBound = request.maxResponses.map { count >= $0 } ?? false
            if pastLimit || pastBound {
                exceeded = exceeded || !pastLimit
                afterCancel += 1
                if afterCancel > FindRequest.responsesAfterCancel {
                    ignoredCancel = true
                    throw PXError.aborted("the peer sent \(afterCancel) more matches after the C-CANCEL-RQ")
                }
                return
            }
            let file: Part10File
            do {
                file = try Part10File(contentsOf: full)
            } catch {
                throw PXError.invalidResponse("cannot read findscu's response file \(full): \(error)")
            }
            count += 1
            let identifier = request.shapedResponse(file.dataSet)
            if request.keepMatches { matches.append(identifier) }
            try await onResponse(FindResponse(status: pendingStatus ?? .pending, identifier: identifier))
        }
        var parser = FindDebugLogParser(askedSOPClassUID: request.model.findSOPClass)
        func handle(_ line: DCMTKLogLine) async throws(PXError) {
            let events: [FindDebugLogParser.Event]
            if checksClass {
                events = parser.feed(line)
            } else {
                switch FindLogParser.parse(line) {
                case .response(let number, let status)?: events = [.response(number: number, status: status)]
                case .wroteFile(let path)?: events = [.wroteFile(path: path)]
                case .final(let status)?: events = [.final(status: status)]
                case nil: events = []
                }
            }
            for event in events {
                switch event {
                case .response(_, let status):
                    try await takePending()
                    pendingStatus = status
                case .wroteFile(let path):
                    try await takePending()
                    pendingFile = path
                case .final(let status):
                    try await takePending()
                    finalStatus = status
                case .foreignSOPClass(let answered):
                    // The native backend's words (FindResponses.ForeignSOPClass); the error ends findscu.
                    throw PXError.invalidResponse(
                        "a C-FIND-RSP of SOP class \(answered) answered a C-FIND-RQ of SOP class \(request.model.findSOPClass)"
                    )
                }
            }
        }
        let outcome: ToolRunner.Outcome
        do {
            outcome = try await runner("findscu").run(
                arguments, deadline: connection.timeouts.deadline, logger: logger, onLine: handle)
        } catch  where ignoredCancel {
            // findscu is ended: what was asked for has come (the limit, or proof the bound was passed).
            logger.warning("\(error.message); findscu ended")
            if exceeded, let bound = request.maxResponses { throw PXError.tooManyResponses(limit: bound) }
            return FindResult(
                request: request, matches: matches, status: DIMSEStatus(code: 0xFE00, service: .find), count: count)
        }
        try await takePending()
        if exceeded, let bound = request.maxResponses { throw PXError.tooManyResponses(limit: bound) }
        let ended = finalStatus == nil ? outcome : Self.ignoringReleaseFailure(outcome, logger: logger)
        if let error = Self.failure(tool: "findscu", outcome: ended, connection: connection) { throw error }
        guard let finalStatus else {
            throw PXError.invalidResponse(
                "findscu ended without a final C-FIND response (exit \(outcome.exitCode ?? -1))")
        }
        return FindResult(request: request, matches: matches, status: finalStatus, count: count)
    }

    /// `outcome` without a failed A-RELEASE, once the final response is in: the query is complete whatever
    /// the release does. Orthanc 1.10 answers a C-CANCEL with a Cancel response that carries a data set
    /// (PS3.7 §9.1.2.1.6 says it has none), which findscu 3.6.7 leaves unread; the release then fails
    /// ("Association Release Failed: 0006:0316 DUL P-Data PDU arrived", exit 2).
    static func ignoringReleaseFailure(_ outcome: ToolRunner.Outcome, logger: Logger) -> ToolRunner.Outcome {
        let failures = outcome.diagnostics.filter(\.isFailure)
        guard !outcome.timedOut, outcome.signal == nil, !failures.isEmpty,
            failures.allSatisfy({ $0.text.hasPrefix("Association Release Failed") })
        else { return outcome }
        logger.debug("findscu's release failed after the final response", metadata: ["line": "\(failures[0].text)"])
        var out = outcome
        out.exitCode = 0
        out.diagnostics.removeAll(where: \.isFailure)
        return out
    }

    /// findscu's information model: `-S` Study Root, `-P` Patient Root, `-W` Modality Worklist.
    static func modelOption(_ model: QueryModel) -> String {
        switch model {
        case .studyRoot: "-S"
        case .patientRoot: "-P"
        case .worklist: "-W"
        }
    }

    /// `-k (gggg,eeee)=value` per element; a bare `-k (gggg,eeee)` for an empty return key. Multiple values
    /// are joined with `\`. A sequence's items are given by path, `-k (0040,0100)[0].(0008,0060)=CT`
    /// (sequence matching, PS3.4 §C.2.2.2.6); an empty sequence is `-k (gggg,eeee)`.
    static func keyArguments(_ identifier: DataSet, prefix: String = "") -> [String] {
        var out: [String] = []
        for element in identifier.elements where !element.tag.isGroupLength {
            let tag = element.tag.hexString.lowercased()
            let key = prefix + "(\(tag.prefix(4)),\(tag.suffix(4)))"
            if let items = element.items {
                let nested = items.enumerated().flatMap { index, item in
                    let itemKeys = keyArguments(item.dataSet, prefix: "\(key)[\(index)].")
                    // An empty item is the sequence's first item with no keys: `(gggg,eeee)[0]`.
                    return itemKeys.isEmpty ? ["-k", "\(key)[\(index)]"] : itemKeys
                }
                out += nested.isEmpty ? ["-k", key] : nested
                continue
            }
            let values = identifier.strings(element.tag) ?? []
            let text = values.joined(separator: "\\")
            out += ["-k", text.isEmpty ? key : "\(key)=\(text)"]
        }
        return out
    }
}

/// A fresh directory (``POSIX/makeTemporaryDirectory(prefix:)``), removed with its files.
struct TemporaryDirectory: Sendable {
    let path: String

    init(prefix: String, in parent: String? = nil) throws(PXError) {
        let base = parent ?? Self.defaultParent
        do {
            path = try POSIX.makeTemporaryDirectory(prefix: "\(base)/\(prefix).")
        } catch {
            throw .io("cannot create a temporary directory", path: base)
        }
    }

    /// `$TMPDIR`; else `/dev/shm` when it is a writable directory (findscu's hundreds of small response
    /// files are created, read once and removed: on tmpfs that costs no disk file system work; see
    /// docs/benchmarks.rst); else `/tmp`.
    static var defaultParent: String {
        if let tmp = ProcessEnvironment.value("TMPDIR"), !tmp.isEmpty { return tmp }
        var info = stat()
        if stat("/dev/shm", &info) == 0, info.st_mode & S_IFMT == S_IFDIR, access("/dev/shm", W_OK | X_OK) == 0 {
            return "/dev/shm"
        }
        return "/tmp"
    }

    /// Removes one file of the directory (a response already read).
    func removeFile(_ path: String, logger: Logger) {
        if unlink(path) != 0 { logger.debug("cannot remove temporary file", metadata: ["path": "\(path)"]) }
    }

    /// Removes the files in the directory (it has no subdirectories) and the directory.
    func remove(logger: Logger) {
        guard let dir = opendir(path) else { return }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names where unlink("\(path)/\(name)") != 0 {
            logger.debug("cannot remove temporary file", metadata: ["path": "\(path)/\(name)"])
        }
        if rmdir(path) != 0 { logger.debug("cannot remove temporary directory", metadata: ["path": "\(path)"]) }
    }
}
