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
}
