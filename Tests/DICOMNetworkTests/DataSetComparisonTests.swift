import DICOMData
import Testing

/// The interop suites trust ``DataSetComparison`` to find what another implementation changed; these check that it
/// does, and that it does not flag a faithful re-encoding.
@Suite("DataSetComparison", .timeLimit(.minutes(10)))
struct DataSetComparisonTests {
    static func sample(characterSet: String = "ISO_IR 100") -> DataSet {
        var dataSet = DataSet()
        dataSet.set(.specificCharacterSet, vr: .CS, string: characterSet)
        dataSet.set(.patientName, vr: .PN, string: "Müller^Jürgen")
        dataSet.set(.patientID, vr: .LO, string: "PAT002")
        dataSet.set(.sopInstanceUID, vr: .UI, string: "2.25.1")
        var item = DataSet(inheriting: dataSet.characterSet)
        item.set(.seriesDescription, vr: .LO, string: "Thorax Übersicht")
        dataSet.set(DataElement(tag: DICOMData.Tag(0x0008, 0x1140), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        dataSet.set(DataElement(tag: .pixelData, vr: .OW, bytes: [1, 2, 3, 4]))
        return dataSet
    }

    @Test("identical data sets, and group 0002 elements, give no differences")
    func identical() {
        var withMeta = Self.sample()
        withMeta.set(.transferSyntaxUID, vr: .UI, string: "1.2.840.10008.1.2")
        #expect(DataSetComparison.differences(Self.sample(), withMeta).isEmpty)
    }

    @Test("the same text in another character set differs only in (0008,0005)")
    func characterSet() {
        let latin1 = Self.sample()
        let utf8 = Self.sample(characterSet: "ISO_IR 192")
        #expect(latin1[.patientName]?.bytes != utf8[.patientName]?.bytes)
        let differences = DataSetComparison.differences(latin1, utf8)
        #expect(differences.count == 1, "\(differences)")
        #expect(differences.first?.hasPrefix("(0008,0005)") == true, "\(differences)")
    }

    @Test("a missing, an unexpected, a changed value, a changed VR and a changed item are each reported")
    func changes() {
        let original = Self.sample()
        var changed = original
        changed.remove(.patientID)
        changed.set(.modality, vr: .CS, string: "CT")
        changed.set(.patientName, vr: .PN, string: "Muller^Jurgen")
        changed.set(DataElement(tag: .pixelData, vr: .OB, bytes: [1, 2, 3, 4]))
        var item = DataSet(inheriting: original.characterSet)
        item.set(.seriesDescription, vr: .LO, string: "Thorax")
        changed.set(DataElement(tag: DICOMData.Tag(0x0008, 0x1140), vr: .SQ, value: .sequence([Item(dataSet: item)])))
        let differences = DataSetComparison.differences(original, changed)
        #expect(differences.count == 5, "\(differences)")
        for prefix in ["(0008,0060)", "(0008,1140)", "(0010,0010)", "(0010,0020)", "(7FE0,0010)"] {
            #expect(
                differences.contains { $0.lowercased().hasPrefix(prefix.lowercased()) }, "\(prefix) in \(differences)")
        }
        #expect(DataSetComparison.differences(changed, original).count == 5)
    }
}
