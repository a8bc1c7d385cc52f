import DICOMData
import Foundation
import Testing

/// The bounded header read (`Part10File.readHeader`, issue 14): it walks the file instead of reading it
/// whole, yet returns what the whole read returns before Pixel Data, in every transfer syntax; long values
/// are skipped without being held, and its limits and budget end the read with `tooLarge`.
@Suite("Header limits", .timeLimit(.minutes(10))) struct HeaderLimitsTests {
    /// The top-level elements before Pixel Data, as DICOM JSON, without the plain values longer than
    /// `skippedAbove` and, when that is set, the sequences of defined length (which the walk skips by their
    /// encoded length, not known here).
    static func header(_ dataSet: DataSet, skippedAbove: Int = .max) -> String {
        var header = DataSet()
        for element in dataSet.elements where element.tag < .pixelData && element.valueLength <= skippedAbove {
            if skippedAbove < .max && element.vr == .SQ && !element.hasUndefinedLength { continue }
            header.set(element)
        }
        return header.dicomJSON().serialized()
    }

    /// With a value length limit below the first read (16 KiB), or below the file, the header is walked
    /// element by element rather than parsed where it lies, and values above the limit are skipped.
    @Test(
        "the header read equals the whole read up to Pixel Data for the synthetic and pydicom files",
        .tags(.integration), .integrationTier, arguments: [Int.max, 16 * 1024 - 1, 64])
    func sameAsWholeRead(maximumValueLength: Int) async throws {
        let limits = HeaderLimits(maximumSize: .max, maximumValueLength: maximumValueLength)
        var compared = 0
        var deflated = 0
        for url in try await Corpus.synthetic() + Corpus.pydicom() {
            // Files the whole read refuses are the bad-input tests' business.
            guard let whole = try? Part10File(contentsOf: url.path) else { continue }
            let header = try Part10File.readHeader(contentsOf: url.path, limits: limits)
            #expect(
                Self.header(header.dataSet, skippedAbove: maximumValueLength)
                    == Self.header(whole.dataSet, skippedAbove: maximumValueLength),
                "\(url.lastPathComponent)")
            #expect(header.transferSyntax == whole.transferSyntax)
            #expect(header.meta.dicomJSON().serialized() == whole.meta.dicomJSON().serialized())
            compared += 1
            if whole.transferSyntax.isDeflated { deflated += 1 }
        }
        #expect(compared >= 100)
        #expect(deflated >= 1)
    }

    /// A file with a `length`-byte private OB value between the patient and the study elements.
    static func fileWithLongValue(_ length: Int) throws -> [UInt8] {
        var set = DataSet()
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array("1.2.840.10008.5.1.4.1.1.7\0".utf8)))
        set.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.4.5.6\0".utf8)))
        set.set(DataElement(tag: Tag(0x0019, 0x0010), vr: .LO, bytes: Array("PX TEST ".utf8)))
        set.set(DataElement(tag: Tag(0x0019, 0x1010), vr: .OB, bytes: [UInt8](repeating: 0x5A, count: length)))
        set.set(DataElement(tag: .studyInstanceUID, vr: .UI, bytes: Array("1.2.3.4.7\0".utf8)))
        set.set(DataElement(tag: .pixelData, vr: .OW, bytes: [UInt8](repeating: 7, count: 1024)))
        return try Part10File(dataSet: set, transferSyntax: .explicitVRLittleEndian).encoded()
    }

    @Test("a value longer than maximumValueLength is skipped, never held: the read holds well under it")
    func longValueSkipped() throws {
        let path = try Part10FileHeaderTests.write(try Self.fileWithLongValue(8 << 20))
        defer { unlink(path) }
        var held = 0
        let header = try Part10File.readHeader(
            contentsOf: path, limits: HeaderLimits(maximumValueLength: 1 << 20),
            reserve: { (total: Int) throws(DICOMDataError) in held = max(held, total) })
        #expect(header.stoppedEarly)
        #expect(header.dataSet[Tag(0x0019, 0x1010)] == nil)
        #expect(header.dataSet.string(.studyInstanceUID) == "1.2.3.4.7")
        #expect(header.dataSet.string(.sopInstanceUID) == "1.2.3.4.5.6")
        #expect(held > 0 && held < 1 << 20, "the read held \(held) bytes")
    }

    @Test("a header above maximumSize is refused with tooLarge")
    func headerTooLarge() throws {
        let path = try Part10FileHeaderTests.write(try Self.fileWithLongValue(200_000))
        defer { unlink(path) }
        #expect {
            try Part10File.readHeader(contentsOf: path, limits: HeaderLimits(maximumSize: 100_000))
        } throws: { ($0 as? DICOMDataError)?.code == .tooLarge }
    }

    @Test("a budget that refuses ends the read with its error")
    func budgetRefuses() throws {
        let path = try Part10FileHeaderTests.write(try Self.fileWithLongValue(300_000))
        defer { unlink(path) }
        #expect {
            try Part10File.readHeader(
                contentsOf: path,
                reserve: { (total: Int) throws(DICOMDataError) in
                    if total > 200_000 { throw .tooLarge("test budget", limit: 200_000) }
                })
        } throws: { ($0 as? DICOMDataError)?.message.contains("test budget") == true }
    }

    @Test("a file truncated inside a skipped value is an error, not a short header")
    func truncatedInsideSkippedValue() throws {
        let bytes = try Self.fileWithLongValue(4 << 20)
        let path = try Part10FileHeaderTests.write(Array(bytes.prefix(2 << 20)))
        defer { unlink(path) }
        #expect(throws: DICOMDataError.self) {
            try Part10File.readHeader(contentsOf: path, limits: HeaderLimits(maximumValueLength: 1 << 20))
        }
    }
}
