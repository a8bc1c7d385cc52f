import DICOMData
import Foundation
import PXTestSupport
import Testing

/// `Part10File.checkStructure`: the walk over a file's element headers that px-push runs before sending a
/// file (issue 14 item 8). Crafted files: a valid one, then each kind of break appended to its data set.
@Suite(.timeLimit(.minutes(2))) struct Part10StructureTests {
    static let sopClass = "1.2.840.10008.5.1.4.1.1.7"

    /// A valid file in `syntax` whose data set ends with `tail` (raw bytes in that encoding).
    static func file(
        _ syntax: TransferSyntax = .explicitVRLittleEndian, tail: [UInt8] = [], instance: String = "1.2.3.4.5.6"
    )
        throws -> String
    {
        var set = DataSet()
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array((sopClass + "\0").utf8)))
        set.set(
            DataElement(
                tag: .sopInstanceUID, vr: .UI,
                bytes: Array((instance + (instance.utf8.count % 2 == 1 ? "\0" : "")).utf8)))
        set.set(DataElement(tag: Tag(0x0028, 0x0010), vr: .US, bytes: [0x00, 0x01]))
        let bytes = try Part10File(dataSet: set, transferSyntax: syntax).encoded() + tail
        let path = NSTemporaryDirectory() + "px-structure-" + UUID().uuidString + ".dcm"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }
    /// An explicit VR element header with a 4-byte length (OB, SQ, UN ...).
    static func long(_ group: UInt16, _ element: UInt16, _ vr: String, _ length: UInt32) -> [UInt8] {
        le16(group) + le16(element) + Array(vr.utf8) + [0, 0] + le32(length)
    }
    static func item(_ element: UInt16, _ length: UInt32) -> [UInt8] { le16(0xFFFE) + le16(element) + le32(length) }

    func error(_ path: String) -> DICOMDataError? {
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try Part10File.checkStructure(contentsOf: path, maximumInflatedSize: 1 << 20)
            return nil
        } catch {
            return error
        }
    }

    @Test func aValidFileGivesTheDataSetsUIDs() throws {
        let path = try Self.file(instance: "1.2.3.4.5.67")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let structure = try Part10File.checkStructure(contentsOf: path, maximumInflatedSize: 1 << 20)
        #expect(structure.sopClassUID == Self.sopClass)
        #expect(structure.sopInstanceUID == "1.2.3.4.5.67")
        #expect(structure.transferSyntax == .explicitVRLittleEndian)
    }

    @Test func aValueLongerThanTheFileIsRefused() throws {
        let error = self.error(
            try Self.file(tail: Self.long(0x7FE0, 0x0010, "OB", 64) + [UInt8](repeating: 1, count: 10)))
        #expect(error?.code == .lengthPastEnd)
    }

    @Test func anOddLengthIsRefused() throws {
        let error = self.error(try Self.file(tail: Self.long(0x0009, 0x1010, "OB", 3) + [1, 2, 3]))
        #expect(error?.code == .invalidLength, "\(String(describing: error))")
    }

    /// Encapsulated Pixel Data (PS3.5 §A.4): an odd fragment, and a missing Sequence Delimitation Item.
    @Test func brokenEncapsulatedPixelDataIsRefused() throws {
        let jpeg = TransferSyntax(uid: "1.2.840.10008.1.2.4.50")
        let good =
            Self.long(0x7FE0, 0x0010, "OB", 0xFFFF_FFFF) + Self.item(0xE000, 0) + Self.item(0xE000, 4) + [1, 2, 3, 4]
            + Self.item(0xE0DD, 0)
        let path = try Self.file(jpeg, tail: good)
        #expect(self.error(path) == nil)
        let odd =
            Self.long(0x7FE0, 0x0010, "OB", 0xFFFF_FFFF) + Self.item(0xE000, 0) + Self.item(0xE000, 3) + [1, 2, 3]
            + Self.item(0xE0DD, 0)
        #expect(self.error(try Self.file(jpeg, tail: odd))?.code == .invalidLength)
        let open =
            Self.long(0x7FE0, 0x0010, "OB", 0xFFFF_FFFF) + Self.item(0xE000, 0) + Self.item(0xE000, 4) + [1, 2, 3, 4]
        #expect(self.error(try Self.file(jpeg, tail: open))?.code == .truncated)
    }

    /// A sequence of undefined length without its delimiter, and an item longer than its sequence.
    @Test func brokenSequencesAreRefused() throws {
        let unclosed =
            Self.long(0x0040, 0x0275, "SQ", 0xFFFF_FFFF) + Self.item(0xE000, 0xFFFF_FFFF) + Self.item(0xE00D, 0)
        #expect(self.error(try Self.file(tail: unclosed))?.code == .truncated)
        let overlong = Self.long(0x0040, 0x0275, "SQ", 8) + Self.item(0xE000, 16) + [UInt8](repeating: 0, count: 16)
        #expect(self.error(try Self.file(tail: overlong))?.code == .lengthPastEnd)
        let closed =
            Self.long(0x0040, 0x0275, "SQ", 0xFFFF_FFFF) + Self.item(0xE000, 0xFFFF_FFFF) + Self.item(0xE00D, 0)
            + Self.item(0xE0DD, 0)
        #expect(self.error(try Self.file(tail: closed)) == nil)
    }

    /// A deflated file is checked inflated, within the limit; its inflated data set is the same data set
    /// in Explicit VR Little Endian.
    @Test(.tags(.integration), .integrationTier) func aDeflatedFileIsCheckedInflated() throws {
        let deflated = PushHelpers.pydicomFile("image_dfl.dcm")
        let structure = try Part10File.checkStructure(contentsOf: deflated, maximumInflatedSize: 1 << 24)
        #expect(structure.transferSyntax.isDeflated)
        #expect(structure.sopInstanceUID == "1.3.6.1.4.1.5962.1.1.0.0.0.977067309.6001.0")
        let inflated = try Part10File.inflatedDataSet(
            contentsOf: deflated, dataSetOffset: structure.dataSetOffset, maximumInflatedSize: 1 << 24)
        let read = try DataSetReader.read(inflated, transferSyntax: .explicitVRLittleEndian).dataSet
        #expect(read.dicomJSON() == (try Part10File(contentsOf: deflated).dataSet.dicomJSON()))
        #expect(throws: DICOMDataError.self) {
            try Part10File.checkStructure(contentsOf: deflated, maximumInflatedSize: 1024)
        }
    }
}

enum PushHelpers {
    /// A file of pydicom's test data in the test venv (``TestSupport/venv``: `$PX_VENV`, else `.venv`;
    /// lib/python3.X/site-packages/pydicom/data/test_files).
    static func pydicomFile(_ name: String) -> String {
        let lib = TestSupport.venv + "/lib"
        let python =
            (try? FileManager.default.contentsOfDirectory(atPath: lib))?.sorted().last { $0.hasPrefix("python3") }
            ?? "python3"
        return lib + "/" + python + "/site-packages/pydicom/data/test_files/" + name
    }
}
