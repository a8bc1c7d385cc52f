import DICOMData
import Testing

@Suite(.timeLimit(.minutes(2))) struct DIMSEStatusTests {
    @Test func namesFollowDCMTK() {
        #expect(DIMSEStatus(code: 0xA801, service: .move).name == "Refused: MoveDestinationUnknown")
        #expect(DIMSEStatus(code: 0xA702, service: .move).name == "Refused: OutOfResourcesSubOperations")
        #expect(DIMSEStatus(code: 0xC000, service: .find).name == "Failed: UnableToProcess")
        #expect(DIMSEStatus(code: 0xC123, service: .store).name == "Error: CannotUnderstand")
        #expect(DIMSEStatus(code: 0xFF01, service: .find).name == "Pending: WarningUnsupportedOptionalKeys")
        #expect(DIMSEStatus(code: 0xB000, service: .store).name == "Warning: CoercionOfDataElements")
        #expect(DIMSEStatus(code: 0xB000, service: .move).category == .warning)
    }

    @Test(arguments: [
        (UInt16(0x0000), DIMSEStatus.Category.success), (0xFF00, .pending), (0xFF01, .pending), (0xFE00, .cancel),
        (0xB000, .warning), (0x0107, .warning), (0xA700, .failure), (0xA900, .failure), (0xC001, .failure),
        (0x0122, .failure),
    ])
    func categories(_ code: UInt16, _ category: DIMSEStatus.Category) {
        #expect(DIMSEStatus(code: code).category == category)
        #expect(DIMSEStatus.category(of: code) == category)
    }

    @Test func parsesDCMTKNames() {
        #expect(DIMSEStatus(dcmtkName: "Refused: MoveDestinationUnknown", service: .move)?.code == 0xA801)
        #expect(DIMSEStatus(dcmtkName: "Error: DataSetDoesNotMatchSOPClass", service: .find)?.code == 0xA900)
        #expect(DIMSEStatus(dcmtkName: "no such thing", service: .find) == nil)
        #expect(DIMSEStatus(code: 0xA801).hexCode == "0xa801")
    }

    /// One table names a code for both layers: the protocol's decoded responses and px's JSON.
    @Test func oneTableForEveryLayer() {
        #expect(DIMSEStatus(code: 0x0110).name == "Failed: ProcessingFailure")
        #expect(DIMSEStatus.unrecognizedOperation.name == "Failed: UnrecognizedOperation")
        #expect(DIMSEStatus(code: 0xA801, service: .move).description == "Refused: MoveDestinationUnknown (0xa801)")
        // Equal by code whatever table names it.
        #expect(DIMSEStatus(code: 0xB000, service: .store) == DIMSEStatus(code: 0xB000, service: .move))
        #expect(DIMSEStatus(code: 0xB000, service: .store).name != DIMSEStatus(code: 0xB000, service: .move).name)
        #expect(DIMSEStatus.cannotUnderstand.name == "Error: CannotUnderstand")
    }

    @Test func keepsANameDCMTKPrintedThatTheTableLacks() {
        let status = DIMSEStatus(reportedName: "Failed: SomethingNew", service: .find)
        #expect(status.name == "Failed: SomethingNew")
        #expect(status.category == .failure)
        #expect(status.hexCode == "0xc000")
        #expect(DIMSEStatus(reportedName: "Warning: Odd", service: .move).category == .warning)
    }
}
