import DICOMData
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Deflates each instance placed in a temporary tree while the retrieval that places them goes on, on
/// worker threads (one serial queue per core, files dealt round-robin), so that the zip destination's
/// archive is mostly written from deflated bytes when the study has arrived (``ZipPlace/archive(study:files:fsync:precompressed:)``).
///
/// Each entry's deflate stream goes to a spool file of its own under ``spool`` (a hidden folder of the
/// temporary tree, removed with it), never to memory: a study of any size costs a worker's buffers. A file
/// of a compressed transfer syntax is left alone (its entry is stored). A file that fails to deflate, or
/// that is placed twice at one path, gets no spool file: the archive deflates it itself.
public final class ZipPrecompressor: PlacementObserver {
    /// One deflated file: its spool file, the CRC-32 and sizes its entry's headers take.
    public struct Spooled: Sendable, Hashable {
        public var spoolPath: String
        public var crc32: UInt32
        public var uncompressedSize: UInt64
        public var compressedSize: UInt64
    }

    /// Where the deflated streams go.
    public let spool: String
    private let level: Int32
    private let queues: [DispatchQueue]
    private let group = DispatchGroup()
    private let state = Mutex<State>(State())

    private struct State {
        var submitted = 0
        var entries: [String: Entry] = [:]
    }

    /// Where a placed path stands.
    private enum Entry {
        case deflating
        /// Deflated, or `nil`: stored, or failed.
        case done(Spooled?)
        /// Placed more than once: its file may have changed since it was deflated.
        case placedAgain
    }

    /// - Parameters:
    ///   - spool: A folder to create for the spool files (inside the temporary tree the files are placed in).
    ///   - workers: How many files are deflated at once.
    public init(spool: String, level: Int32 = 1, workers: Int = ZipPlace.workers) throws(ZipError) {
        guard mkdir(spool, 0o700) == 0 else { throw .io("cannot create the spool folder", path: spool, errno: errno) }
        self.spool = spool
        self.level = level
        self.queues = (0..<Swift.max(1, workers)).map { DispatchQueue(label: "px.zip.deflate.\($0)") }
    }

    public func placed(_ placement: InstancePlacer.Placement) {
        let path = placement.path
        let index: Int? = state.withLock { state in
            guard state.entries[path] == nil else {
                state.entries[path] = .placedAgain
                return nil
            }
            state.entries[path] = .deflating
            state.submitted += 1
            return state.submitted
        }
        guard let index else { return }
        let spoolPath = spool + "/\(index)"
        let level = self.level
        group.enter()
        queues[index % queues.count].async { [self] in
            defer { group.leave() }
            let spooled = Self.deflate(path, to: spoolPath, level: level)
            state.withLock { state in
                if case .deflating = state.entries[path] { state.entries[path] = .done(spooled) }
            }
        }
    }

    public func waitUntilIdle() { group.wait() }

    /// Waits until every file placed so far is deflated (or failed), then answers: the spool of each placed
    /// path that has one.
    public func finished() -> [String: Spooled] {
        group.wait()
        return state.withLock { state in
            state.entries.compactMapValues { entry in
                if case .done(let spooled) = entry { return spooled }
                return nil
            }
        }
    }

    /// `path` deflated into `spoolPath`, or `nil` when it is stored or cannot be deflated (the archive then
    /// does it itself and reports what fails).
    static func deflate(_ path: String, to spoolPath: String, level: Int32) -> Spooled? {
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
        guard out >= 0 else { return nil }
        defer { close(out) }
        var compressed: UInt64 = 0
        do throws(ZipError) {
            guard lseek(opened.descriptor, 0, SEEK_SET) == 0 else { return nil }
            let entry = try ZipWriter.deflate(opened, level: level, bulkAfter: bulkAfter, path: spoolPath) {
                (bytes) throws(ZipError) in
                try ZipWriter.writeAll(out, bytes, path: spoolPath)
                compressed += UInt64(bytes.count)
            }
            return Spooled(
                spoolPath: spoolPath, crc32: entry.crc, uncompressedSize: entry.uncompressed,
                compressedSize: compressed)
        } catch {
            return nil
        }
    }
}
