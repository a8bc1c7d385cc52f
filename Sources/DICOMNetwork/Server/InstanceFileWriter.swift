import DICOMData
import DICOMProtocol
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streams one incoming C-STORE data set into a Part 10 file as its fragments arrive (PS3.10 §7.1).
///
/// The preamble, `DICM` and the file meta information (built from the C-STORE-RQ and the presentation
/// context) are written first; each P-DATA fragment is then written straight from its `ByteBuffer` with
/// `write(2)`, so an instance is never held in memory. Runs in the association task, off the event loop.
/// After a write error the remaining fragments are ignored and ``finish()`` reports the failure.
final class InstanceFileWriter {
    let path: String
    private var descriptor: Int32
    private(set) var dataSetLength: Int
    private(set) var fileLength: Int
    private(set) var failure: String?
    /// The file's first ``keptPrefixLength`` bytes (fewer for a smaller file), copied as they are written.
    private(set) var prefix: [UInt8]

    /// How much of the start of each file is kept in memory: the header of a typical image fits.
    static let keptPrefixLength = 16 * 1024

    /// Creates a temporary file in `directory` and writes the header.
    ///
    /// - Throws: ``DICOMNetworkError/fileError(_:)`` when the file cannot be created or written.
    init(directory: String, request: CStoreRQ, transferSyntaxUID: String, sourceAETitle: String) throws {
        var attempt = 0
        var path = ""
        var fd: Int32 = -1
        while fd < 0 {
            path = directory + "/.px-incoming-" + String(UInt64.random(in: 0...UInt64.max), radix: 36) + ".part"
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            attempt += 1
            if fd < 0 && errno == ENOENT && attempt == 1 {
                // The staging folder was removed under a running server (a clean-up job): make it again.
                _ = mkdir(directory, 0o755)
                continue
            }
            if fd < 0 && (errno != EEXIST || attempt > 8) {
                throw DICOMNetworkError.fileError("cannot create \(path): errno \(errno)")
            }
        }
        self.path = path
        self.descriptor = fd
        self.dataSetLength = 0
        self.fileLength = 0
        self.failure = nil
        self.prefix = []
        self.prefix.reserveCapacity(Self.keptPrefixLength)

        let header: [UInt8]
        do {
            header = try Self.header(
                sopClassUID: request.affectedSOPClassUID,
                sopInstanceUID: request.affectedSOPInstanceUID,
                transferSyntaxUID: transferSyntaxUID,
                sourceAETitle: sourceAETitle
            )
        } catch {
            self.discard()
            throw DICOMNetworkError.fileError("cannot encode file meta information: \(error)")
        }
        header.withUnsafeBytes { self.writeAll($0) }
        self.prefix.append(contentsOf: header.prefix(Self.keptPrefixLength))
        if let failure = self.failure {
            self.discard()
            throw DICOMNetworkError.fileError(failure)
        }
    }

    /// Appends one data set fragment.
    func append(_ fragment: ByteBuffer) {
        guard self.failure == nil else { return }
        fragment.withUnsafeReadableBytes { bytes in
            self.writeAll(bytes)
            let keep = min(Self.keptPrefixLength - self.prefix.count, bytes.count)
            if keep > 0 { self.prefix.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[..<keep])) }
        }
        self.dataSetLength += fragment.readableBytes
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        guard var base = bytes.baseAddress, self.failure == nil else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(self.descriptor, base, remaining)
            if written < 0 {
                if errno == EINTR { continue }
                self.failure = "cannot write \(self.path): errno \(errno)"
                return
            }
            remaining -= written
            base += written
            self.fileLength += written
        }
    }

    /// Closes the file.
    ///
    /// - Throws: ``DICOMNetworkError/fileError(_:)`` when a write or the close failed; the file is removed.
    func finish() throws {
        let fd = self.descriptor
        self.descriptor = -1
        if fd >= 0 && close(fd) != 0 && self.failure == nil {
            self.failure = "cannot close \(self.path): errno \(errno)"
        }
        if let failure = self.failure {
            unlink(self.path)
            throw DICOMNetworkError.fileError(failure)
        }
    }

    /// Closes and removes the file.
    func discard() {
        if self.descriptor >= 0 {
            close(self.descriptor)
            self.descriptor = -1
        }
        unlink(self.path)
    }

    /// Preamble, `DICM`, and the file meta information group in Explicit VR Little Endian (PS3.10 §7.1).
    static func header(sopClassUID: String, sopInstanceUID: String, transferSyntaxUID: String, sourceAETitle: String)
        throws -> [UInt8]
    {
        var meta = DataSet()
        meta.set(DataElement(tag: .fileMetaInformationVersion, vr: .OB, bytes: [0x00, 0x01]))
        meta.set(DataElement(tag: .mediaStorageSOPClassUID, vr: .UI, bytes: Self.padded(sopClassUID, with: 0)))
        meta.set(DataElement(tag: .mediaStorageSOPInstanceUID, vr: .UI, bytes: Self.padded(sopInstanceUID, with: 0)))
        meta.set(DataElement(tag: .transferSyntaxUID, vr: .UI, bytes: Self.padded(transferSyntaxUID, with: 0)))
        meta.set(
            DataElement(
                tag: .implementationClassUID, vr: .UI, bytes: Self.padded(Part10File.implementationClassUID, with: 0)))
        meta.set(
            DataElement(
                tag: .implementationVersionName, vr: .SH,
                bytes: Self.padded(Part10File.implementationVersionName, with: 0x20))
        )
        if !sourceAETitle.isEmpty {
            meta.set(
                DataElement(tag: .sourceApplicationEntityTitle, vr: .AE, bytes: Self.padded(sourceAETitle, with: 0x20)))
        }
        var encoded: [UInt8] = []
        try DataSetWriter.write(meta, transferSyntax: .explicitVRLittleEndian, into: &encoded)
        var out = [UInt8](repeating: 0, count: 128)
        out.reserveCapacity(144 + encoded.count)
        out.append(contentsOf: [0x44, 0x49, 0x43, 0x4D])
        out.append(contentsOf: [0x02, 0x00, 0x00, 0x00, 0x55, 0x4C, 0x04, 0x00])
        let n = UInt32(encoded.count)
        out.append(contentsOf: [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)])
        out.append(contentsOf: encoded)
        return out
    }

    private static func padded(_ text: String, with pad: UInt8) -> [UInt8] {
        var bytes = Array(text.utf8)
        if bytes.count & 1 == 1 { bytes.append(pad) }
        return bytes
    }
}
