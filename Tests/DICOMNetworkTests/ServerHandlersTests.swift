import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import PXTestSupport
import Testing

/// A small custom SCP written with ``DICOMServer/Handlers`` alone, on port 0, driven by DCMTK's echoscu and
/// storescu sending one of pydicom's test files: what each handler is told, and what the peer gets back.
@Suite(
    "DICOMServer handlers with DCMTK peers", .tags(.integration), .integrationTier, .serialized,
    .requires("echoscu", "storescu", "findscu", "getscu"), .timeLimit(.minutes(5))
)
struct ServerHandlersTests {
    static let sample = TestSupport.pydicomTestFiles + "/CT_small.dcm"

    /// What the handlers were told, in the order they were called.
    enum Event: Sendable, Equatable {
        case accepted(calling: String, called: String, peerHost: String?)
        case rejected(calling: String, called: String, result: AssociateRJ.Result)
        case stored(sopInstanceUID: String, headerSOPInstanceUID: String?, transferSyntaxUID: String?, file: Bool)
        case closed(calling: String, aborted: Bool)
    }

    /// Runs a server whose handlers report to a stream and answer each C-STORE with `status`; `body` gets the
    /// port and the events.
    static func withCustomSCP(
        storeStatus status: DIMSEStatus,
        _ body: (Int, AsyncStream<Event>.Iterator) async throws -> Void
    ) async throws {
        try await TestSupport.withTemporaryDirectory { dir in
            let (events, continuation) = AsyncStream<Event>.makeStream()
            var handlers = DICOMServer.Handlers()
            handlers.onAssociationAccepted = { association in
                continuation.yield(
                    .accepted(
                        calling: association.callingAETitle, called: association.calledAETitle,
                        peerHost: association.peerHost))
            }
            handlers.onAssociationRejected = { rejected in
                continuation.yield(
                    .rejected(
                        calling: rejected.callingAETitle, called: rejected.calledAETitle,
                        result: rejected.rejection.result))
            }
            handlers.onStore = { instance in
                let header = try await instance.readHeader()
                continuation.yield(
                    .stored(
                        sopInstanceUID: instance.sopInstanceUID,
                        headerSOPInstanceUID: header.dataSet.string(.sopInstanceUID),
                        transferSyntaxUID: header.meta.string(.transferSyntaxUID),
                        file: FileManager.default.fileExists(atPath: instance.path)))
                return status
            }
            handlers.onAssociationClosed = { association, aborted in
                continuation.yield(.closed(calling: association.callingAETitle, aborted: aborted))
            }
            let server = try await DICOMServer.bind(
                configuration: .init(host: "127.0.0.1", port: 0, aeTitle: "CUSTOMSCP", temporaryDirectory: dir),
                handlers: handlers, logger: TestSupport.logger("px.test.server"))
            #expect(server.localPort > 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                try await body(server.localPort, events.makeAsyncIterator())
            }
            // Each instance's temporary file is removed once its handler has returned.
            #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
        }
    }

    @Test("storescu's instance reaches onStore with its SOP Instance UID and header; accepted and closed fire")
    func storeSuccess() async throws {
        let uid = try #require(try Part10File(contentsOf: Self.sample).dataSet.string(.sopInstanceUID))
        try await Self.withCustomSCP(storeStatus: .success) { port, events in
            var events = events
            let result = try await TestSupport.run(
                "storescu", ["-v", "-aet", "SENDER", "-aec", "CUSTOMSCP", "127.0.0.1", "\(port)", Self.sample])
            #expect(result.status == 0, "\(result.output)")
            #expect(result.output.contains("Received Store Response (Success)"), "\(result.output)")
            let accepted = await events.next()
            #expect(accepted == .accepted(calling: "SENDER", called: "CUSTOMSCP", peerHost: "127.0.0.1"))
            let stored = await events.next()
            #expect(
                stored
                    == .stored(
                        sopInstanceUID: uid, headerSOPInstanceUID: uid,
                        transferSyntaxUID: WellKnownUID.explicitVRLittleEndian, file: true))
            let closed = await events.next()
            #expect(closed == .closed(calling: "SENDER", aborted: false))
        }
    }

    @Test("a failure status that onStore returns is the C-STORE-RSP storescu receives")
    func storeFailure() async throws {
        try await Self.withCustomSCP(storeStatus: .dataSetDoesNotMatchSOPClass) { port, events in
            var events = events
            let result = try await TestSupport.run(
                "storescu", ["-v", "-aet", "SENDER", "-aec", "CUSTOMSCP", "127.0.0.1", "\(port)", Self.sample])
            #expect(
                result.output.contains("Received Store Response (Error: DataSetDoesNotMatchSOPClass)"),
                "\(result.output)")
            #expect(!result.output.contains("Received Store Response (Success)"), "\(result.output)")
            #expect(await events.next() == .accepted(calling: "SENDER", called: "CUSTOMSCP", peerHost: "127.0.0.1"))
            guard case .stored = await events.next() else {
                Issue.record("onStore was not called")
                return
            }
            #expect(await events.next() == .closed(calling: "SENDER", aborted: false))
        }
    }

    @Test("echoscu: accepted and closed fire around the C-ECHO; a wrong called AE title fires rejected")
    func echoAndReject() async throws {
        try await Self.withCustomSCP(storeStatus: .success) { port, events in
            var events = events
            let echo = try await TestSupport.run(
                "echoscu", ["-aet", "PINGER", "-aec", "CUSTOMSCP", "127.0.0.1", "\(port)"])
            #expect(echo.status == 0, "\(echo.output)")
            #expect(await events.next() == .accepted(calling: "PINGER", called: "CUSTOMSCP", peerHost: "127.0.0.1"))
            #expect(await events.next() == .closed(calling: "PINGER", aborted: false))

            let wrong = try await TestSupport.run(
                "echoscu", ["-aet", "PINGER", "-aec", "ELSEWHERE", "127.0.0.1", "\(port)"])
            #expect(wrong.status != 0)
            #expect(wrong.output.contains("Called AE Title Not Recognized"), "\(wrong.output)")
            #expect(
                await events.next() == .rejected(calling: "PINGER", called: "ELSEWHERE", result: .rejectedPermanent))
        }
    }

    @Test("QueryRetrieveHandlers answer findscu and getscu; without onStore, storescu is refused 0x0122")
    func queryRetrieveHandlers() async throws {
        let header = try Part10File.readHeader(contentsOf: Self.sample)
        let study = try #require(header.dataSet.string(.studyInstanceUID))
        let instance = try #require(header.dataSet.string(.sopInstanceUID))
        try await TestSupport.withTemporaryDirectory { dir in
            var configuration = DICOMServer.Configuration(
                host: "127.0.0.1", port: 0, aeTitle: "CUSTOMQR", temporaryDirectory: dir)
            configuration.queryRetrieve = QueryRetrieveSCPConfiguration(
                provider: QueryRetrieveHandlers(
                    onFind: { request in
                        guard request.level == .study, request.calledAETitle == "CUSTOMQR" else { return [] }
                        var match = DataSet()
                        match.set(.queryRetrieveLevel, vr: .CS, string: "STUDY")
                        match.set(.studyInstanceUID, vr: .UI, string: study)
                        return [match]
                    },
                    onRetrieve: { request in
                        guard request.identifier.string(.studyInstanceUID) == study else { return [] }
                        return [try StorableFile(readingHeaderOf: Self.sample)]
                    }))
            let server = try await DICOMServer.bind(
                configuration: configuration, handlers: DICOMServer.Handlers(),
                logger: TestSupport.logger("px.test.server"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await server.run() }
                defer { group.cancelAll() }
                let found = dir + "/found"
                let got = dir + "/got"
                for folder in [found, got] {
                    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                }
                let find = try await TestSupport.run(
                    "findscu",
                    [
                        "-S", "-X", "-od", found, "-aec", "CUSTOMQR", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "StudyInstanceUID", "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(find.status == 0, "\(find.output)")
                let responses = try TestSupport.dicomFiles(in: found).map { try Part10File(contentsOf: $0).dataSet }
                #expect(responses.map { $0.string(.studyInstanceUID) } == [study])

                let get = try await TestSupport.run(
                    "getscu",
                    [
                        "-S", "-od", got, "-aec", "CUSTOMQR", "-k", "QueryRetrieveLevel=STUDY", "-k",
                        "StudyInstanceUID=\(study)", "127.0.0.1", "\(server.localPort)",
                    ])
                #expect(get.status == 0, "\(get.output)")
                let retrieved = try TestSupport.dicomFiles(in: got).map {
                    try Part10File(contentsOf: $0).dataSet.string(.sopInstanceUID)
                }
                #expect(retrieved == [instance])

                // No onStore: a C-STORE is refused 0x0122 and its temporary file removed.
                let store = try await TestSupport.run(
                    "storescu", ["-v", "-aec", "CUSTOMQR", "127.0.0.1", "\(server.localPort)", Self.sample])
                #expect(
                    store.output.contains("Received Store Response (Refused: SOPClassNotSupported)"), "\(store.output)")
                #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["found", "got"])
            }
        }
    }
}
