import DICOMData
import Foundation
import Testing

/// `Part10File.readHeader`: the header is everything before Pixel Data, never a prefix that happens to end
/// between two elements, whether the bytes come from the file or from a receiver's memory.
@Suite(.timeLimit(.minutes(2))) struct Part10FileHeaderTests {
    /// A Part 10 file whose header has comments of `commentLength` bytes before the study UID and rows,
    /// then 64 KiB of pixel data.
    static func file(commentLength: Int) throws -> [UInt8] {
        var set = DataSet()
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array("1.2.840.10008.5.1.4.1.1.7\0".utf8)))
        set.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.4.5.6\0".utf8)))
        set.set(DataElement(tag: Tag(0x0010, 0x4000), vr: .LT, bytes: [UInt8](repeating: 0x41, count: commentLength)))
        set.set(DataElement(tag: .studyInstanceUID, vr: .UI, bytes: Array("1.2.3.4.7\0".utf8)))
        set.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x01]))
        set.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: 7, count: 65536)))
        return try Part10File(dataSet: set, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    /// Where the Study Instance UID element starts (explicit VR little endian: group, element, "UI").
    static func studyUIDOffset(_ bytes: [UInt8]) throws -> Int {
        let pattern: [UInt8] = [0x20, 0x00, 0x0D, 0x00, 0x55, 0x49]
        let start = try #require(
            (0...(bytes.count - pattern.count)).first { Array(bytes[$0..<($0 + pattern.count)]) == pattern })
        return start
    }

    static func write(_ bytes: [UInt8]) throws -> String {
        let path = NSTemporaryDirectory() + "px-header-" + UUID().uuidString + ".dcm"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a known prefix that holds the whole header is enough: the file is not opened")
    func prefixHoldsHeader() throws {
        let bytes = try Self.file(commentLength: 100)
        let header = try Part10File.readHeader(
            contentsOf: "/nonexistent/never-opened.dcm", knownPrefix: Array(bytes.prefix(16384)),
            fileLength: bytes.count)
        #expect(header.stoppedEarly)
        #expect(header.dataSet.string(.studyInstanceUID) == "1.2.3.4.7")
        #expect(header.dataSet[.pixelData] == nil)
    }

    @Test("a known prefix that ends between two header elements is completed from the file")
    func prefixEndsAtElementBoundary() throws {
        let bytes = try Self.file(commentLength: 100)
        let path = try Self.write(bytes)
        defer { unlink(path) }
        let cut = try Self.studyUIDOffset(bytes)
        let header = try Part10File.readHeader(
            contentsOf: path, knownPrefix: Array(bytes.prefix(cut)), fileLength: bytes.count)
        #expect(header.dataSet.string(.studyInstanceUID) == "1.2.3.4.7")
        #expect(header.dataSet[Tag(0x0028, 0x0010)] != nil)
        #expect(header.dataSet[.pixelData] == nil)
    }

    @Test("a header whose element boundary falls exactly at the first 16 KiB read is read on")
    func fileReadEndsAtElementBoundary() throws {
        // Size the comment so that the study UID element starts at byte 16384 of the file.
        let probe = try Self.file(commentLength: 10000)
        let length = 10000 + 16384 - (try Self.studyUIDOffset(probe))
        let bytes = try Self.file(commentLength: length)
        try #require(try Self.studyUIDOffset(bytes) == 16384)
        let path = try Self.write(bytes)
        defer { unlink(path) }
        let header = try Part10File.readHeader(contentsOf: path)
        #expect(header.dataSet.string(.studyInstanceUID) == "1.2.3.4.7")
        #expect(header.dataSet[Tag(0x0028, 0x0010)] != nil)
        #expect(header.dataSet[.pixelData] == nil)
        // A whole small file is its own header, with nothing to stop at.
        let whole = try Part10File.readHeader(contentsOf: path, stopBefore: Tag(0x7FE1, 0x0000))
        #expect(whole.dataSet[.pixelData] != nil)
        #expect(!whole.stoppedEarly)
    }
}
