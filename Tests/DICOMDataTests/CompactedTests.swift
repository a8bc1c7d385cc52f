import DICOMData
import Testing

/// `DataSet.compacted()` and `Part10File.compacted()`: a header parsed from a large buffer (the first MiB of
/// a received CT image) kept without that buffer (issue 34).
@Suite(.timeLimit(.minutes(2))) struct CompactedTests {
    /// A file with a sequence, then 512 KiB of Pixel Data; read up to Pixel Data from all of its bytes.
    static func header() throws -> (header: Part10File, fileBytes: Int) {
        var item = DataSet()
        item.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.9\0".utf8)))
        var set = DataSet()
        set.set(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: Array("ISO_IR 192".utf8)))
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array("1.2.840.10008.5.1.4.1.1.2\0".utf8)))
        set.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.4.5.6\0".utf8)))
        set.set(DataElement(tag: .patientName, vr: .PN, bytes: Array("Müller^Jürgen".utf8)))
        set.set(DataElement(tag: Tag(0x0008, 0x1140), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        set.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: 7, count: 512 << 10)))
        let bytes = try Part10File(dataSet: set, transferSyntax: .explicitVRLittleEndian).encoded()
        let header = try Part10File(bytes: bytes, options: .init(dataSet: .init(stopBefore: .pixelData)))
        return (header, bytes.count)
    }

    /// The largest index any value of `set` reaches in the buffer it is a slice of.
    static func highestIndex(_ set: DataSet) -> Int {
        set.elements.reduce(0) { highest, element in
            switch element.value {
            case .bytes(let bytes): return max(highest, bytes.endIndex)
            case .sequence(let items): return items.reduce(highest) { max($0, highestIndex($1.dataSet)) }
            case .fragments(let pixels): return pixels.fragments.reduce(highest) { max($0, $1.endIndex) }
            }
        }
    }

    @Test("the same elements, values and character set, held in a buffer of just the values")
    func sameValuesOwnBuffer() throws {
        let (header, fileBytes) = try Self.header()
        let compacted = header.compacted()
        #expect(
            try DataSetWriter.encode(compacted.dataSet, transferSyntax: .explicitVRLittleEndian)
                == (try DataSetWriter.encode(header.dataSet, transferSyntax: .explicitVRLittleEndian)))
        #expect(
            try DataSetWriter.encode(compacted.meta, transferSyntax: .explicitVRLittleEndian)
                == (try DataSetWriter.encode(header.meta, transferSyntax: .explicitVRLittleEndian)))
        #expect(compacted.dataSet.string(.patientName) == "Müller^Jürgen")
        #expect(compacted.dataSet.characterSet == header.dataSet.characterSet)
        #expect(compacted.transferSyntax.uid == header.transferSyntax.uid)
        #expect(compacted.dataSetOffset == header.dataSetOffset)
        #expect(compacted.stoppedEarly)
        // Read from the file's bytes, the values are slices of them, far into the file; compacted, of a buffer
        // no longer than the values themselves.
        #expect(Self.highestIndex(header.dataSet) > header.dataSet.valueBytes)
        #expect(Self.highestIndex(compacted.dataSet) <= compacted.dataSet.valueBytes)
        #expect(compacted.dataSet.valueBytes < 1024 && fileBytes > 512 << 10)
    }
}
