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

    /// Writes the file to disk (see ``encoded()``).
    public func write(to path: String) throws(DICOMDataError) {
        try FileIO.write(try encoded(), to: path)
    }
}
