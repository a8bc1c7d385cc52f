import Foundation
import Logging
import PX
import PXTestSupport
import Synchronization
import Testing

/// px-sync's engine from Swift through `import PX` alone (issue 21): endpoints made in code, the engine run
/// in this process, its typed events collected; no command line, no process.
@Suite(.timeLimit(.minutes(2))) struct LibrarySyncTests {
    @Test("folder -> zip -> folder through import PX: the same instances; second runs transfer nothing")
    func folderZipFolder() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-library-sync-") { work in
            // Patient P1 (study 1: series of 2 and 1 instances), P2 (study 2: one instance).
            try ServeCommandTests.makePlace(work + "/in")
            let logger = Logger(label: "px.test.library-sync")
            let source = try await Endpoint.folder(at: work + "/in", logger: logger)
            let zips = try Endpoint.zip(at: work + "/zips", create: true)
            let ended = Mutex<[SyncStudyResult.Result]>([])
            let archived = try await SyncEngine(sources: [source], destination: zips, logger: logger) { event in
                if case .studyEnded(let end) = event { ended.withLock { $0.append(end.result) } }
            }.run(.keys(DataSet()))
            #expect(archived.failure == nil)
            #expect(archived.found == 2)
            #expect(archived.transferred == 2)
            #expect(archived.instancesTransferred == 4)
            #expect(ended.withLock { $0 } == [.transferred, .transferred])

            let again = try await SyncEngine(sources: [source], destination: zips, logger: logger).run(
                .keys(DataSet()))
            #expect(again.alreadyPresent == 2)
            #expect(again.instancesTransferred == 0)

            let back = try await Endpoint.folder(at: work + "/back", create: true, logger: logger)
            var keys = DataSet()
            keys.set(.patientID, vr: .LO, string: "P1")
            let extracted = try await SyncEngine(sources: [zips], destination: back, logger: logger).run(.keys(keys))
            #expect(extracted.failure == nil)
            #expect(extracted.found == 1)
            #expect(extracted.instancesTransferred == 3)
            let everything = try await SyncEngine(sources: [zips], destination: back, logger: logger).run(
                .keys(DataSet()))
            #expect(everything.alreadyPresent == 1)
            #expect(everything.instancesTransferred == 1)
            // The same run as an AsyncStream: into a second zip folder, the events in order, the summary last.
            var names: [String] = []
            var last: SyncSummary?
            for try await event in SyncEngine.events(
                sources: [source], destinations: [try Endpoint.zip(at: work + "/zips-2", create: true)],
                options: SyncEngine.Options(parallel: 1), logger: logger, selection: .keys(DataSet()))
            {
                switch event {
                case .planned: names.append("planned")
                case .studyStarted: names.append("studyStarted")
                case .studyEnded(let end): names.append(end.result.rawValue)
                case .finished(let summary): last = summary
                case .lineFailed, .progress: break
                }
            }
            #expect(names == Array(repeating: ["planned", "studyStarted", "transferred"], count: 2).flatMap { $0 })
            #expect(last?.instancesTransferred == 4)

            let original = try Self.instances(under: work + "/in")
            let copied = try Self.instances(under: work + "/back")
            #expect(copied.keys.sorted() == original.keys.sorted())
            for (uid, dataSet) in original {
                let differences = OrthancCommandTests.differences(dataSet, copied[uid] ?? DataSet())
                #expect(differences.isEmpty, "\(uid): \(differences)")
            }
        }
    }

    @Test("folder -> folder (copied through the placer) and zip -> zip (through a temporary folder): equal, then 0")
    func sameKindPairs() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-library-same-") { work in
            try ServeCommandTests.makePlace(work + "/in")
            let logger = Logger(label: "px.test.library-sync")
            let source = try await Endpoint.folder(at: work + "/in", logger: logger)
            let copy = try await Endpoint.folder(at: work + "/copy", create: true, logger: logger)
            let zips = try Endpoint.zip(at: work + "/zips", create: true)
            let zipsCopy = try Endpoint.zip(at: work + "/zips-copy", create: true)
            for (from, to) in [(source, copy), (source, zips), (zips, zipsCopy)] {
                let first = try await SyncEngine(sources: [from], destination: to, logger: logger).run(.keys(DataSet()))
                #expect(first.failure == nil, "\(from.label) -> \(to.label)")
                #expect(first.instancesTransferred == 4, "\(from.label) -> \(to.label)")
                let second = try await SyncEngine(sources: [from], destination: to, logger: logger).run(
                    .keys(DataSet()))
                #expect(second.alreadyPresent == 2 && second.instancesTransferred == 0, "\(from.label) -> \(to.label)")
            }
            let back = try await Endpoint.folder(at: work + "/back", create: true, logger: logger)
            _ = try await SyncEngine(sources: [zipsCopy], destination: back, logger: logger).run(.keys(DataSet()))
            let original = try Self.instances(under: work + "/in")
            for folder in [work + "/copy", work + "/back"] {
                let copied = try Self.instances(under: folder)
                #expect(copied.keys.sorted() == original.keys.sorted(), "\(folder)")
                for (uid, dataSet) in original {
                    let differences = OrthancCommandTests.differences(dataSet, copied[uid] ?? DataSet())
                    #expect(differences.isEmpty, "\(folder) \(uid): \(differences)")
                }
            }
        }
    }

    @Test("folder -> folder, 12 studies on 4 lanes at once: every instance copied, none failed (staging names unique)")
    func parallelLanesIntoOneFolder() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-library-lanes-") { work in
            try FileManager.default.createDirectory(atPath: work + "/in", withIntermediateDirectories: true)
            for study in 1...12 {
                for number in 1...3 {
                    try Data(
                        try ServeCommandTests.instance(patient: "P\(study)", study: study, series: 1, number: number)
                    )
                    .write(to: URL(fileURLWithPath: work + "/in/\(study)-\(number).dcm"))
                }
            }
            let logger = Logger(label: "px.test.library-lanes")
            let source = try await Endpoint.folder(at: work + "/in", logger: logger)
            let copy = try await Endpoint.folder(at: work + "/copy", create: true, logger: logger)
            // Several rounds: two lanes picking one staging name failed a study only now and then.
            for round in 1...3 {
                let target =
                    round == 1
                    ? copy : try await Endpoint.folder(at: work + "/copy-\(round)", create: true, logger: logger)
                let summary = try await SyncEngine(
                    sources: [source], destinations: [target], options: SyncEngine.Options(parallel: 4), logger: logger
                ).run(.keys(DataSet()))
                #expect(summary.failure == nil, "round \(round)")
                #expect(summary.transferred == 12 && summary.failed == 0, "round \(round)")
                #expect(summary.instancesTransferred == 36, "round \(round)")
            }
        }
    }

    @Test(
        "docs/places.rst's example: a node -> zip engine built as the page shows; a node that is not there stops the run"
    )
    func documentedExample() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-library-doc-") { work in
            let port = try TestSupport.freePort()
            let logger = Logger(label: "archiver")
            let pacs = Endpoint.node(
                NodePlace(
                    backend: try PX.backend(.native, for: .get),
                    connection: Connection(
                        node: try DICOMNode(host: "127.0.0.1", port: port, calledAETitle: "PACS"), local: try LocalAE()),
                    logger: logger))
            let zips = try Endpoint.zip(at: work + "/zips", create: true)
            let events = Mutex(0)
            let engine = SyncEngine(sources: [pacs], destination: zips, logger: logger) { _ in
                events.withLock { $0 += 1 }
            }
            var keys = DataSet()
            keys.set(.patientID, vr: .LO, string: "P1")
            await #expect(throws: PXError.self) { try await engine.run(.keys(keys)) }
            #expect(events.withLock { $0 } == 0)
            #expect(pacs.verifier != nil && pacs.mover != nil)
            #expect(zips.verifier == nil && zips.mover == nil)
            #expect(pacs.kind == .node && zips.kind == .zip && zips.label == "zip:" + work + "/zips")
        }
    }

    /// SOP Instance UID -> the data set, of every DICOM file under `root` (px's own folders left out).
    static func instances(under root: String) throws -> [String: DataSet] {
        var out: [String: DataSet] = [:]
        for path in SyncTests.files(under: root) where path.hasSuffix(".dcm") {
            let dataSet = try Part10File(contentsOf: path).dataSet
            out[dataSet.string(.sopInstanceUID) ?? path] = dataSet
        }
        return out
    }
}
