import DICOMData
import PXCore
import Testing

@testable import DCMTKBackend

/// findscu's arguments for a worklist identifier (sequence keys as paths), the TLS-mismatch names read from
/// DCMTK's lines, and the LISTEN entries of a `/proc/net/tcp` table.
struct WorklistArgumentTests {
    @Test func sequenceKeysArePaths() throws {
        var item = DataSet()
        item.set(.modality, vr: .CS, string: "CT")
        item.set(Tag(0x0040, 0x0001), vr: .AE, string: "")
        var identifier = DataSet()
        identifier.set(.patientID, vr: .LO, string: "P1")
        identifier.set(
            DataElement(tag: Tag(0x0040, 0x0100), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        identifier.set(DataElement(tag: Tag(0x0040, 0x0275), vr: .SQ, value: .sequence([])))
        #expect(
            DCMTKBackend.keyArguments(identifier) == [
                "-k", "(0010,0020)=P1", "-k", "(0040,0100)[0].(0008,0060)=CT", "-k", "(0040,0100)[0].(0040,0001)",
                "-k", "(0040,0275)",
            ])
        #expect(DCMTKBackend.modelOption(.worklist) == "-W")
    }

    @Test func plainToTLSOnlyPeerIsNamed() {
        let alert = [DCMTKLogLine("F: Association Request Failed: 0006:0321 Unrecognized PDU type: 15")]
        let closed = [
            DCMTKLogLine("F: Association Request Failed: 0006:0317 Peer aborted Association (or never connected)")
        ]
        #expect(DCMTKBackend.tlsFailure(alert, settings: nil)?.code.description == "tlsPeerExpectsTLS")
        #expect(DCMTKBackend.tlsFailure(closed, settings: nil)?.code.description == "tlsPeerExpectsTLS")
        #expect(DCMTKBackend.tlsFailure([DCMTKLogLine("E: Store Failed")], settings: nil) == nil)
    }

    @Test func listeningEntriesOfAProcTable() {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 00000000:2B67 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0
               1: 0100007F:2B67 0100007F:9C40 01 00000000:00000000 00:00000000 00000000     0        0 4243 1 0
            """
        let entries = ListeningSockets.listeningEntries(table: table)
        #expect(entries.count == 1)
        #expect(entries.first?.inode == 4242 && entries.first?.port == 11111)
    }
}
