import DICOMData

/// The files of a push, packed: each file's path and SOP Instance UID as bytes in 64 KiB chunks, what is rare
/// (an error, a warning, a place's index record) beside them by position.
///
/// A ``PushFile`` of Swift strings costs about 650 bytes in memory, and px-push held each file's three or
/// four times over (request, session, result): 1.1 KB a file, 33 MB more at 30,000 files than at 300
/// (issue 34). Packed, a file costs its path and SOP Instance UID bytes plus 24 (the SOP classes and transfer
/// syntaxes, a handful per push, are kept once): about 150 bytes. Elements are made as they are read.
public struct PushFiles: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    /// Where one file's path and SOP Instance UID are (in ``chunks``), and its SOP Class and transfer syntax
    /// (in ``uids``: the few a push has, each kept once).
    private struct Entry: Hashable, Sendable {
        var chunk: UInt32
        var offset: UInt32
        var pathLength: UInt32
        var instanceLength: UInt32
        var sopClass: UInt32
        var transferSyntax: UInt32
    }

    /// What few files have.
    private struct Extra: Hashable, Sendable {
        var error: PXError?
        var warning: String?
        var indexed: IndexedFile?
    }

    /// The size of a chunk of ``chunks``: the bytes grow a chunk at a time, never by copying all of them to a
    /// buffer twice as large (which for a moment holds both).
    private static let chunkSize = 64 * 1024

    private var chunks: [[UInt8]] = []
    private var entries: [Entry] = []
    private var uids: [String] = []
    private var uidNumbers: [String: UInt32] = [:]
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
            path: self.string(entry, from: 0, length: entry.pathLength),
            sopClassUID: self.uids[Int(entry.sopClass)],
            sopInstanceUID: self.string(entry, from: entry.pathLength, length: entry.instanceLength),
            transferSyntaxUID: self.uids[Int(entry.transferSyntax)])
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
        return self.string(entry, from: 0, length: entry.pathLength)
    }

    /// Whether planning refused the file at `position` (it is never sent).
    public func isRefused(at position: Int) -> Bool {
        self.extras[position]?.error != nil
    }

    public mutating func append(_ file: PushFile) {
        let length = file.path.utf8.count + file.sopInstanceUID.utf8.count
        if self.chunks.isEmpty || self.chunks[self.chunks.count - 1].count + length > Self.chunkSize {
            var chunk: [UInt8] = []
            chunk.reserveCapacity(Swift.max(Self.chunkSize, length))
            self.chunks.append(chunk)
        }
        let chunk = self.chunks.count - 1
        let offset = self.chunks[chunk].count
        self.chunks[chunk].append(contentsOf: file.path.utf8)
        self.chunks[chunk].append(contentsOf: file.sopInstanceUID.utf8)
        if file.error != nil || file.warning != nil || file.indexed != nil {
            self.extras[self.entries.count] = Extra(error: file.error, warning: file.warning, indexed: file.indexed)
        }
        self.entries.append(
            Entry(
                chunk: UInt32(chunk), offset: UInt32(offset), pathLength: UInt32(file.path.utf8.count),
                instanceLength: UInt32(file.sopInstanceUID.utf8.count), sopClass: self.number(file.sopClassUID),
                transferSyntax: self.number(file.transferSyntaxUID)))
    }

    private mutating func number(_ uid: String) -> UInt32 {
        if let number = self.uidNumbers[uid] { return number }
        let number = UInt32(self.uids.count)
        self.uids.append(uid)
        self.uidNumbers[uid] = number
        return number
    }

    private func string(_ entry: Entry, from start: UInt32, length: UInt32) -> String {
        self.chunks[Int(entry.chunk)].withUnsafeBufferPointer { buffer in
            let from = Int(entry.offset + start)
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[from..<from + Int(length)]), as: UTF8.self)
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
