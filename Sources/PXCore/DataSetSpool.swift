import DICOMData
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Data sets kept on disk instead of in memory, in arrival order: an unlinked temporary file of
/// length-prefixed Explicit VR Little Endian encodings (PS3.5 §A.2), read back one at a time.
///
/// px-find's two-phase query puts the study responses here, so a peer that answers a million studies costs
/// disk, not memory (issue 14); raw values round-trip unchanged, whatever their character set.
public final class DataSetSpool: Sendable {
    private struct State {
        var fd: Int32
        var count = 0
        var size = 0
        var failure: PXError?
    }
    private let state: Mutex<State>

    /// Opens the temporary file in `$TMPDIR` (else /tmp) and unlinks it at once.
    /// - Throws: ``PXError/io(_:path:)`` when no temporary file can be made.
    public init() throws(PXError) {
        let directory = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let file: (descriptor: Int32, path: String)
        do {
            file = try POSIX.makeTemporaryFile(prefix: directory + "/px-spool-")
        } catch {
            throw .io("cannot make a temporary file: \(error)", path: directory)
        }
        unlink(file.path)
        state = Mutex(State(fd: file.descriptor))
    }

    deinit { state.withLock { _ = close($0.fd) } }

    /// How many data sets were appended.
    public var count: Int { state.withLock { $0.count } }

    /// Appends `dataSet`; the first failure (encoding, a full disk) is kept and thrown by ``readEach(_:)``.
    public func append(_ dataSet: DataSet) {
        state.withLock { state in
            guard state.failure == nil else { return }
            let bytes: [UInt8]
            do {
                bytes = try DataSetWriter.encode(dataSet, transferSyntax: .explicitVRLittleEndian)
            } catch {
                state.failure = .invalidResponse("cannot keep a response on disk: \(error)")
                return
            }
            var record = withUnsafeBytes(of: UInt32(bytes.count).littleEndian) { Array($0) }
            record += bytes
            var written = 0
            while written < record.count {
                let n = record.withUnsafeBytes {
                    pwrite(state.fd, $0.baseAddress! + written, $0.count - written, off_t(state.size + written))
                }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else {
                    state.failure = .io("cannot keep a response on disk: \(POSIX.errorText())", path: nil)
                    return
                }
                written += n
            }
            state.size += record.count
            state.count += 1
        }
    }

    /// Calls `body` with each data set in the order they were appended.
    /// - Throws: the first failure of ``append(_:)``, a read error, or what `body` throws.
    public func readEach(_ body: (DataSet) async throws(PXError) -> Void) async throws(PXError) {
        let (fd, size, failure) = state.withLock { ($0.fd, $0.size, $0.failure) }
        if let failure { throw failure }
        var offset = 0
        while offset < size {
            let header = try Self.read(fd, count: 4, at: offset)
            let length = Int(
                UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16 | UInt32(header[3]) << 24)
            let bytes = try Self.read(fd, count: length, at: offset + 4)
            offset += 4 + length
            let dataSet: DataSet
            do {
                dataSet = try DataSetReader.read(bytes, transferSyntax: .explicitVRLittleEndian).dataSet
            } catch {
                throw .invalidResponse("cannot read back a kept response: \(error)")
            }
            try await body(dataSet)
        }
    }

    private static func read(_ fd: Int32, count: Int, at offset: Int) throws(PXError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + done, count - done, off_t(offset + done))
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw .io("cannot read back a kept response: \(POSIX.errorText())", path: nil) }
            done += n
        }
        return bytes
    }
}
