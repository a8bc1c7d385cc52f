import DICOMData
import Testing

/// `Part10File.dataSetOffset(in:)`: the one computation of where a file's data set starts (PS3.10 §7.1),
/// which the network layer sends from and the DCMTK backend reports lengths with.
@Suite(.timeLimit(.minutes(2))) struct DataSetOffsetTests {
    static func dataSet() -> DataSet {
        var set = DataSet()
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array("1.2.840.10008.5.1.4.1.1.7\0".utf8)))
        set.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.4.5.6\0".utf8)))
        set.set(DataElement(tag: .studyInstanceUID, vr: .UI, bytes: Array("1.2.3.4.7\0".utf8)))
        return set
    }

    @Test(
        "after the preamble, DICM and the meta group: the rest is the encoded data set",
        arguments: [
            TransferSyntax.explicitVRLittleEndian, .implicitVRLittleEndian,
        ])
    func afterTheMetaGroup(_ syntax: TransferSyntax) throws {
        let bytes = try Part10File(dataSet: Self.dataSet(), transferSyntax: syntax).encoded()
        let offset = try Part10File.dataSetOffset(in: bytes)
        #expect(Array(bytes[offset...]) == (try DataSetWriter.encode(Self.dataSet(), transferSyntax: syntax)))
        #expect(try Part10File(bytes: bytes).dataSetOffset == offset)
    }

    @Test("a file without preamble whose meta group starts at byte 0")
    func noPreamble() throws {
        let bytes = Array(
            try Part10File(dataSet: Self.dataSet(), transferSyntax: .explicitVRLittleEndian).encoded().dropFirst(132))
        let offset = try Part10File.dataSetOffset(in: bytes)
        #expect(
            Array(bytes[offset...])
                == (try DataSetWriter.encode(Self.dataSet(), transferSyntax: .explicitVRLittleEndian)))
    }

    @Test("a meta element that runs past the bytes is an error, not an offset past the end")
    func truncated() throws {
        let bytes = try Part10File(dataSet: Self.dataSet(), transferSyntax: .explicitVRLittleEndian).encoded()
        #expect(throws: DICOMDataError.self) { try Part10File.dataSetOffset(in: Array(bytes.prefix(170))) }
    }

    @Test("POSIX.errorText names the errno with its number")
    func errnoText() {
        #expect(POSIX.errorText(2) == "No such file or directory (errno 2)")
    }
}
