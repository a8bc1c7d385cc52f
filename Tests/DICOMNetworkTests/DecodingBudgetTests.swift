import DICOMData
import DICOMNetwork
import Foundation
import PXTestSupport
import Testing

/// ``IncomingInstance/readHeader()`` within the server's ``DecodingBudget``: a header read that would take
/// more than is left is refused with `tooLarge`, and every read gives back what it took.
@Suite("Decoding budget", .timeLimit(.minutes(2))) struct DecodingBudgetTests {
    /// A received file whose header holds a 300 KB value (under the 1 MiB skip length: it is read).
    static func instance(in directory: String, budget: DecodingBudget) throws -> IncomingInstance {
        var set = DataSet()
        set.set(DataElement(tag: .sopClassUID, vr: .UI, bytes: Array("1.2.840.10008.5.1.4.1.1.7\0".utf8)))
        set.set(DataElement(tag: .sopInstanceUID, vr: .UI, bytes: Array("1.2.3.4.5.6\0".utf8)))
        set.set(DataElement(tag: Tag(0x0019, 0x0010), vr: .LO, bytes: Array("PX TEST ".utf8)))
        set.set(DataElement(tag: Tag(0x0019, 0x1010), vr: .OB, bytes: [UInt8](repeating: 1, count: 300_000)))
        set.set(DataElement(tag: .studyInstanceUID, vr: .UI, bytes: Array("1.2.3.4.7\0".utf8)))
        let path = directory + "/received.dcm"
        let bytes = try Part10File(dataSet: set, transferSyntax: .explicitVRLittleEndian).encoded()
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var instance = IncomingInstance(
            path: path, sopClassUID: "1.2.840.10008.5.1.4.1.1.7", sopInstanceUID: "1.2.3.4.5.6",
            transferSyntaxUID: TransferSyntax.explicitVRLittleEndian.uid, callingAETitle: "A", calledAETitle: "B",
            dataSetLength: bytes.count - 200, fileLength: bytes.count)
        instance.decodingBudget = budget
        return instance
    }

    @Test("a read that does not fit in what is left of the budget is refused; a fitting one gives it all back")
    func budget() async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let small = DecodingBudget(limit: 200_000)
            await #expect {
                _ = try await Self.instance(in: dir, budget: small).readHeader()
            } throws: { ($0 as? DICOMDataError)?.code == .tooLarge }
            #expect(small.inUse == 0)

            let large = DecodingBudget(limit: 4 << 20)
            let header = try await Self.instance(in: dir, budget: large).readHeader()
            #expect(header.dataSet.string(.studyInstanceUID) == "1.2.3.4.7")
            #expect(large.inUse == 0)
        }
    }
}
