import DICOMData
import NIOCore

extension StorableFile {
    /// A Part 10 file open for sending, and where its data set starts (PS3.10 §7.1). It is opened and checked
    /// once, before the first byte of it goes out (``StorableFile/open()``); everything sent is read from this
    /// descriptor, never by opening the path again.
    struct Opened: Sendable {
        let file: OpenedFile
        let dataSetOffset: Int

        var descriptor: Int32 { self.file.descriptor }
        var size: Int { self.file.size }

        func close() { self.file.close() }
    }

    /// How much of the file's start is read to find the end of its meta information.
    static let metaPrefixSize = 64 * 1024

    /// Opens the file to send it: a file from a place's index (``indexed``) below the place's root without
    /// following links, and only if it is still the indexed file (``DICOMData/IndexedFile/open()``: a regular file
    /// of the indexed size and modification time); a file named by the user at ``path``. (The meta information's
    /// SOP Instance UID is not compared: px-push sends a file whose meta disagrees with its data set as the data
    /// set says.)
    ///
    /// - Throws: ``DICOMNetworkError/Code/notTheIndexedFile`` when the file is not the one to send,
    ///   ``DICOMNetworkError/Code/fileError`` when it cannot be read, ``DICOMNetworkError/Code/invalidArgument``
    ///   for malformed meta information.
    func open() throws(DICOMNetworkError) -> Opened {
        let file: OpenedFile
        do {
            if let indexed = self.indexed { file = try indexed.open() } else { file = try OpenedFile(path: self.path) }
        } catch {
            if error.code == .notTheIndexedFile { throw .notTheIndexedFile(error.message) }
            throw .fileError("\(error)")
        }
        let prefix: [UInt8]
        let offset: Int
        do {
            prefix = try file.read(count: min(file.size, Self.metaPrefixSize))
        } catch {
            file.close()
            throw .fileError("\(error)")
        }
        do {
            offset = try Part10File.dataSetOffset(in: prefix)
        } catch {
            file.close()
            throw .invalidArgument("\(self.path): \(error)")
        }
        return Opened(file: file, dataSetOffset: offset)
    }

    /// Whether the opened file's data set goes out in `transferSyntaxUID` byte for byte, streamed from its
    /// descriptor: its own syntax, unless it is a deflate stream of odd length (PS3.5 §A.5), which
    /// ``dataSetBytes(of:in:)`` pads to the even length P-DATA fragments need (PS3.8 §9.3.5).
    func streamsAsIs(_ opened: Opened, in transferSyntaxUID: String) -> Bool {
        transferSyntaxUID == self.transferSyntaxUID
            && !(TransferSyntax(uid: self.transferSyntaxUID).isDeflated
                && (opened.size - opened.dataSetOffset) % 2 == 1)
    }

    /// The data set of an opened file in `transferSyntaxUID`: its own bytes when the syntaxes match, inflated
    /// (PS3.5 §A.5, bounded by ``maximumInflatedSize``) or re-encoded otherwise; read from the open descriptor.
    func dataSetBytes(of opened: Opened, in transferSyntaxUID: String) throws -> ByteBuffer {
        if TransferSyntax(uid: self.transferSyntaxUID).isDeflated && transferSyntaxUID != self.transferSyntaxUID {
            // Inflated, the data set is already Explicit VR Little Endian (PS3.5 §A.5).
            let inflated = try Part10File.inflatedDataSet(
                of: opened.file, dataSetOffset: opened.dataSetOffset, maximumInflatedSize: self.maximumInflatedSize)
            if transferSyntaxUID == TransferSyntax.explicitVRLittleEndian.uid { return ByteBuffer(bytes: inflated) }
            let dataSet = try DataSetReader.read(inflated, transferSyntax: .explicitVRLittleEndian).dataSet
            return ByteBuffer(
                bytes: try DataSetWriter.encode(dataSet, transferSyntax: TransferSyntax(uid: transferSyntaxUID)))
        }
        let bytes: [UInt8]
        do {
            bytes = try opened.file.readAll()
        } catch {
            throw DICOMNetworkError.fileError("\(error)")
        }
        if transferSyntaxUID == self.transferSyntaxUID {
            var dataSet = ByteBuffer(bytes: bytes[opened.dataSetOffset...])
            // A deflate stream of odd length gets one trailing NUL byte (PS3.5 §A.5): the data set is sent in
            // fragments of even length (PS3.8 §9.3.5), which DCMTK enforces ("Odd Fragment Length").
            if TransferSyntax(uid: self.transferSyntaxUID).isDeflated && dataSet.readableBytes % 2 == 1 {
                dataSet.writeInteger(UInt8(0))
            }
            return dataSet
        }
        let parsed = try Part10File(bytes: bytes)
        return ByteBuffer(
            bytes: try DataSetWriter.encode(parsed.dataSet, transferSyntax: TransferSyntax(uid: transferSyntaxUID)))
    }
}
