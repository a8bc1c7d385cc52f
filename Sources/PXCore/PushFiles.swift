import DICOMData

/// The files of a push, packed: each file's path and UIDs as bytes in one buffer, what is rare (an error, a
/// warning, a place's index record) beside them by position.
///
/// A ``PushFile`` of Swift strings costs about 650 bytes in memory, and px-push held each file's three or
/// four times over (request, session, result): 1.1 KB a file, 33 MB more at 30,000 files than at 300
/// (issue 34). Packed, a file costs its path and UID bytes plus 24: about 280 bytes. Elements are made as
/// they are read.
public struct PushFiles: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// Where one file's strings are in ``bytes``: path, SOP Class, SOP Instance, transfer syntax, in that order.
    private struct Entry: Hashable, Sendable {
        var offset: Int
        var pathLength: UInt32
        var classLength: UInt32
        var instanceLength: UInt32
        var syntaxLength: UInt32
    }

    /// What few files have.
    private struct Extra: Hashable, Sendable {
        var error: PXError?
        var warning: String?
        var indexed: IndexedFile?
    }

    private var bytes: [UInt8] = []
    private var entries: [Entry] = []
    private var extras: [Int: Extra] = [:]

    public init() {}

    public init(_ files: some Sequence<PushFile>) {
        for file in files { self.append(file) }
    }

    public init(arrayLiteral files: PushFile...) {
        self.init(files)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { self.entries.count }

    public subscript(position: Int) -> PushFile {
        let entry = self.entries[position]
        var file = PushFile(
            path: self.string(entry.offset, entry.pathLength),
            sopClassUID: self.string(entry.offset + Int(entry.pathLength), entry.classLength),
            sopInstanceUID: self.string(entry.offset + Int(entry.pathLength + entry.classLength), entry.instanceLength),
            transferSyntaxUID: self.string(
                entry.offset + Int(entry.pathLength + entry.classLength + entry.instanceLength), entry.syntaxLength))
        if let extra = self.extras[position] {
            file.error = extra.error
            file.warning = extra.warning
            file.indexed = extra.indexed
        }
        return file
    }

    /// The path of the file at `position`, without making the rest of it.
    public func path(at position: Int) -> String {
        let entry = self.entries[position]
        return self.string(entry.offset, entry.pathLength)
    }

    /// Whether planning refused the file at `position` (it is never sent).
    public func isRefused(at position: Int) -> Bool {
        self.extras[position]?.error != nil
    }

    public mutating func append(_ file: PushFile) {
        let offset = self.bytes.count
        let lengths = [file.path, file.sopClassUID, file.sopInstanceUID, file.transferSyntaxUID].map { text in
            let before = self.bytes.count
            self.bytes.append(contentsOf: text.utf8)
            return UInt32(self.bytes.count - before)
        }
        if file.error != nil || file.warning != nil || file.indexed != nil {
            self.extras[self.entries.count] = Extra(error: file.error, warning: file.warning, indexed: file.indexed)
        }
        self.entries.append(
            Entry(
                offset: offset, pathLength: lengths[0], classLength: lengths[1], instanceLength: lengths[2],
                syntaxLength: lengths[3]))
    }

    private func string(_ offset: Int, _ length: UInt32) -> String {
        self.bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[offset..<offset + Int(length)]), as: UTF8.self)
        }
    }
}

/// The results of a push in request order, beside its ``PushFiles``: a status and a count of attempts per file,
/// the rare error by position. Elements are made as they are read (issue 34: a result per file held as
/// structs was the second copy of every file).
public struct PushFileResults: RandomAccessCollection, Hashable, Sendable {
    private struct Outcome: Hashable, Sendable {
        var status: DIMSEStatus?
        var attempts: Int32
        var answered: Bool
    }

    public let files: PushFiles
    private var outcomes: [Outcome]
    private var errors: [Int: PXError] = [:]

    /// No file answered yet.
    public init(unanswered files: PushFiles) {
        self.files = files
        self.outcomes = Array(repeating: Outcome(status: nil, attempts: 0, answered: false), count: files.count)
    }

    /// These results, in this order.
    public init(_ results: some Sequence<PushFileResult>) {
        let results = Array(results)
        self.init(unanswered: PushFiles(results.lazy.map(\.file)))
        for (index, result) in results.enumerated() { self.record(index, result) }
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { self.outcomes.count }

    /// The result of file `position`; an unanswered one reads as not sent (no status, no error).
    public subscript(position: Int) -> PushFileResult {
        let outcome = self.outcomes[position]
        return PushFileResult(
            file: self.files[position], status: outcome.status, error: self.errors[position],
            attempts: Int(outcome.attempts))
    }

    /// Whether file `position` has its result.
    public func isAnswered(_ position: Int) -> Bool { self.outcomes[position].answered }

    /// The peer's status for file `position`, without making its result; `nil` when none came.
    public func status(_ position: Int) -> DIMSEStatus? { self.outcomes[position].status }

    /// Whether file `position` was stored (success or warning), without making its result.
    public func succeeded(_ position: Int) -> Bool {
        self.errors[position] == nil && self.outcomes[position].status.map { !$0.isFailure } == true
    }

    /// Records `result` as file `position`'s; its ``PushFileResult/file`` is the one at that position already.
    public mutating func record(_ position: Int, _ result: PushFileResult) {
        self.outcomes[position] = Outcome(
            status: result.status, attempts: Int32(clamping: result.attempts), answered: true)
        self.errors[position] = result.error
    }
}
