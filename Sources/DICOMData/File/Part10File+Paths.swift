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
    /// header is longer.
    public static func readHeader(
        contentsOf path: String, stopBefore: Tag = .pixelData
    ) throws(DICOMDataError) -> Part10File {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io("cannot open", path: path, errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io("cannot stat", path: path, errno: errno) }
        let size = Int(info.st_size)
        var options = ReadOptions(dataSet: .init(stopBefore: stopBefore))
        var prefixSize = min(size, 16 * 1024)
        var bytes = try FileIO.readPrefix(fd, path: path, count: prefixSize)
        while true {
            do {
                if prefixSize >= size { options.dataSet.stopBefore = stopBefore }
                return try Part10File(bytes: bytes, options: options)
            } catch where prefixSize < size && (error.code == .truncated || error.code == .lengthPastEnd) {
                // The header runs past the prefix: read more (deflated files are read whole).
                let more = min(size - prefixSize, max(prefixSize, 64 * 1024))
                bytes += try FileIO.readPrefix(fd, path: path, count: more, from: prefixSize)
                prefixSize += more
            } catch {
                throw error
            }
        }
    }

    /// Writes the file to disk (see ``encoded()``).
    public func write(to path: String) throws(DICOMDataError) {
        try FileIO.write(try encoded(), to: path)
    }
}
