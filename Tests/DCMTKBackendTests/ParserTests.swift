import DCMTKBackend
import DICOMData
import PXCore
import Testing

let testConnection = Connection(
    node: try! DICOMNode(host: "127.0.0.1", port: 41104, calledAETitle: "QRSCP"), local: try! LocalAE(),
    timeouts: Timeouts(connect: 3, acse: 3, dimse: 5, deadline: 30))

@Suite(.timeLimit(.minutes(2))) struct FailureClassifierTests {
    func classify(_ name: String, tool: String) throws -> PXError? {
        let f = try Fixture(name)
        return DCMTKFailureClassifier.classify(
            tool: tool, exitCode: f.exitCode, signal: nil, lines: f.lines, connection: testConnection)
    }

    @Test func success() throws { #expect(try classify("06-echoscu-success-verbose.txt", tool: "echoscu") == nil) }

    @Test(arguments: [
        ("01-echoscu-connection-refused.txt", "echoscu", PXError.Code.connectionRefused),
        ("03-echoscu-unresolvable-host.txt", "echoscu", .unknownHost),
        ("07-echoscu-rejected-bad-called-aet.txt", "echoscu", .associationRejected),
        ("11-echoscu-acse-timeout.txt", "echoscu", .timeout),
        ("39-findscu-conn-refused.txt", "findscu", .connectionRefused),
        ("40-findscu-worklist-model-not-supported.txt", "findscu", .noAcceptablePresentationContext),
        ("69-findscu-refused-by-storescp.txt", "findscu", .associationRejected),
        ("69c-movescu-to-storescp-no-move-support.txt", "movescu", .noAcceptablePresentationContext),
        ("70-movescu-conn-refused.txt", "movescu", .connectionRefused),
    ])
    func classifies(_ name: String, _ tool: String, _ code: PXError.Code) throws {
        #expect(try classify(name, tool: tool)?.code == code)
    }

    @Test func rejectionTexts() throws {
        let error = try #require(try classify("07-echoscu-rejected-bad-called-aet.txt", tool: "echoscu"))
        #expect(error.details["result"] == "Rejected Permanent")
        #expect(error.details["source"] == "Service User")
        #expect(error.details["reason"] == "Called AE Title Not Recognized")
    }
}

@Suite(.timeLimit(.minutes(2))) struct FindLogParserTests {
    @Test func extractRun() throws {
        let events = try Fixture("34-findscu-extract-dcm.txt").lines.compactMap(FindLogParser.parse)
        #expect(events.count == 11)
        #expect(events.first == .response(number: 1, status: DIMSEStatus(code: 0xFF00, service: .find)))
        #expect(events[1] == .wroteFile(path: "x/rsp0001.dcm"))
        guard case .final(let status) = events.last else {
            Issue.record("no final")
            return
        }
        #expect(status.isSuccess)
    }

    @Test(arguments: [
        ("41-findscu-missing-qrlevel.txt", UInt16(0xA900)), ("41b-findscu-check-find-invalid-level.txt", 0xC000),
    ])
    func failureFinalStatus(_ name: String, _ code: UInt16) throws {
        let events = try Fixture(name).lines.compactMap(FindLogParser.parse)
        guard case .final(let status) = events.last else {
            Issue.record("no final")
            return
        }
        #expect(status.code == code)
        #expect(status.isFailure)
    }

    @Test func ignoresOtherLines() {
        #expect(FindLogParser.parse(DCMTKLogLine("I: Requesting Association")) == nil)
        #expect(FindLogParser.parse(DCMTKLogLine("W: Received Find Response 1 (Pending)")) == nil)
    }
}

/// findscu's `-d` log (px runs findscu at its debug level to see each C-FIND-RSP's SOP class).
@Suite(.timeLimit(.minutes(2))) struct FindDebugLogParserTests {
    static let studyRoot = "1.2.840.10008.5.1.4.1.2.2.1"

    /// A study-root query answered with Modality Worklist responses (scripts/hostile-find-scp.py --sop-class):
    /// the first response is refused before its file, under the worklist class's UID.
    @Test func foreignClassIsReported() throws {
        var parser = FindDebugLogParser(askedSOPClassUID: Self.studyRoot)
        let events = try Fixture("92-findscu-debug-foreign-sop-class.txt").lines.flatMap { parser.feed($0) }
        #expect(events.first == .foreignSOPClass(answered: "1.2.840.10008.5.1.4.31"), "\(events)")
    }

    /// The same log read for a worklist query: every response is of the request's class.
    @Test func ownClassPasses() throws {
        var parser = FindDebugLogParser(askedSOPClassUID: "1.2.840.10008.5.1.4.31")
        let events = try Fixture("92-findscu-debug-foreign-sop-class.txt").lines.flatMap { parser.feed($0) }
        let pending = DIMSEStatus(code: 0xFF00, service: .find)
        #expect(
            events == [
                .response(number: 1, status: pending), .response(number: 2, status: pending),
                .final(status: DIMSEStatus(code: 0, service: .find)),
            ], "\(events)")
    }

    /// The final status comes from the dump (at -d findscu's "Received Final Find Response" names none).
    @Test func failedFinalStatus() throws {
        var parser = FindDebugLogParser(askedSOPClassUID: Self.studyRoot)
        let events = try Fixture("43-findscu-debug-failed-status.txt").lines.flatMap { parser.feed($0) }
        #expect(events == [.final(status: DIMSEStatus(code: 0xC000, service: .find))], "\(events)")
    }

    /// A class findscu does not know is printed as its UID and compared as such.
    @Test func unknownClassByUID() {
        var parser = FindDebugLogParser(askedSOPClassUID: Self.studyRoot)
        let lines = [
            "I: Received Find Response 1", "D: Message Type                  : C-FIND RSP",
            "D: Affected SOP Class UID        : 1.2.3.4", "D: DIMSE Status                  : 0xff00: Pending",
            "D: ======================= END DIMSE MESSAGE =======================",
        ]
        #expect(lines.flatMap { parser.feed(DCMTKLogLine($0)) } == [.foreignSOPClass(answered: "1.2.3.4")])
    }
}

@Suite(.timeLimit(.minutes(2))) struct LogRedactionTests {
    @Test func passwordIsRedacted() {
        #expect(DCMTKLogLine.redacted("D:   Password: [s3cret]") == "D:   Password: [(redacted)]")
        #expect(DCMTKLogLine.redacted("D:   Username: [alice]") == "D:   Username: [alice]")
    }
}

/// storescp's refusals, from its `-d` log: an association it accepts with no presentation context (findscu's
/// Study Root C-FIND), and one it rejects for its application context (pynetdicom proposing 1.2.3.4.5.6).
@Suite(.timeLimit(.minutes(2))) struct StoreSCPRefusalTests {
    @Test func refusalsAreEvents() throws {
        var parser = StoreSCPLogParser()
        let events = try Fixture("93s-storescp-debug-refusals.txt").lines.flatMap { parser.feed($0) }
        let refused = events.filter { if case .associationRejected = $0 { true } else { false } }
        #expect(
            refused == [
                .associationRejected(
                    peerHost: "localhost", callingAETitle: "FINDSCU", calledAETitle: "PXLISTEN", result: "Accepted",
                    source: "Service User", reason: "No Presentation Context Accepted"),
                .associationRejected(
                    peerHost: "localhost", callingAETitle: "OTHERCTX", calledAETitle: "PXLISTEN",
                    result: "Rejected Permanent", source: "Service User", reason: "App Context Name Not Supported"),
            ], "\(events)")
    }
}

@Suite(.timeLimit(.minutes(2))) struct MoveLogParserTests {
    @Test func debugCounts() throws {
        var parser = MoveLogParser()
        let progress = try Fixture("52-movescu-debug-suboperation-counts.txt").lines.compactMap { parser.feed($0) }
        #expect(progress.count == 2)
        #expect(progress[0].status.code == 0xFF00)
        #expect(progress[0].remaining == 0 && progress[0].completed == 1)
        #expect(progress[1].status.isSuccess && progress[1].remaining == nil && progress[1].completed == 1)
        #expect(parser.sawFinal)
    }

    @Test func verboseFinalStatus() throws {
        var parser = MoveLogParser()
        for line in try Fixture("53-movescu-unknown-destination.txt").lines { _ = parser.feed(line) }
        #expect(parser.finalStatusFromInfo?.code == 0xA801)
    }
}

@Suite(.timeLimit(.minutes(2))) struct StoreSCPLogParserTests {
    @Test func forkDebugLog() throws {
        var parser = StoreSCPLogParser()
        let events = try Fixture("66s-storescp-fork-debug-server-log.txt").lines.flatMap { parser.feed($0) }
        #expect(
            events.first
                == .associationOpened(peerHost: "localhost", callingAETitle: "STORESCU", calledAETitle: "STORESCP2"))
        let files = events.compactMap { if case .fileStored(let p, _) = $0 { return p } else { return nil } }
        #expect(files.count == 3)
        let affected = events.compactMap { if case .fileStored(_, let uid) = $0 { return uid } else { return nil } }
        #expect(affected.count == 3 && affected.allSatisfy { $0.hasPrefix("1.") }, "\(affected)")
        #expect(files[0].hasPrefix("recv2/Mueller_Juergen_"))
        #expect(events.last == .associationClosed(aborted: false))
    }

    @Test func abortedAssociation() {
        var parser = StoreSCPLogParser()
        _ = parser.feed(DCMTKLogLine("D: Association Received: 127.0.0.1"))
        #expect(parser.feed(DCMTKLogLine("I: Association Acknowledged (Max Send PDV: 16372)")).count == 1)
        #expect(parser.feed(DCMTKLogLine("I: Association Aborted")) == [.associationClosed(aborted: true)])
    }

    /// A C-STORE-RQ whose data set storescp could not receive (truncated, the sender gone): no file is logged,
    /// the association ends, and the request's instance is reported as not stored (issue 20).
    @Test func requestWithoutFileIsUnconfirmed() {
        var parser = StoreSCPLogParser()
        _ = parser.feed(DCMTKLogLine("D: Association Received: 127.0.0.1"))
        _ = parser.feed(DCMTKLogLine("I: Association Acknowledged (Max Send PDV: 16372)"))
        let first = ["D: Message Type                  : C-STORE RQ", "D: Affected SOP Instance UID     : 1.2.3"]
        for line in first { #expect(parser.feed(DCMTKLogLine(line)).isEmpty) }
        #expect(parser.feed(DCMTKLogLine("I: storing DICOM file: recv/a.dcm")).count == 1)
        for line in ["D: Message Type                  : C-STORE RQ", "D: Affected SOP Instance UID     : 1.2.4"] {
            #expect(parser.feed(DCMTKLogLine(line)).isEmpty)
        }
        let events = parser.feed(
            DCMTKLogLine("E: DIMSE failure (aborting association): DIMSE Failed to receive message"))
        #expect(events.contains(.storeUnconfirmed(affectedSOPInstanceUID: "1.2.4")), "\(events)")
        #expect(!events.contains(.storeUnconfirmed(affectedSOPInstanceUID: "1.2.3")))
        #expect(events.last == .associationClosed(aborted: true))
    }

    @Test func logLinePrefixes() {
        #expect(DCMTKLogLine("F: boom").level == .fatal)
        #expect(DCMTKLogLine("I: ").text == "")
        #expect(DCMTKLogLine("echoscu: banner").level == nil)
    }
}
