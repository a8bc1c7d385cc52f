#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Part10File {
    /// Reads a file from disk.
    public init(contentsOf path: String, options: ReadOptions = ReadOptions()) throws(DICOMDataError) {
        try self.init(bytes: try FileIO.readAll(path), options: options)
    }

    /// Reads only the start of a file, up to ``ReadOptions/dataSet`` `stopBefore` (Pixel Data by default):
    /// the fast path for sorting received files. Reads a 16 KiB prefix first and more only when the
    /// header is longer: until the read reaches `stopBefore` or the end of the file.
    ///
    /// - Parameters:
    ///   - knownPrefix: The file's first bytes when the caller has them already (a receiver that just
    ///     wrote the file), with `fileLength`: when the header ends inside them the file is not read at all.
    public static func readHeader(
        contentsOf path: String, stopBefore: Tag = .pixelData, knownPrefix: [UInt8] = [], fileLength: Int? = nil
    ) throws(DICOMDataError) -> Part10File {
        let options = ReadOptions(dataSet: .init(stopBefore: stopBefore))
        if let fileLength, !knownPrefix.isEmpty,
            let file = try Self.header(of: knownPrefix, isWholeFile: knownPrefix.count >= fileLength, options: options)
        {
            return file
        }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat", path: path, errno: errno) }
        let size = Int(info.st_size)
        var prefixSize = min(size, 16 * 1024)
        var bytes = try FileIO.readPrefix(fd, path: path, count: prefixSize)
        while true {
            if let file = try Self.header(of: bytes, isWholeFile: prefixSize >= size, options: options) {
                return file
            }
            // The header runs past the prefix: read more (deflated files are read whole).
            let more = min(size - prefixSize, max(prefixSize, 64 * 1024))
            bytes += try FileIO.readPrefix(fd, path: path, count: more, from: prefixSize)
            prefixSize += more
        }
    }

    /// The header in `bytes`, the start of a file; `nil` when it may go on past them: the read ran out
    /// of bytes (truncated) or ended at an element boundary before reaching `stopBefore`.
    private static func header(of bytes: [UInt8], isWholeFile: Bool, options: ReadOptions) throws(DICOMDataError)
        -> Part10File?
    {
        do {
            let file = try Part10File(bytes: bytes, options: options)
            return file.stoppedEarly || isWholeFile ? file : nil
        } catch where !isWholeFile && (error.code == .truncated || error.code == .lengthPastEnd) {
            return nil
        }
    }

    /// Writes the file to disk (see ``encoded()``).
    public func write(to path: String) throws(DICOMDataError) {
        try FileIO.write(try encoded(), to: path)
    }
}
