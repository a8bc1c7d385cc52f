import DCMTKBackend
import DICOMData
import PXCore
import Testing

@Suite(.timeLimit(.minutes(2))) struct StoreSCULogParserTests {
    func events(_ name: String) throws -> [StoreSCULogParser.Event] {
        var parser = StoreSCULogParser()
        var out = try Fixture(name).lines.compactMap { parser.feed($0) }
        if let last = parser.finish() { out.append(last) }
        return out
    }

    @Test func successPerFile() throws {
        let events = try events("20-storescu-success-verbose.txt")
        #expect(events.count == 3)
        #expect(events.first == .status(path: "src/p1_s1_i1.dcm", .success))
        #expect(events.allSatisfy { if case .status(_, let s) = $0 { return s.code == 0 } else { return false } })
    }

    /// `-nh`: a refusal and a warning, each tied to its file, with the code from DCMTK's name.
    @Test func failureAndWarningStatuses() throws {
        let events = try events("74-storescu-failure-status-nohalt.txt")
        #expect(events.count == 2)
        guard case .status(let first, let refused) = events.first, case .status(let second, let warning) = events.last
        else {
            Issue.record("expected two statuses: \(events)")
            return
        }
        #expect(first == "src/p1_s1_i1.dcm")
        #expect(refused.hexCode == "0xa700")
        #expect(refused.isFailure)
        #expect(second == "src/p1_s2_i1.dcm")
        #expect(warning.hexCode == "0xb000")
        #expect(warning.category == .warning)
    }

    /// A context the peer rejected, and a SOP class storescu itself ignores, both become "no context".
    @Test func noContextAndIgnoredFiles() throws {
        let events = try events("p1-storescu-no-context-and-unknown-class.txt")
        #expect(events.count == 4)
        #expect(
            events.contains(
                .notSent(
                    path: "corpus/private.dcm", noContext: true,
                    reason:
                        "unknown storage SOP class in file: corpus/private.dcm: 1.2.826.0.1.3680043.10.543.99, ignoring file"
                )))
        #expect(
            events.contains { if case .notSent("corpus/mr1.dcm", true, _) = $0 { return true } else { return false } })
        #expect(events.contains(.status(path: "corpus/ct2.dcm", .success)))
    }

    /// storescu cannot convert a JPEG 2000 file for the accepted context and goes on: the file failed on its
    /// own, with storescu's reason, and the association was not lost.
    @Test func conversionFailureIsTheFilesOwnReason() throws {
        var parser = StoreSCULogParser()
        var events: [(StoreSCULogParser.Event, Bool)] = []
        for line in try Fixture("p2-storescu-conversion-failure-nohalt.txt").lines {
            if let event = parser.feed(line) { events.append((event, parser.associationWentOn)) }
        }
        #expect(events.count == 3)
        guard events.count == 3, case .notSent(let path, false, let reason) = events[1].0 else {
            Issue.record("expected the JPEG 2000 file not sent: \(events)")
            return
        }
        #expect(path == "fx/JPEG2000.dcm")
        #expect(
            reason.contains(
                "unable to convert dataset from 'JPEG 2000 (Lossless or Lossy)' transfer syntax to 'Little Endian Explicit'"
            ))
        #expect(events[1].1, "the association went on after the file")
        #expect(parser.associationLost == nil)
        #expect(events[2].0 == .status(path: "fx/MR_small.dcm", .success))
    }

    /// The peer aborts on the first file; with -nh storescu still "sends" the next one: the parser keeps
    /// what ended the association, and neither file counts as refused on its own.
    @Test func peerAbortIsNotTheNextFilesFault() throws {
        var parser = StoreSCULogParser()
        var wentOn: [Bool] = []
        for line in try Fixture("p3-storescu-peer-abort-nohalt.txt").lines {
            if parser.feed(line) != nil { wentOn.append(parser.associationWentOn) }
        }
        if parser.finish() != nil { wentOn.append(parser.associationWentOn) }
        #expect(wentOn == [false, false])
        #expect(parser.associationLost?.contains("0006:0317 Peer aborted Association") == true)
    }
}

@Suite(.timeLimit(.minutes(2))) struct GetSCULogParserTests {
    @Test func countsAndFinalStatus() throws {
        var parser = GetSCULogParser()
        let progress = try Fixture("60-getscu-study.txt").lines.compactMap { parser.feed($0) }
        #expect(progress.count == 2)
        #expect(progress.last?.completed == 2)
        #expect(parser.finalStatus == .success)
        #expect(parser.responses == 3)
        #expect(parser.completed == 2)
        #expect(parser.remaining == 0)
        #expect(parser.failed == 0)
        #expect(parser.warning == 0)
    }

    /// getscu exits 0 on a failure status: the status comes from the log.
    @Test func failureStatus() throws {
        let fixture = try Fixture("63-getscu-failed-status.txt")
        var parser = GetSCULogParser()
        for line in fixture.lines { _ = parser.feed(line) }
        #expect(fixture.exitCode == 0)
        #expect(parser.finalStatus?.hexCode == "0xc000")
        #expect(parser.finalStatus?.isFailure == true)
    }

    @Test(arguments: [
        ("62-getscu-conn-refused.txt", PXError.Code.connectionRefused),
        ("69d-getscu-to-storescp-no-get-support.txt", .noAcceptablePresentationContext),
    ])
    func failures(_ name: String, _ code: PXError.Code) throws {
        let f = try Fixture(name)
        let error = DCMTKFailureClassifier.classify(
            tool: "getscu", exitCode: f.exitCode, signal: nil, lines: f.lines, connection: testConnection)
        #expect(error?.code == code)
    }
}
