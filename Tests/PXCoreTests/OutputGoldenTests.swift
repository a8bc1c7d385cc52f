import DICOMData
import PXCore
import PXStorage
import Testing

/// px's JSON for echo, move, get and listen, pinned byte for byte from typed values: the renderers may change
/// (hand-built members, then `Encodable` types), the bytes may not.
struct OutputGoldenTests {
    static let success = #"{"code":"0x0000","name":"Success","category":"success"}"#
    static let failure = DIMSEStatus(code: 0xA702)

    static func moveRequest(series: Bool = true, instances: [String] = []) throws -> MoveRequest {
        try MoveRequest(
            destination: "DEST", studyInstanceUID: "1.2", seriesInstanceUID: series ? "1.2.3" : nil,
            sopInstanceUIDs: instances)
    }

    static func instance(_ path: String, duplicate: DuplicatePolicy? = nil, association: UInt64? = nil)
        -> ReceivedInstance
    {
        ReceivedInstance(
            path: path, sopClassUID: "1.2.840.10008.5.1.4.1.1.7", sopInstanceUID: "1.2.3.4",
            studyInstanceUID: "1.2", seriesInstanceUID: "1.2.3", callingAETitle: association == nil ? nil : "SCU",
            bytes: 1234, transferSyntaxUID: "1.2.840.10008.1.2.1", duplicate: duplicate, association: association)
    }

    @Test func statusIsPinned() {
        #expect(PXOutput.json(DIMSEStatus.success).serialized() == Self.success)
    }

    @Test func echo() throws {
        let echo = EchoResult(
            node: try DICOMNode(host: "pacs", port: 104, calledAETitle: "ANY"), callingAETitle: "PX",
            status: .success, elapsed: 0.25)
        #expect(
            PXOutput.json(Verification.echo(echo)).serialized()
                == #"{"host":"pacs","port":104,"calledAETitle":"ANY","callingAETitle":"PX","dimseStatus":"#
                + Self.success + "}")
        let web = WebVerification(
            url: "http://h:8042/dicom-web", host: "h", port: 8042, checked: "QIDO-RS",
            request: "GET /studies?limit=1", httpStatus: 204, contentType: nil, matches: 0, elapsed: 0.1)
        #expect(
            PXOutput.json(Verification.web(web)).serialized()
                == #"{"checked":"QIDO-RS","url":"http://h:8042/dicom-web","host":"h","port":8042,"#
                + #""request":"GET /studies?limit=1","httpStatus":204,"contentType":null,"matches":0}"#)
        var typed = web
        typed.contentType = "application/dicom+json"
        #expect(PXOutput.json(typed)["contentType"] == .string("application/dicom+json"))
    }

    @Test func move() throws {
        var result = MoveResult(
            request: try Self.moveRequest(instances: ["1.2.3.4", "1.2.3.5"]), status: Self.failure, completed: 1,
            failed: 2, warning: 0, responses: 3)
        result.failedSOPInstanceUIDs = ["1.2.3.5"]
        let status = PXOutput.json(Self.failure).serialized()
        #expect(
            PXOutput.json(result).serialized()
                == #"{"destination":"DEST","level":"IMAGE","model":"study","StudyInstanceUID":"1.2","#
                + #""SeriesInstanceUID":"1.2.3","SOPInstanceUIDs":["1.2.3.4","1.2.3.5"],"dimseStatus":"# + status
                + #","completed":1,"failed":2,"warning":0,"responses":3,"failedSOPInstanceUIDs":["1.2.3.5"]}"#)
        let patient = MoveResult(
            request: try MoveRequest(
                model: .patientRoot, destination: "DEST", patientID: "P1", studyInstanceUID: ""),
            status: .success, completed: 0, failed: 0, warning: 0, responses: 1)
        #expect(
            PXOutput.json(patient).serialized()
                == #"{"destination":"DEST","level":"PATIENT","model":"patient","PatientID":"P1","dimseStatus":"#
                + Self.success + #","completed":0,"failed":0,"warning":0,"responses":1}"#)
        let progress = MoveProgress(remaining: nil, completed: 4, failed: 0, warning: 1, status: .success)
        #expect(
            PXOutput.json(progress).serialized()
                == #"{"remaining":null,"completed":4,"failed":0,"warning":1,"dimseStatus":"# + Self.success + "}")
        var counting = progress
        counting.remaining = 2
        #expect(PXOutput.json(counting)["remaining"] == .integer(2))
    }

    @Test func get() throws {
        let request = try GetRequest(studyInstanceUID: "1.2", root: "/r")
        var result = GetResult(
            request: request, status: .success, remaining: nil, completed: 2, failed: 0, warning: 0, responses: 3,
            instances: [Self.instance("/r/b.dcm"), Self.instance("/r/a.dcm")],
            storeFailures: [.storeFailed(path: "/r/c.dcm", sopInstanceUID: nil, error: .io("disk full"))])
        let failure = PXOutput.json(PXError.io("disk full")).serialized()
        func stored(_ path: String) -> String {
            #"{"path":"# + "\"\(path)\"" + #","SOPClassUID":"1.2.840.10008.5.1.4.1.1.7","SOPInstanceUID":"1.2.3.4","#
                + #""StudyInstanceUID":"1.2","SeriesInstanceUID":"1.2.3","bytes":1234,"#
                + #""transferSyntaxUID":"1.2.840.10008.1.2.1"}"#
        }
        let expected =
            #"{"level":"STUDY","model":"study","StudyInstanceUID":"1.2","dimseStatus":"# + Self.success
            + #","remaining":null,"completed":2,"failed":1,"warning":0,"responses":3,"instances":["#
            + stored("/r/a.dcm") + "," + stored("/r/b.dcm") + #"],"storeFailures":[{"event":"storeFailed","#
            + #""path":"/r/c.dcm","SOPInstanceUID":null,"dimseStatus":null,"error":"# + failure + "}]}"
        #expect(PXOutput.json(result).serialized() == expected)
        result.remaining = 0
        result.failedSOPInstanceUIDs = ["9"]
        result.storeFailures = []
        let json = PXOutput.json(result)
        #expect(json["remaining"] == JSONValue.integer(0))
        #expect(json["failedSOPInstanceUIDs"] == JSONValue.array([.string("9")]))
        #expect(json.objectValue?.last?.key == "failedSOPInstanceUIDs")
        let patient = GetResult(
            request: try GetRequest(model: .patientRoot, patientID: "P1", studyInstanceUID: "", root: "/r"),
            status: .success, remaining: 0, completed: 0, failed: 0, warning: 0, responses: 1, instances: [],
            storeFailures: [])
        #expect(
            PXOutput.json(patient).serialized()
                == #"{"level":"PATIENT","model":"patient","PatientID":"P1","dimseStatus":"# + Self.success
                + #","remaining":0,"completed":0,"failed":0,"warning":0,"responses":1,"instances":[],"#
                + #""storeFailures":[]}"#)
    }

    @Test func listen() {
        let completion = SeriesCompletion(
            directory: "/d/s", seriesInstanceUID: "1.2.3", studyInstanceUID: "1.2", patientID: "P1", instances: 5,
            reason: "timeout")
        let cases: [(ListenEvent, String)] = [
            (.listening(port: 11112, aeTitle: "PX"), #"{"event":"listening","port":11112,"aeTitle":"PX"}"#),
            (
                .associationOpened(peerHost: "127.0.0.1", callingAETitle: "SCU", calledAETitle: nil, association: 7),
                #"{"event":"associationOpened","peerHost":"127.0.0.1","callingAETitle":"SCU","calledAETitle":null,"#
                    + #""association":7}"#
            ),
            (
                .associationClosed(peerHost: nil, callingAETitle: "SCU", aborted: true),
                #"{"event":"associationClosed","peerHost":null,"callingAETitle":"SCU","aborted":true,"#
                    + #""association":null}"#
            ),
            (
                .associationRejected(
                    peerHost: "10.0.0.7", callingAETitle: "BAD", calledAETitle: "PX", result: "Rejected Permanent",
                    source: "Service User", reason: "Calling AE Title Not Recognized"),
                #"{"event":"associationRejected","peerHost":"10.0.0.7","callingAETitle":"BAD","calledAETitle":"PX","#
                    + #""result":"Rejected Permanent","source":"Service User","#
                    + #""reason":"Calling AE Title Not Recognized"}"#
            ),
            (
                .instanceReceived(Self.instance("/d/a.dcm", duplicate: .rename, association: 2)),
                #"{"event":"instanceReceived","path":"/d/a.dcm","SOPClassUID":"1.2.840.10008.5.1.4.1.1.7","#
                    + #""SOPInstanceUID":"1.2.3.4","StudyInstanceUID":"1.2","SeriesInstanceUID":"1.2.3","#
                    + #""callingAETitle":"SCU","bytes":1234,"transferSyntaxUID":"1.2.840.10008.1.2.1","#
                    + #""duplicate":"rename","association":2}"#
            ),
            (
                .instanceReceived(Self.instance("/d/b.dcm")),
                #"{"event":"instanceReceived","path":"/d/b.dcm","SOPClassUID":"1.2.840.10008.5.1.4.1.1.7","#
                    + #""SOPInstanceUID":"1.2.3.4","StudyInstanceUID":"1.2","SeriesInstanceUID":"1.2.3","#
                    + #""callingAETitle":null,"bytes":1234,"transferSyntaxUID":"1.2.840.10008.1.2.1","#
                    + #""duplicate":null,"association":null}"#
            ),
            (
                .seriesComplete(completion),
                #"{"event":"seriesComplete","directory":"/d/s","SeriesInstanceUID":"1.2.3","#
                    + #""StudyInstanceUID":"1.2","PatientID":"P1","instances":5,"reason":"timeout"}"#
            ),
            (
                .storeFailed(path: nil, sopInstanceUID: "1.2.3.4", error: .usage("no")),
                #"{"event":"storeFailed","path":null,"SOPInstanceUID":"1.2.3.4","dimseStatus":null,"error":"#
                    + PXOutput.json(PXError.usage("no")).serialized() + "}"
            ),
            (
                .storeFailed(
                    path: nil, sopInstanceUID: "1.2.3.4", error: .usage("no"), status: .dataSetDoesNotMatchSOPClass),
                #"{"event":"storeFailed","path":null,"SOPInstanceUID":"1.2.3.4","dimseStatus":"#
                    + PXOutput.json(DIMSEStatus.dataSetDoesNotMatchSOPClass).serialized() + #","error":"#
                    + PXOutput.json(PXError.usage("no")).serialized() + "}"
            ),
        ]
        for (event, expected) in cases {
            #expect(PXOutput.json(event).serialized() == expected)
        }
        // Pretty output indents the same members.
        #expect(
            PXOutput.json(ListenEvent.listening(port: 1, aeTitle: "A")).serialized(pretty: true)
                == "{\n  \"event\": \"listening\",\n  \"port\": 1,\n  \"aeTitle\": \"A\"\n}")
    }

    @Test func findCounts() {
        #expect(PXOutput.findData([DataSet](), format: .ndjson).serialized() == #"{"count":0}"#)
        #expect(PXOutput.findData([StudyWithSeries](), format: .ndjson).serialized() == #"{"studies":0,"series":0}"#)
    }

    @Test func pypxSyntheticMembers() {
        #expect(PXOutput.pypxEntry(DataSet(), index: 3).serialized() == #"{"uid":{"tag":0,"value":3,"label":"uid"}}"#)
        let study = StudyWithSeries(study: DataSet(), series: [DataSet()], seriesStatus: .success)
        #expect(
            PXOutput.studyEntry(study, index: 1, format: .pypxClean, seriesCommand: "findscu -S h 1").serialized()
                == #"{"uid":{"tag":0,"value":1,"label":"uid"},"series":[{"uid":{"tag":0,"value":0,"label":"uid"},"#
                + #""label":{"tag":0,"value":"SERIES","label":"RetrieveLevel"},"#
                + #""command":{"tag":0,"value":"findscu -S h 1","label":"command"},"#
                + #""status":{"tag":0,"value":"success","label":"status"}}]}"#)
    }
}
