import DICOMData
import PXCore
import Testing

/// px-push's packed file list and results (issue 34): what goes in reads back the same, and the session's
/// bookkeeping over them is what it was over arrays of structs.
@Suite(.timeLimit(.minutes(1))) struct PushFilesTests {
    static let files: [PushFile] = {
        var plain = PushFile(
            path: "/data/ct/1.dcm", sopClassUID: "1.2.840.10008.5.1.4.1.1.2",
            sopInstanceUID: "1.2.826.0.1.3680043.10.543.1", transferSyntaxUID: "1.2.840.10008.1.2.1")
        plain.warning = nil
        var warned = PushFile(
            path: "/data/ünïcode dir/2.dcm", sopClassUID: "1.2.840.10008.5.1.4.1.1.4",
            sopInstanceUID: "1.2.826.0.1.3680043.10.543.2", transferSyntaxUID: "1.2.840.10008.1.2.4.50")
        warned.warning = "the file meta information disagrees with the data set"
        let refused = PushFile(path: "/data/notes.txt", error: .notDICOM(path: "/data/notes.txt", reason: "no DICM"))
        var indexed = PushFile(
            path: "/place/a/3.dcm", sopClassUID: "1.2.840.10008.5.1.4.1.1.7", sopInstanceUID: "1.2.3",
            transferSyntaxUID: "1.2.840.10008.1.2")
        indexed.indexed = IndexedFile(root: "/place", relativePath: "a/3.dcm", size: 1234, modified: 99)
        let empty = PushFile(path: "")
        return [plain, warned, refused, indexed, empty]
    }()

    @Test("every field of every file reads back, in order")
    func roundTrip() {
        let packed = PushFiles(Self.files)
        #expect(Array(packed) == Self.files)
        #expect(packed.count == 5)
        #expect(packed.indices.map { packed.path(at: $0) } == Self.files.map(\.path))
        #expect(packed.indices.filter { packed.isRefused(at: $0) } == [2])
        var appended = PushFiles()
        for file in Self.files.reversed() { appended.append(file) }
        #expect(Array(appended) == Self.files.reversed())
        #expect(appended != packed)
        #expect(PushRequest(files: Self.files).files == packed)
    }

    @Test("files across many chunks, one longer than a chunk, and many SOP classes read back")
    func chunks() {
        let files = (0..<3000).map { n in
            PushFile(
                path: (n == 1500 ? String(repeating: "d/", count: 40_000) : "/data/study/series/") + "\(n).dcm",
                sopClassUID: "1.2.840.10008.5.1.4.1.1.\(n % 7)", sopInstanceUID: "1.2.826.0.1.3680043.10.543.\(n)",
                transferSyntaxUID: n.isMultiple(of: 2) ? "1.2.840.10008.1.2.1" : "1.2.840.10008.1.2.4.50")
        }
        let packed = PushFiles(files)
        #expect(packed.count == 3000)
        #expect(Array(packed) == files)
        #expect(packed.path(at: 1500).utf8.count == 80_000 + "1500.dcm".utf8.count)
    }

    @Test("results read back as recorded; unanswered ones as not sent")
    func results() {
        var results = PushFileResults(unanswered: PushFiles(Self.files))
        #expect(!results.indices.contains { results.isAnswered($0) })
        let stored = PushFileResult(
            file: Self.files[0], status: DIMSEStatus(code: 0x0000, service: .store), attempts: 1)
        let warned = PushFileResult(
            file: Self.files[1], status: DIMSEStatus(code: 0xB000, service: .store), attempts: 2)
        let failed = PushFileResult(
            file: Self.files[3], status: DIMSEStatus(code: 0xA700, service: .store), attempts: 1)
        results.record(0, stored)
        results.record(1, warned)
        results.record(3, failed)
        #expect(results[0] == stored && results[1] == warned && results[3] == failed)
        #expect(results.indices.filter { results.isAnswered($0) } == [0, 1, 3])
        #expect(results.indices.filter { results.succeeded($0) } == [0, 1])
        #expect(results[4] == PushFileResult(file: Self.files[4], status: nil, error: nil, attempts: 0))
        #expect(
            PushFileResults(Array(results))
                == results.indices.reduce(into: PushFileResults(unanswered: PushFiles(Self.files))) {
                    $0.record($1, results[$1])
                })
        let result = PushResult(results: results)
        #expect(result.completed == 1 && result.warning == 1 && result.failed == 3)
    }

    @Test("the session: planning's refusals first, retries charged, the rest not sent")
    func session() {
        var session = PushSession(PushRequest(files: Self.files))
        #expect(session.planned.map(\.file.path) == ["/data/notes.txt"])
        #expect(session.unanswered == [0, 1, 3, 4])
        session.startAssociation()
        session.sent(0)
        session.sent(1)
        session.finish(0, PushFileResult(file: Self.files[0], status: DIMSEStatus(code: 0x0000, service: .store)))
        #expect(session.anyAnswered)
        let (failed, goOn) = session.associationEnded(by: .aborted("A-ABORT"), inFlight: [1])
        #expect(failed.isEmpty && goOn)
        session.startAssociation()
        session.sent(1)
        let (failedAgain, _) = session.associationEnded(by: .aborted("A-ABORT"), inFlight: [1])
        #expect(failedAgain.map(\.file.path) == [Self.files[1].path])
        #expect(failedAgain.first?.attempts == 2)
        #expect(session.stored == [0])
        let result = session.result(failure: nil)
        #expect(result.files.map(\.attempts) == [1, 2, 0, 0, 0])
        #expect(result.files[3].error?.code == .aborted && result.files[2].error?.code == .notDICOM)
        #expect(result.completed == 1 && result.failed == 4 && result.associations == 2)
    }
}
