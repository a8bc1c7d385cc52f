import DICOMData
import DICOMNetwork
import DICOMProtocol
import Logging
import NIOCore
import PXCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The instances a receiver placed since it started, by SOP Instance UID: what its storage commitment SCP
/// (PS3.4 §J.3) may commit. Bounded: past ``maximumCount`` instances, new ones are not recorded (and so not
/// committed, the safe side).
///
/// The records (UIDs and paths, about 180 bytes an instance) go to an unlinked file in the receiver's staging
/// folder; memory keeps only where the newest record of each UID hash starts (16 bytes an instance, records
/// of one hash chained in the file), so a receiver's memory does not grow with what it stored (issue 34: the
/// records held as strings were 750 bytes an instance, 22 MB after 30,000). A file that cannot be made or
/// written leaves instances unrecorded: not committed, the safe side.
final class PlacedInstances: Sendable {
    struct Entry: Sendable, Equatable {
        var sopClassUID: String
        var path: String
    }
    /// The most instances remembered.
    static let maximumCount = 1_000_000
    /// Bytes buffered before they are written.
    static let bufferSize = 1 << 16

    private struct State {
        var fd: Int32
        /// The file's length once ``buffer`` is written.
        var end: UInt64 = 0
        var buffer: [UInt8] = []
        /// The offset (plus one) of the newest record of each UID hash.
        var newest: [Int: UInt64] = [:]
        var count = 0
        var failed: Bool
    }
    private let state: Mutex<State>

    /// - Parameter folder: where the record file is made (and unlinked at once).
    init(folder: String, logger: Logger) {
        var template = Array((folder + "/.px-placed-XXXXXX").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        if fd >= 0 {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        } else {
            logger.warning(
                "cannot make the file of placed instances: storage commitment will commit none",
                metadata: ["folder": "\(folder)", "error": "\(String(cString: strerror(errno)))"])
        }
        state = Mutex(State(fd: fd, failed: fd < 0))
    }

    deinit {
        state.withLock { if $0.fd >= 0 { close($0.fd) } }
    }

    /// Record layout: the previous record of the same hash (offset plus one, 0 for none), the three lengths,
    /// then the UID, the class and the path.
    private static let headerSize = 8 + 2 + 2 + 4

    func record(sopInstanceUID: String, sopClassUID: String, path: String) {
        let uid = Array(sopInstanceUID.utf8)
        let sopClass = Array(sopClassUID.utf8)
        let file = Array(path.utf8)
        guard uid.count <= UInt16.max, sopClass.count <= UInt16.max, file.count <= UInt32.max else { return }
        let hash = sopInstanceUID.hashValue
        state.withLock { state in
            guard !state.failed, state.count < Self.maximumCount else { return }
            let previous = state.newest[hash] ?? 0
            Self.append(previous, to: &state.buffer)
            Self.append(UInt16(uid.count), to: &state.buffer)
            Self.append(UInt16(sopClass.count), to: &state.buffer)
            Self.append(UInt32(file.count), to: &state.buffer)
            state.buffer += uid
            state.buffer += sopClass
            state.buffer += file
            state.newest[hash] = state.end + 1
            state.end += UInt64(Self.headerSize + uid.count + sopClass.count + file.count)
            state.count += 1
            if state.buffer.count >= Self.bufferSize { Self.flush(&state) }
        }
    }

    /// The newest record of `sopInstanceUID`, `nil` when it was not recorded (or the file failed).
    func entry(_ sopInstanceUID: String) -> Entry? {
        state.withLock { state in
            Self.flush(&state)
            guard !state.failed else { return nil }
            var next = state.newest[sopInstanceUID.hashValue] ?? 0
            let wanted = Array(sopInstanceUID.utf8)
            while next > 0 {
                let offset = next - 1
                guard let header = Self.read(state.fd, at: offset, count: Self.headerSize) else { return nil }
                let previous = Self.integer(header, at: 0, as: UInt64.self)
                let uidCount = Int(Self.integer(header, at: 8, as: UInt16.self))
                let classCount = Int(Self.integer(header, at: 10, as: UInt16.self))
                let pathCount = Int(Self.integer(header, at: 12, as: UInt32.self))
                guard
                    let body = Self.read(
                        state.fd, at: offset + UInt64(Self.headerSize), count: uidCount + classCount + pathCount)
                else { return nil }
                if body[..<uidCount].elementsEqual(wanted) {
                    return Entry(
                        sopClassUID: String(decoding: body[uidCount..<(uidCount + classCount)], as: UTF8.self),
                        path: String(decoding: body[(uidCount + classCount)...], as: UTF8.self))
                }
                next = previous
            }
            return nil
        }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to buffer: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { buffer += $0 }
    }

    private static func integer<T: FixedWidthInteger>(_ bytes: [UInt8], at offset: Int, as: T.Type) -> T {
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size { value |= T(bytes[offset + index]) << (8 * index) }
        return value
    }

    private static func flush(_ state: inout State) {
        guard !state.buffer.isEmpty, !state.failed else { return }
        let written = state.buffer.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = write(state.fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += n
            }
            return true
        }
        state.buffer.removeAll(keepingCapacity: true)
        if !written { state.failed = true }
    }

    private static func read(_ fd: Int32, at offset: UInt64, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return nil }
            done += n
        }
        return bytes
    }

    /// The report for `request`: an instance is committed only when px placed it and its file is still at its
    /// final name (a regular file); else it failed with 0x0112, no such object instance, or 0x0119, class-instance
    /// conflict, when the request names another SOP class (PS3.4 §J.3.3, Table J.3-2). The request's paths or
    /// anything else it says about the files is not trusted.
    func report(for request: StorageCommitment.Request) -> StorageCommitment.Report {
        var committed: [StorageCommitment.Reference] = []
        var failed: [StorageCommitment.Failure] = []
        for reference in request.references {
            let entry = entry(reference.sopInstanceUID)
            var reason: UInt16?
            if let entry {
                var info = stat()
                if stat(entry.path, &info) != 0 || (info.st_mode & S_IFMT) != S_IFREG {
                    reason = StorageCommitment.FailureReason.noSuchObjectInstance
                } else if entry.sopClassUID != reference.sopClassUID {
                    reason = StorageCommitment.FailureReason.classInstanceConflict
                }
            } else {
                reason = StorageCommitment.FailureReason.noSuchObjectInstance
            }
            if let reason {
                failed.append(
                    StorageCommitment.Failure(
                        sopClassUID: reference.sopClassUID, sopInstanceUID: reference.sopInstanceUID,
                        failureReason: reason))
            } else {
                committed.append(reference)
            }
        }
        return StorageCommitment.Report(transactionUID: request.transactionUID, committed: committed, failed: failed)
    }
}

extension NativeBackend {
    /// px-listen's and px-serve's Storage Commitment Push Model SCP (PS3.4 §J.3): N-ACTION answered from
    /// `placed`; the report on the requester's association when it took the SCP role, else on a new association
    /// to the requester's AE from ``ListenConfiguration/commitmentDestinations``. Both reported as events.
    func installStorageCommitment(
        _ handlers: inout DICOMServer.Handlers, placed: PlacedInstances, configuration: ListenConfiguration,
        events: ListenEventChannel, logger: Logger
    ) {
        handlers.onStorageCommitment = { request, served in
            let report = placed.report(for: request)
            logger.info(
                "storage commitment requested",
                metadata: [
                    "peer.aet": "\(served.callingAETitle)", "transaction": "\(request.transactionUID)",
                    "committed": "\(report.committed.count)", "failed": "\(report.failed.count)",
                ])
            events.yield(
                .storageCommitment(
                    callingAETitle: served.callingAETitle, transactionUID: report.transactionUID,
                    committed: report.committed.map {
                        CommitmentInstance(sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID)
                    },
                    failed: report.failed.map {
                        CommitmentInstance(
                            sopClassUID: $0.sopClassUID, sopInstanceUID: $0.sopInstanceUID,
                            failureReason: $0.failureReason)
                    }, association: served.id))
            return report
        }
        let destinations = configuration.commitmentDestinations
        let local = configuration.aeTitle
        let timeouts = configuration.timeouts
        let tls = configuration.tls
        handlers.deliverStorageCommitmentReport = { report, served in
            let calling = served.callingAETitle
            guard let node = destinations[calling] else {
                events.yield(
                    .storageCommitmentReported(
                        callingAETitle: calling, transactionUID: report.transactionUID, destination: nil, status: nil,
                        error: .usage("no --commit-destination (or config node) for AE title \(calling)")))
                return
            }
            let status: DIMSEStatus
            do throws(PXError) {
                var connection = Connection(node: node, local: try LocalAE(aeTitle: local), timeouts: timeouts)
                connection.tls = tls
                connection.timeouts.deadline = timeouts.connect + timeouts.acse + 2 * timeouts.dimse
                let client = self.client(connection, logger: logger)
                let peer = self.peer(connection)
                status = try await self.run("N-EVENT-REPORT", connection) {
                    try await client.withAssociation(to: peer, proposing: [.storageCommitmentReporter]) {
                        try await $0.reportStorageCommitment(report)
                    }
                }
            } catch {
                logger.warning(
                    "storage commitment report not delivered",
                    metadata: ["peer.aet": "\(calling)", "destination": "\(node)", "error": "\(error)"])
                events.yield(
                    .storageCommitmentReported(
                        callingAETitle: calling, transactionUID: report.transactionUID, destination: "\(node)",
                        status: nil, error: error))
                return
            }
            events.yield(
                .storageCommitmentReported(
                    callingAETitle: calling, transactionUID: report.transactionUID, destination: "\(node)",
                    status: status, error: nil))
        }
    }
}
