import DICOMData
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How a zip destination deflates the instances a retrieval places (px-sync's `--zip-deflate`).
public enum ZipDeflateMode: String, Sendable, Hashable, CaseIterable {
    /// With spare CPU only: the deflate workers run at the lowest priority, on the cores a transfer leaves
    /// (``ZipPlace/spareWorkers``: none on two cores), and when the study has arrived, the instances whose
    /// deflate has not started are stored (zip method 0, APPNOTE §4.4.5) instead, as instances of compressed
    /// transfer syntaxes are: archiving a study never waits for a backlog of deflates.
    case spare
    /// Every entry of an uncompressed transfer syntax deflated, however long it takes: the archive waits for
    /// each deflate (and deflates itself what has none).
    case all
}

/// Deflates each instance placed in a temporary tree while the retrieval that places them goes on, on
/// worker threads of their own; for ``ZipDeflateMode/spare`` at the lowest CPU priority (nice 19, each
/// thread its own: the rest of the process keeps its priority), so that deflating takes only CPU the
/// transfer and its peer leave idle. The zip destination's archive takes the deflated bytes when the study
/// has arrived (``ZipPlace/archive(study:files:fsync:precompressed:)``).
///
/// Each entry's deflate stream goes to a spool file of its own under ``spool`` (a hidden folder of the
/// temporary tree, removed with it), never to memory: a study of any size costs a worker's buffers. A file
/// of a compressed transfer syntax is left alone (its entry is stored). A file that fails to deflate, or
/// that is placed twice at one path, gets no spool file: the archive deflates it itself.
///
/// ``finished(_:)`` ends the deflating: with ``ZipDeflateMode/spare`` it waits for nothing, every file not
/// deflated by then is left undeflated (a file being deflated is given up at its next 64 KiB: a worker at
/// nice 19 beside busy processes may wait hundreds of milliseconds for the CPU to finish it); with
/// ``ZipDeflateMode/all`` every file is deflated first (the caller's thread deflates from the queue beside the
/// workers).
public final class ZipPrecompressor: PlacementObserver {
    /// One deflated file: its spool file, the CRC-32 and sizes its entry's headers take.
    public struct Spooled: Sendable, Hashable {
        public var spoolPath: String
        public var crc32: UInt32
        public var uncompressedSize: UInt64
        public var compressedSize: UInt64
    }

    /// What ``finished(_:)`` answers: what the archive takes from the deflating done meanwhile.
    public struct Finished: Sendable, Hashable {
        /// The spool of each placed path that has one.
        public var spooled: [String: Spooled]
        /// The placed paths whose deflate had not ended (``ZipDeflateMode/spare``): their entries are stored.
        public var notDeflated: Set<String>

        public init(spooled: [String: Spooled] = [:], notDeflated: Set<String> = []) {
            self.spooled = spooled
            self.notDeflated = notDeflated
        }
    }

    /// What a test sees of the workers: each job's path as it starts (on its worker thread, before it
    /// deflates), and ``finished(_:)`` once no queued file can start any more.
    struct Hooks: Sendable {
        var started: @Sendable (String) -> Void = { _ in }
        var closed: @Sendable () -> Void = {}
    }

    /// Where the deflated streams go.
    public let spool: String
    private let level: Int32
    private let workers: LowPriorityWorkers
    private let hooks: Hooks
    /// Every job submitted, until it has ended.
    private let group = DispatchGroup()
    /// The jobs opening their source and creating their spool file: what must end before the tree goes.
    private let opening = DispatchGroup()
    /// Set with ``State/closed``: read by a job between chunks, to give up.
    private let stop = Atomic<Bool>(false)
    private let state = Mutex<State>(State())

    private struct State {
        var submitted = 0
        var entries: [String: Entry] = [:]
        /// Set by ``finished(_:)`` (``ZipDeflateMode/spare``) and ``waitUntilIdle()``: no queued file starts.
        var closed = false
    }

    /// Where a placed path stands.
    private enum Entry {
        case queued
        case deflating
        /// Deflated, or `nil`: stored, or failed.
        case done(Spooled?)
        /// Not deflated: closed before a worker took it, or given up (``ZipDeflateMode/spare``).
        case notStarted
        /// Placed more than once: its file may have changed since it was deflated.
        case placedAgain
    }

    /// - Parameters:
    ///   - spool: A folder to create for the spool files (inside the temporary tree the files are placed in).
    ///   - workers: How many files are deflated at once (threads of their own); 0: none until
    ///     ``finished(_:)`` with ``ZipDeflateMode/all``, which deflates them on its caller's thread.
    ///   - lowPriority: Whether the workers run at the lowest priority (``ZipDeflateMode/spare``'s); at the
    ///     process's own with ``ZipDeflateMode/all``, which waits for them anyway.
    public convenience init(
        spool: String, level: Int32 = 1, workers: Int = ZipPlace.workers, lowPriority: Bool = true
    ) throws(ZipError) {
        try self.init(spool: spool, level: level, workers: workers, lowPriority: lowPriority, hooks: Hooks())
    }

    init(spool: String, level: Int32 = 1, workers: Int, lowPriority: Bool = true, hooks: Hooks) throws(ZipError) {
        guard mkdir(spool, 0o700) == 0 else { throw .io("cannot create the spool folder", path: spool, errno: errno) }
        self.spool = spool
        self.level = level
        self.hooks = hooks
        self.workers = try LowPriorityWorkers(count: Swift.max(0, workers), lowered: lowPriority, path: spool)
    }

    deinit { workers.close() }

    public func placed(_ placement: InstancePlacer.Placement) {
        let path = placement.path
        let index: Int? = state.withLock { state in
            guard state.entries[path] == nil else {
                state.entries[path] = .placedAgain
                return nil
            }
            guard !state.closed else { return nil }
            state.entries[path] = .queued
            state.submitted += 1
            return state.submitted
        }
        guard let index else { return }
        let spoolPath = spool + "/\(index)"
        group.enter()
        workers.submit { [self] in
            defer { group.leave() }
            run(path, to: spoolPath)
        }
    }

    /// One queued file: deflated unless it was placed again or the deflating has closed meanwhile (then, or
    /// when it closes during the deflate, the file is left as it is and its spool file removed).
    private func run(_ path: String, to spoolPath: String) {
        let start = state.withLock { state in
            guard case .queued = state.entries[path] else { return false }
            if state.closed {
                state.entries[path] = .notStarted
                return false
            }
            state.entries[path] = .deflating
            opening.enter()
            return true
        }
        guard start else { return }
        hooks.started(path)
        let spooled = Self.deflate(
            path, to: spoolPath, level: level, opened: { opening.leave() }, stop: { stop.load(ordering: .relaxed) })
        state.withLock { state in
            guard case .deflating = state.entries[path] else { return }
            // Given up (nil since stopped): not deflated; else deflated, or stored or failed (the archive's).
            state.entries[path] = spooled == nil && stop.load(ordering: .relaxed) ? .notStarted : .done(spooled)
        }
    }

    /// No queued file starts any more, and no job opens or creates a file any more when this returns (the
    /// tree may go): a job still deflating gives up at its next chunk, writing only to what it has open.
    public func waitUntilIdle() {
        stopStarting()
        opening.wait()
        workers.close()
    }

    private func stopStarting() {
        state.withLock { $0.closed = true }
        stop.store(true, ordering: .relaxed)
        hooks.closed()
        // The queue is emptied here rather than by the workers, which may wait long for CPU at their priority.
        workers.drain()
    }

    /// Ends the deflating and answers what was deflated. With ``ZipDeflateMode/spare``, returns at once: the
    /// files not deflated yet, queued or being deflated, are not deflated (``Finished/notDeflated``). With
    /// ``ZipDeflateMode/all``, returns once every file placed so far is deflated (or failed), this thread
    /// deflating queued files too.
    public func finished(_ mode: ZipDeflateMode = .all) -> Finished {
        switch mode {
        case .spare:
            stopStarting()
        case .all:
            workers.drain()
            group.wait()
        }
        workers.close()
        return state.withLock { state in
            var finished = Finished()
            for (path, entry) in state.entries {
                switch entry {
                case .done(let spooled?): finished.spooled[path] = spooled
                case .notStarted: finished.notDeflated.insert(path)
                case .deflating:
                    // Given up (spare): the job ends at its next chunk, and its result is not taken.
                    state.entries[path] = .notStarted
                    finished.notDeflated.insert(path)
                default: break
                }
            }
            return finished
        }
    }

    /// How much of a file a job deflates between two looks at ``stop``.
    static let chunkSize = 64 * 1024

    /// `path` deflated into `spoolPath`, or `nil` when it is stored, cannot be deflated (the archive then
    /// does it itself and reports what fails) or `stop` turned true (looked at between chunks; the spool file
    /// is removed). `opened` is called once no file will be opened or created any more.
    static func deflate(
        _ path: String, to spoolPath: String, level: Int32, opened signal: () -> Void, stop: () -> Bool
    ) -> Spooled? {
        var signalled = false
        func opening() {
            guard !signalled else { return }
            signalled = true
            signal()
        }
        defer { opening() }
        guard !stop() else { return nil }
        let opened: OpenedFile
        do { opened = try OpenedFile(path: path) } catch { return nil }
        defer { opened.close() }
        let bulkAfter: Int?
        do {
            let header = try Part10File.readHeader(contentsOf: opened.descriptorPath)
            guard ZipPlace.method(for: header.transferSyntax) == .deflate else { return nil }
            bulkAfter = ZipPlace.bulkAfter(for: header)
        } catch {
            return nil
        }
        let out = open(spoolPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        opening()
        guard out >= 0 else { return nil }
        defer { close(out) }
        var compressed: UInt64 = 0
        do throws(ZipError) {
            guard lseek(opened.descriptor, 0, SEEK_SET) == 0 else { return nil }
            let entry = try ZipWriter.deflate(
                opened, level: level, bulkAfter: bulkAfter, path: spoolPath, chunkSize: chunkSize,
                checkpoint: { () throws(ZipError) in
                    if stop() { throw .io("deflate given up", path: spoolPath) }
                },
                sink: { (bytes) throws(ZipError) in
                    try ZipWriter.writeAll(out, bytes, path: spoolPath)
                    compressed += UInt64(bytes.count)
                })
            return Spooled(
                spoolPath: spoolPath, crc32: entry.crc, uncompressedSize: entry.uncompressed,
                compressedSize: compressed)
        } catch {
            unlink(spoolPath)
            return nil
        }
    }
}

/// Threads that run jobs in the order they are submitted, each thread at the lowest CPU priority (Linux's
/// nice value is a thread's own, setpriority(2): the process's other threads keep theirs). Dispatch's
/// threads are not lowered instead: they are shared, and a lowered one would run later unrelated work
/// (Swift concurrency's tasks among it) at that priority, which an unprivileged process cannot raise again.
final class LowPriorityWorkers: Sendable {
    private let queue = Mutex<(jobs: [@Sendable () -> Void], next: Int, closed: Bool)>(([], 0, false))
    private let available = DispatchSemaphore(value: 0)
    private let count: Int
    private let lowered: Bool

    /// Starts `count` threads, at the lowest priority when `lowered` (`path` names the work in errors).
    init(count: Int, lowered: Bool = true, path: String) throws(ZipError) {
        self.count = count
        self.lowered = lowered
        for _ in 0..<count {
            let context = Unmanaged.passRetained(self).toOpaque()
            #if canImport(Glibc)
                var thread = pthread_t()
            #else
                var thread: pthread_t?
            #endif
            let code = pthread_create(
                &thread, nil,
                { context in
                    #if canImport(Glibc)
                        let workers = Unmanaged<LowPriorityWorkers>.fromOpaque(context!).takeRetainedValue()
                    #else
                        let workers = Unmanaged<LowPriorityWorkers>.fromOpaque(context).takeRetainedValue()
                    #endif
                    workers.work()
                    return nil
                }, context)
            guard code == 0 else {
                Unmanaged<LowPriorityWorkers>.fromOpaque(context).release()
                close()
                throw .io("cannot start a deflate thread", path: path, errno: code)
            }
            #if canImport(Glibc)
                pthread_detach(thread)
            #else
                if let thread { pthread_detach(thread) }
            #endif
        }
    }

    /// Queues `job` for the next free thread; runs it on the calling thread once the threads are closed.
    func submit(_ job: @escaping @Sendable () -> Void) {
        let queued = queue.withLock { queue in
            guard !queue.closed else { return false }
            queue.jobs.append(job)
            return true
        }
        guard queued else { return job() }
        available.signal()
    }

    /// Runs the jobs still queued on the calling thread, in order, until none is left.
    func drain() {
        while let job = take() { job() }
    }

    /// The threads end once the jobs running now are done; jobs submitted later run nowhere.
    func close() {
        let wasClosed = queue.withLock { queue in
            defer { queue.closed = true }
            return queue.closed
        }
        guard !wasClosed else { return }
        for _ in 0..<count { available.signal() }
    }

    private func take() -> (@Sendable () -> Void)? {
        queue.withLock { queue in
            guard queue.next < queue.jobs.count else { return nil }
            defer {
                queue.next += 1
                if queue.next == queue.jobs.count {
                    queue.jobs.removeAll(keepingCapacity: true)
                    queue.next = 0
                }
            }
            return queue.jobs[queue.next]
        }
    }

    private func work() {
        if lowered { Self.lowerThisThreadsPriority() }
        while true {
            available.wait()
            if let job = take() {
                job()
            } else if queue.withLock({ $0.closed }) {
                return
            }
        }
    }

    /// The calling thread's nice value set to 19, the lowest priority: on Linux `PRIO_PROCESS` with `who` 0
    /// names the calling thread alone (the kernel's `current`; setpriority(2), NOTES: the nice value is a
    /// per-thread attribute), as ZipDeflateModeTests checks. A failure leaves the thread as it was.
    static func lowerThisThreadsPriority() {
        #if os(Linux)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #elseif canImport(Darwin)
            _ = pthread_set_qos_class_self_np(QOS_CLASS_BACKGROUND, 0)
        #endif
    }
}
