import DICOMData
import PXCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct AETitleTests {
    @Test(arguments: ["A", "QRSCP", "ANY-SCP", "SIXTEEN_CHARS_AB", "with space"])
    func accepts(_ title: String) { #expect(AETitle.isValid(title)) }

    @Test(arguments: ["", "SEVENTEEN_CHARS_AB", "back\\slash", "   ", "tab\there", "nul\0"])
    func rejects(_ title: String) { #expect(!AETitle.isValid(title)) }
}

@Suite(.timeLimit(.minutes(2))) struct MoveRequestTests {
    @Test func seriesMoveCarriesTheStudy() throws {
        let r = try MoveRequest(destination: "DEST", studyInstanceUID: "1.2", seriesInstanceUID: "1.2.3")
        #expect(r.level == .series)
        #expect(r.keys.map(\.keyword) == ["QueryRetrieveLevel", "StudyInstanceUID", "SeriesInstanceUID"])
        #expect(r.keys[0].value == "SERIES")
    }

    @Test func instancesNeedTheirSeries() {
        #expect(throws: PXError.self) {
            try MoveRequest(destination: "DEST", studyInstanceUID: "1", sopInstanceUIDs: ["1.1"])
        }
        #expect(throws: PXError.self) {
            try MoveRequest(model: .patientRoot, destination: "DEST", studyInstanceUID: "1")
        }
    }
}

@Suite(.timeLimit(.minutes(2))) struct PXOutputTests {
    @Test func envelopeHasErrorOnlyOnFailure() throws {
        let ok = PXOutput.envelope(backend: "dcmtk", command: ["px-echo", "h:1"], data: .object([]))
        #expect(ok.serialized() == #"{"status":"success","backend":"dcmtk","command":["px-echo","h:1"],"data":{}}"#)
        let bad = PXOutput.envelope(backend: "dcmtk", command: [], data: nil, error: .unknownHost("x"))
        #expect(bad["status"]?.stringValue == "error")
        #expect(bad["error"]?["code"]?.stringValue == "unknownHost")
        #expect(bad["data"] == .null)
    }

    @Test func pypxEntriesHaveTheUidIndexAndNestedSeries() {
        var study = DataSet()
        study.set(.studyInstanceUID, vr: .UI, string: "1.2")
        var series = DataSet()
        series.set(.seriesInstanceUID, vr: .UI, string: "1.2.3")
        let data = PXOutput.findData(
            [StudyWithSeries(study: study, series: [series], seriesStatus: .success)], format: .pypx)
        let entry = data.arrayValue?.first
        #expect(entry?["uid"]?["label"]?.stringValue == "uid")
        #expect(entry?["StudyInstanceUID"]?["tag"]?.stringValue == "0020,000d")
        #expect(entry?["series"]?.arrayValue?.first?["SeriesInstanceUID"]?["value"]?.stringValue == "1.2.3")
    }

    /// pypx 3.x's series entries repeat the study's patient and study keys; a study in Latin-1 and a series
    /// in UTF-8 each decode with their own character set.
    @Test func pypxSeriesEntriesCarryTheStudyKeys() throws {
        var study = DataSet()
        study.set(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: Array("ISO_IR 100".utf8)))
        // Müller^J in ISO_IR 100.
        study.set(DataElement(tag: .patientName, vr: .PN, bytes: [0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72, 0x5E, 0x4A]))
        study.set(.patientID, vr: .LO, string: "PAT002")
        study.set(.studyDate, vr: .DA, string: "20240115")
        study.set(Tag(0x0008, 0x0050), vr: .SH, string: "ACC9")
        study.set(.studyInstanceUID, vr: .UI, string: "1.2")
        var plain = DataSet()
        plain.set(.seriesInstanceUID, vr: .UI, string: "1.2.3")
        plain.set(.patientID, vr: .LO, string: "")  // asked for, returned empty
        var utf8 = DataSet()
        utf8.set(DataElement(tag: .specificCharacterSet, vr: .CS, bytes: Array("ISO_IR 192".utf8)))
        utf8.set(.seriesInstanceUID, vr: .UI, string: "1.2.4")
        utf8.set(DataElement(tag: .patientName, vr: .PN, bytes: Array("Müller^Jö".utf8)))
        let data = PXOutput.findData(
            [StudyWithSeries(study: study, series: [plain, utf8], seriesStatus: .success)], format: .pypxClean)
        let series = try #require(data.arrayValue?.first?["series"]?.arrayValue)
        #expect(series[0]["PatientName"]?["value"]?.stringValue == "Müller^J")
        #expect(series[0]["PatientID"]?["value"]?.stringValue == "PAT002")
        #expect(series[0]["AccessionNumber"]?["tag"]?.stringValue == "0008,0050")
        #expect(series[0]["StudyDate"]?["value"]?.stringValue == "20240115")
        #expect(series[0]["SpecificCharacterSet"]?["value"]?.stringValue == "ISO_IR 100")
        #expect(series[0]["StudyInstanceUID"] == nil)
        guard case .object(let members) = series[0] else { throw PXError.usage("not an object") }
        #expect(
            members.map(\.key) == [
                "uid", "SpecificCharacterSet", "StudyDate", "AccessionNumber", "PatientName", "PatientID",
                "SeriesInstanceUID", "label", "status",
            ])
        // The series' own values and character set stay.
        #expect(series[1]["PatientName"]?["value"]?.stringValue == "Müller^Jö")
        #expect(series[1]["SpecificCharacterSet"]?["value"]?.stringValue == "ISO_IR 192")
        #expect(series[1]["PatientID"]?["value"]?.stringValue == "PAT002")

        // pypx's own values (the default format): an empty value is pypx's text, filled from the study too.
        plain.set(Tag(0x0008, 0x0060), vr: .CS, string: "")
        plain.set(Tag(0x0008, 0x0061), vr: .CS, strings: ["CT", "MR"])
        let strict = PXOutput.findData(
            [StudyWithSeries(study: study, series: [plain], seriesStatus: .success)], format: .pypx)
        let strictSeries = try #require(strict.arrayValue?.first?["series"]?.arrayValue?.first)
        #expect(strictSeries["PatientID"]?["value"]?.stringValue == "PAT002")
        #expect(strictSeries["Modality"]?["value"]?.stringValue == "no value provided for 0008,0060")
        #expect(strictSeries["ModalitiesInStudy"]?["value"]?.stringValue == "CT\\MR")
    }
}

@Suite(.timeLimit(.minutes(2))) struct TreeViewTests {
    /// dcm's tree: the summary line, then patient → study → series with counts, patients in first-seen order.
    @Test func patientsStudiesAndSeriesWithCounts() {
        let ct = [
            SeriesHolding(
                studyInstanceUID: "1", seriesInstanceUID: "1.1", modality: "CT", seriesNumber: "2",
                seriesDescription: "Chest", instanceCount: 120),
            SeriesHolding(studyInstanceUID: "1", seriesInstanceUID: "1.2", modality: "SR", instanceCount: 1),
        ]
        let studies = [
            PXOutput.TreeStudy(
                study: StudyHolding(
                    studyInstanceUID: "1", patientID: "P1", patientName: "Doe^John", studyDate: "20240115",
                    studyDescription: "Chest CT", accessionNumber: "A1"),
                series: ct),
            PXOutput.TreeStudy(
                study: StudyHolding(studyInstanceUID: "2", patientID: "P2", patientName: "Roe^Jane", instanceCount: 7),
                series: []),
            PXOutput.TreeStudy(
                study: StudyHolding(
                    studyInstanceUID: "3", patientID: "P1", patientName: "Doe^John", studyDate: "20250101"),
                series: [SeriesHolding(studyInstanceUID: "3", seriesInstanceUID: "3.1", modality: "MR")]),
        ]
        let lines = PXOutput.tree(studies).split(separator: "\n").map(String.init)
        #expect(lines.first == "2 patients | 3 studies | 3 series | >=128 instances")
        #expect(
            Array(lines.dropFirst())
                == [
                    "P1 Doe^John  2 studies",
                    "├─ 20240115 Chest CT A1  2 series, 121 instances",
                    "│  ├─ CT #2 Chest  120 instances",
                    "│  └─ SR  1 instance",
                    "└─ 20250101  1 series, ? instances",
                    "   └─ MR  ? instances",
                    "P2 Roe^Jane  1 study",
                    "└─ 2  0 series, 7 instances",
                ])
    }

    /// px-find's responses as holdings: NumberOfStudyRelated* and NumberOfSeriesRelatedInstances read as counts.
    @Test func findResponsesBecomeHoldings() {
        var study = DataSet()
        study.set(.studyInstanceUID, vr: .UI, string: "1.2")
        study.set(.patientID, vr: .LO, string: "P9")
        study.set(Tag(0x0020, 0x1208), vr: .IS, string: "12 ")
        var series = DataSet()
        series.set(.seriesInstanceUID, vr: .UI, string: "1.2.3")
        series.set(Tag(0x0020, 0x1209), vr: .IS, string: "12")
        let tree = PXOutput.treeStudies([StudyWithSeries(study: study, series: [series], seriesStatus: .success)])
        #expect(tree.first?.study.instanceCount == 12)
        #expect(tree.first?.series?.first?.instanceCount == 12)
        #expect(PXOutput.tree(tree).hasPrefix("1 patient | 1 study | 1 series | 12 instances\n"))
    }
}
