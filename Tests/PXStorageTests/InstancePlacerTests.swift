import DICOMData
import Foundation
import PXStorage
import Synchronization
import Testing

/// ``InstancePlacer``, ``StorageRoot`` and ``SeriesBook`` on a real file system: duplicates, planted
/// symbolic links at every level, identity before `keep`, colliding UIDs, and nothing ever written
/// outside the root.
@Suite(.timeLimit(.minutes(2))) struct InstancePlacerTests {
    /// ImageComments (0020,4000): which copy a file is.
    static let marker = DICOMData.Tag(0x0020, 0x4000)

    func dataSet(sop: String = "1.2.3.4", patient: String = "P1") -> DataSet {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.7")
        ds.set(.patientID, vr: .LO, string: patient)
        ds.set(.patientName, vr: .PN, string: "Doe^Jane")
        ds.set(.studyInstanceUID, vr: .UI, string: "1.2.3")
        ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.3.1")
        ds.set(.sopInstanceUID, vr: .UI, string: sop)
        ds.set(.instanceNumber, vr: .IS, string: "12")
        return ds
    }

    func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "px-placer-" + UUID().uuidString
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A Part 10 file of `ds` marked `text`, as a receiver's temporary file.
    func temporaryFile(in directory: String, _ text: String, _ ds: DataSet? = nil) throws -> String {
        var ds = ds ?? dataSet()
        ds.set(Self.marker, vr: .LT, string: text)
        let path = directory + "/tmp-" + UUID().uuidString + ".part"
        try Part10File(dataSet: ds, transferSyntax: .explicitVRLittleEndian).write(to: path)
        return path
    }

    /// The marker of the file at `path`.
    func contents(_ path: String) -> String {
        (try? Part10File(contentsOf: path))?.dataSet.string(Self.marker) ?? ""
    }

    /// Every file and link under `path`, recursively (links are not followed).
    func entries(_ path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    func placer(_ root: String, _ policy: DuplicatePolicy = .keep, layout: StorageLayout = StorageLayout())
        throws(StorageError) -> InstancePlacer
    {
        try InstancePlacer(root: root, layout: layout, duplicates: policy, fsync: false)
    }

    @Test func templatesUseKeywordsAndPadInstanceNumber() throws {
        let layout = try StorageLayout(
            template: "{PatientID}/{StudyInstanceUID}/img-{InstanceNumber}-{SOPInstanceUID}.dcm")
        #expect(layout.components(for: dataSet(patient: "../x")) == ["_._x", "1.2.3", "img-00012-1.2.3.4.dcm"])
    }

    @Test(arguments: [
        "", "{NoSuchKeyword}/a.dcm", "{PatientID", "../{PatientID}.dcm", "a//b.dcm", ".hidden/{SOPInstanceUID}",
        "a\\b/{SOPInstanceUID}", "/{PatientID}/{SOPInstanceUID}.dcm",
    ])
    func badTemplatesAreUsageErrors(_ template: String) {
        #expect(throws: StorageError.self) { try StorageLayout(template: template) }
    }

    @Test func keepOverwriteAndRenameDuplicates() throws {
        for policy in DuplicatePolicy.allCases {
            let root = temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: root) }
            let placer = try InstancePlacer(
                root: root, layout: StorageLayout(), duplicates: policy, fsync: policy == .rename)
            let first = try placer.place(temporaryFile: temporaryFile(in: root, "first"), dataSet: dataSet())
            #expect(first.duplicate == nil)
            #expect(first.directories.count == 3)
            #expect(first.folders == first.directories.map { ($0 as NSString).lastPathComponent })
            let second = try placer.place(temporaryFile: temporaryFile(in: root, "second"), dataSet: dataSet())
            #expect(second.duplicate == policy)
            switch policy {
            case .keep:
                #expect(second.path == first.path && contents(first.path) == "first")
            case .overwrite:
                #expect(second.path == first.path && contents(first.path) == "second")
            case .rename:
                #expect(second.path == String(first.path.dropLast(4)) + "-1.dcm")
                #expect(contents(first.path) == "first" && contents(second.path) == "second")
            }
            // No temporary file is left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: root).filter { $0.hasSuffix(".part") }.isEmpty)
        }
    }

    @Test func aFileWhereAFolderGoesIsAnErrorAndTheTemporaryFileIsRemoved() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let incoming = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: incoming) }
        let placer = try placer(root)
        FileManager.default.createFile(atPath: root + "/P1-Doe_Jane", contents: Data())
        let temporary = try temporaryFile(in: incoming, "x")
        #expect(throws: StorageError.self) { try placer.place(temporaryFile: temporary, dataSet: dataSet()) }
        #expect(!FileManager.default.fileExists(atPath: temporary))
    }

    /// Issue 14 item 5: a link where the patient, study or series folder goes (`ROOT/EVIL-Evil ->
    /// /outside`) is refused, whatever it points to; nothing is written outside the root, not even the
    /// info files.
    @Test(arguments: [1, 2, 3]) func aSymbolicLinkWhereAFolderGoesIsRefused(level: Int) async throws {
        let work = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let ds = dataSet(patient: "EVIL")
        let folders = StorageLayout().components(for: ds).dropLast()
        let parent = ([root] + folders.prefix(level - 1)).joined(separator: "/")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: parent + "/" + folders[level - 1], withDestinationPath: outside)
        for policy in DuplicatePolicy.allCases {
            let placer = try placer(root, policy)
            let temporary = try temporaryFile(in: work, "x", ds)
            do throws(StorageError) {
                _ = try placer.place(temporaryFile: temporary, dataSet: ds)
                Issue.record("placed through a link at level \(level) (\(policy))")
            } catch {
                #expect(error.code == .unsafePath, "\(error)")
                #expect(error.path == parent + "/" + folders[level - 1])
            }
            #expect(!FileManager.default.fileExists(atPath: temporary))
        }
        #expect(entries(outside).isEmpty)
    }

    /// Issue 14 item 6a: a dangling link at the final name is not a kept duplicate, and a link to a file
    /// outside is neither read as one nor replaced through.
    @Test(arguments: ["dangling", "outside file", "fifo", "folder"]) func aLinkOrSpecialFileAtTheFinalNameIsRefused(
        kind: String
    ) throws {
        let work = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let ds = dataSet()
        // The real instance lives outside: a link to it must not count as "already stored".
        let outsideFile = try temporaryFile(in: outside, "outside", ds)
        let placed = try placer(root).place(temporaryFile: temporaryFile(in: work, "first"), dataSet: ds)
        try FileManager.default.removeItem(atPath: placed.path)
        switch kind {
        case "dangling":
            try FileManager.default.createSymbolicLink(
                atPath: placed.path, withDestinationPath: outside + "/missing.dcm")
        case "outside file":
            try FileManager.default.createSymbolicLink(atPath: placed.path, withDestinationPath: outsideFile)
        case "fifo": #expect(mkfifo(placed.path, 0o644) == 0)
        default: try FileManager.default.createDirectory(atPath: placed.path, withIntermediateDirectories: false)
        }
        for policy in [DuplicatePolicy.keep, .overwrite] {
            let temporary = try temporaryFile(in: work, "second", ds)
            do throws(StorageError) {
                let again = try placer(root, policy).place(temporaryFile: temporary, dataSet: ds)
                Issue.record("\(policy) answered \(again) for a \(kind) at the final name")
            } catch {
                #expect(error.code == .unsafePath, "\(error)")
            }
            #expect(!FileManager.default.fileExists(atPath: temporary))
        }
        // rename stores a new copy next to it.
        let renamed = try placer(root, .rename).place(temporaryFile: temporaryFile(in: work, "third", ds), dataSet: ds)
        #expect(renamed.path == String(placed.path.dropLast(4)) + "-1.dcm" && contents(renamed.path) == "third")
        // Outside: untouched.
        #expect(entries(outside) == [(outsideFile as NSString).lastPathComponent])
        #expect(contents(outsideFile) == "outside")
    }

    /// Issue 14 item 6b: a different instance under the same name (a template without the SOP Instance
    /// UID) is stored under the next name, not dropped; the same instance again is the duplicate.
    @Test(arguments: [DuplicatePolicy.keep, .overwrite]) func aDifferentInstanceUnderTheSameNameIsNotDropped(
        policy: DuplicatePolicy
    ) throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let placer = try placer(root, policy, layout: try StorageLayout(template: "{PatientID}/{StudyInstanceUID}.dcm"))
        let (a, b) = (dataSet(sop: "1.2.3.4.1"), dataSet(sop: "1.2.3.4.2"))
        let first = try placer.place(temporaryFile: temporaryFile(in: root, "a", a), dataSet: a)
        let second = try placer.place(temporaryFile: temporaryFile(in: root, "b", b), dataSet: b)
        #expect(first.path == root + "/P1/1.2.3.dcm" && first.duplicate == nil)
        #expect(second.path == root + "/P1/1.2.3-1.dcm" && second.duplicate == nil)
        let againB = try placer.place(temporaryFile: temporaryFile(in: root, "b again", b), dataSet: b)
        let againA = try placer.place(temporaryFile: temporaryFile(in: root, "a again", a), dataSet: a)
        #expect(againB.path == second.path && againB.duplicate == policy)
        #expect(againA.path == first.path && againA.duplicate == policy)
        #expect(contents(first.path) == (policy == .keep ? "a" : "a again"))
        #expect(contents(second.path) == (policy == .keep ? "b" : "b again"))
        #expect(entries(root + "/P1") == ["1.2.3-1.dcm", "1.2.3.dcm"])
    }

    /// A file at the final name that is not DICOM is another instance: kept, and the new one stored next to it.
    @Test func anUnreadableFileAtTheFinalNameIsKept() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let ds = dataSet()
        let first = try placer(root).place(temporaryFile: temporaryFile(in: root, "first"), dataSet: ds)
        try Data("not DICOM".utf8).write(to: URL(fileURLWithPath: first.path))
        let second = try placer(root).place(temporaryFile: temporaryFile(in: root, "second"), dataSet: ds)
        #expect(second.path == String(first.path.dropLast(4)) + "-1.dcm" && second.duplicate == nil)
        #expect(contents(second.path) == "second")
    }

    /// Issue 14 item 6b and 6c through the placer: the UID pairs that shared a file name get two files.
    @Test func collidingUIDPairsGetTwoFiles() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let long = "1.2.826.0.1.3680043.8.498.1234567890123456789012345678901234567890."
        for (x, y) in [("1.2.3.4+5", "1.2.3.4/5"), (long + "122789", long + "339192")] {
            let placer = try placer(root)
            let first = try placer.place(
                temporaryFile: temporaryFile(in: root, x, dataSet(sop: x)), dataSet: dataSet(sop: x))
            let second = try placer.place(
                temporaryFile: temporaryFile(in: root, y, dataSet(sop: y)), dataSet: dataSet(sop: y))
            #expect(first.duplicate == nil && second.duplicate == nil)
            #expect(first.path != second.path)
            #expect(contents(first.path) == x && contents(second.path) == y)
            #expect(first.path.split(separator: "/").allSatisfy { $0.utf8.count <= 255 })
        }
    }

    /// A folder removed behind the placer's back (a clean-up job) is made again.
    @Test func aRemovedFolderIsMadeAgain() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let placer = try placer(root)
        let first = try placer.place(
            temporaryFile: temporaryFile(in: root, "a", dataSet(sop: "1.2.3.4.1")), dataSet: dataSet(sop: "1.2.3.4.1"))
        try FileManager.default.removeItem(atPath: first.directories[0])
        let second = try placer.place(
            temporaryFile: temporaryFile(in: root, "b", dataSet(sop: "1.2.3.4.2")), dataSet: dataSet(sop: "1.2.3.4.2"))
        #expect(contents(second.path) == "b")
        #expect(second.directories == first.directories)
    }

    /// A cached folder replaced by a link later: the placer still writes into the folder it opened (now
    /// renamed, inside the root), never through the link.
    @Test func aCachedFolderReplacedByALinkIsNotFollowed() throws {
        let work = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let placer = try placer(root)
        let first = try placer.place(
            temporaryFile: temporaryFile(in: work, "a", dataSet(sop: "1.2.3.4.1")), dataSet: dataSet(sop: "1.2.3.4.1"))
        try FileManager.default.moveItem(atPath: first.directories[0], toPath: first.directories[0] + ".old")
        try FileManager.default.createSymbolicLink(atPath: first.directories[0], withDestinationPath: outside)
        _ = try? placer.place(
            temporaryFile: temporaryFile(in: work, "b", dataSet(sop: "1.2.3.4.2")), dataSet: dataSet(sop: "1.2.3.4.2"))
        // A fresh placer (no cache) refuses the link.
        #expect(throws: StorageError.self) {
            try self.placer(root).place(
                temporaryFile: self.temporaryFile(in: work, "c", self.dataSet(sop: "1.2.3.4.3")),
                dataSet: self.dataSet(sop: "1.2.3.4.3"))
        }
        #expect(entries(outside).isEmpty)
    }

    /// The folder cache is bounded: placing into many series keeps at most ``StorageRoot/cacheCapacity``
    /// descriptors open.
    @Test func openFolderDescriptorsAreBounded() throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        func openDescriptors() -> Int {
            (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        }
        let placer = try placer(root)
        let before = openDescriptors()
        for series in 0..<200 {
            var ds = dataSet(sop: "1.2.3.4.\(series)")
            ds.set(.seriesInstanceUID, vr: .UI, string: "1.2.3.1.\(series)")
            _ = try placer.place(temporaryFile: temporaryFile(in: root, "\(series)", ds), dataSet: ds)
        }
        // Other suites run in parallel in this process: allow for their descriptors.
        #expect(
            openDescriptors() - before <= StorageRoot.cacheCapacity + 32, "\(openDescriptors()) open, \(before) before")
        #expect(entries(root).filter { $0.hasSuffix(".dcm") }.count == 200)
    }

    @Test func theStagingFolderMustBeARealFolder() throws {
        let work = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let storage = try StorageRoot(path: work + "/root")
        #expect(try storage.stagingFolder() == work + "/root/.px-incoming")
        try FileManager.default.createDirectory(atPath: work + "/outside", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            atPath: work + "/root/.px-other", withDestinationPath: work + "/outside")
        #expect(throws: StorageError.self) { try storage.stagingFolder(".px-other") }
    }

    /// Collects a book's completions.
    final class Completions: Sendable {
        private let list = Mutex<[SeriesCompletion]>([])
        func append(_ completion: SeriesCompletion) { list.withLock { $0.append(completion) } }
        var all: [SeriesCompletion] { list.withLock { $0 } }
    }

    @Test func seriesBookWritesPypxInfoFilesAndCompletesOnce() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let placer = try placer(root)
        let completions = Completions()
        let book = SeriesBook(storage: placer.storage, seriesTimeout: nil) { completions.append($0) }
        for (i, association) in [(1, UInt64(1)), (2, 2), (3, 1)] {
            let ds = dataSet(sop: "1.2.3.4.\(i)")
            let placement = try placer.place(temporaryFile: temporaryFile(in: root, "\(i)", ds), dataSet: ds)
            await book.added(placement, facts: SeriesFacts(ds), association: association)
        }
        let series = root + "/P1-Doe_Jane/unknown-unknown-1.2.3/unknown-unknown-1.2.3.1"
        #expect(
            text(series + "/receiving.series").hasPrefix(
                "[SERIES]\nseriesdescription = \nseriesdate = \nseriesinstanceuid = 1.2.3.1\nlocation = \(series)\n"))
        #expect(
            text(root + "/P1-Doe_Jane/patient.info")
                == "[PATIENT]\npatientid = P1\npatientname = Doe^Jane\nlocation = \(root)/P1-Doe_Jane\n")
        #expect(text(root + "/P1-Doe_Jane/unknown-unknown-1.2.3/study.info").contains("studyinstanceuid = 1.2.3\n"))
        await book.associationEnded(1)
        #expect(FileManager.default.fileExists(atPath: series + "/receiving.series"))  // association 2 still open
        await book.associationEnded(2)
        #expect(completions.all.count == 1)
        #expect(completions.all.first?.instances == 3 && completions.all.first?.reason == "association")
        #expect(text(series + "/series.info").hasSuffix("instances = 3\n"))
        #expect(!FileManager.default.fileExists(atPath: series + "/receiving.series"))
    }

    func text(_ path: String) -> String {
        String(decoding: FileManager.default.contents(atPath: path) ?? Data(), as: UTF8.self)
    }

    /// Links planted at the info files' names (and their temporary names) are replaced or refused,
    /// never written through.
    @Test func infoFilesAreNeverWrittenThroughALink() async throws {
        let work = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: work) }
        let (root, outside) = (work + "/root", work + "/outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let target = outside + "/victim"
        FileManager.default.createFile(atPath: target, contents: Data("victim".utf8))
        let ds = dataSet()
        let series = root + "/" + StorageLayout().components(for: ds).dropLast().joined(separator: "/")
        try FileManager.default.createDirectory(atPath: series, withIntermediateDirectories: true)
        let patient = root + "/P1-Doe_Jane"
        let study = (series as NSString).deletingLastPathComponent
        for link in [
            patient + "/patient.info.px-tmp", study + "/study.info.px-tmp", series + "/receiving.series",
            series + "/series.info.px-tmp",
        ] {
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        }
        let placer = try placer(root)
        let book = SeriesBook(storage: placer.storage, seriesTimeout: nil) { _ in }
        let placement = try placer.place(temporaryFile: temporaryFile(in: work, "x", ds), dataSet: ds)
        await book.added(placement, facts: SeriesFacts(ds), association: 1)
        await book.associationEnded(1)
        #expect(text(target) == "victim")
        #expect(entries(outside) == ["victim"])
    }

    /// A book with a 10 s series timeout on a ``ManualClock``, one series open in a fresh root.
    func bookWithOneSeries(_ root: String) async throws -> (SeriesBook<ManualClock>, ManualClock, Completions) {
        let placer = try placer(root)
        let clock = ManualClock()
        let completions = Completions()
        let book = SeriesBook(storage: placer.storage, seriesTimeout: .seconds(10), clock: clock) {
            completions.append($0)
        }
        let ds = dataSet()
        await book.added(
            try placer.place(temporaryFile: temporaryFile(in: root, "x"), dataSet: ds), facts: SeriesFacts(ds),
            association: 7)
        return (book, clock, completions)
    }

    /// The series timeout on an injected clock: no sleeping in the test.
    @Test func seriesTimeoutCompletesAnIdleSeries() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (book, clock, completions) = try await bookWithOneSeries(root)
        clock.advance(by: .milliseconds(9_999))
        await book.sweep()
        #expect(await book.openSeries == 1)
        clock.advance(by: .milliseconds(1))
        await book.sweep()
        #expect(await book.openSeries == 0)
        #expect(completions.all.map(\.reason) == ["timeout"])
    }

    /// ``SeriesBook/runTimer()`` sweeps on the clock's schedule (every second for a 10 s timeout).
    @Test func theTimerSweepsOnTheInjectedClock() async throws {
        let root = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (book, clock, completions) = try await bookWithOneSeries(root)
        let timer = Task { await book.runTimer() }
        defer { timer.cancel() }
        for second in 1...10 {
            try await clock.waitForSleepers(1)
            #expect(await book.openSeries == 1, "complete after \(second - 1) s")
            clock.advance(by: .seconds(1))
        }
        try await clock.waitForSleepers(1)  // the sweep after the 10th second has run
        #expect(await book.openSeries == 0)
        #expect(completions.all.map(\.reason) == ["timeout"])
    }
}

/// A clock that moves only when told (``advance(by:)``); sleepers wake when it passes their deadline.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let due = state.withLock { state -> Bool in
                    if deadline <= state.now || Task.isCancelled { return true }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return false
                }
                if due { continuation.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        try Task.checkCancellation()
    }

    /// Moves the clock and wakes the sleepers now due.
    func advance(by duration: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Waits (polling, up to 10 s of real time) until `count` tasks sleep on this clock.
    func waitForSleepers(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ $0.sleepers.count }) < count {
            guard ContinuousClock.now < deadline else {
                Issue.record("no task went to sleep on the manual clock")
                return
            }
            try await Task.sleep(for: .milliseconds(1))
        }
    }
}
