import DICOMData
import Dispatch
import Foundation
import PXTestSupport
import Synchronization
import Testing

@testable import PXStorage

#if canImport(Glibc)
    import Glibc
#endif

/// ``ZipDeflateMode`` through ``ZipPrecompressor`` and ``ZipPlace/archive(study:files:fsync:precompressed:)``:
/// with `spare`, what was not deflated when the study was finished is stored, and the archive holds
/// every instance byte for byte; with `all`, every entry of an uncompressed transfer syntax is deflated. Which
/// files have started is held deterministically: a worker's job waits in the start hook until the
/// precompressor is closed, or there are no workers at all.
@Suite(.timeLimit(.minutes(2))) struct ZipDeflateModeTests {
    /// Five instances of study 1.2.3 placed through a placer observed by `precompressor`: four of Explicit VR
    /// Little Endian with 40 KB of noisy ramp pixel data, the fourth (index 3) named RLE Lossless, a compressed
    /// transfer syntax. Answers the placed paths in order and each instance's bytes by SOP Instance UID.
    static func place(into tree: String, scratch: String, observer precompressor: ZipPrecompressor) throws -> (
        paths: [String], bytes: [String: [UInt8]]
    ) {
        let placer = try InstancePlacer(
            root: tree, layout: StorageLayout(), duplicates: .overwrite, fsync: false,
            observer: PlacementObserving(precompressor))
        var noise: UInt64 = 0x2545_F491
        var paths: [String] = []
        var bytesBySOP: [String: [UInt8]] = [:]
        for index in 0..<5 {
            let sop = "1.2.3.9.\(index)"
            let temporary = scratch + "/incoming-\(index)"
            let (ds, bytes) = try ZipPlaceTests.noisyInstance(
                series: "1.2.3.1", sop: sop, samples: 20_000, ramp: 500, noiseMask: 0x0F, noise: &noise,
                at: temporary, namedRLE: index == 3)
            paths.append(try placer.place(temporaryFile: temporary, dataSet: ds).path)
            bytesBySOP[sop] = bytes
        }
        return (paths, bytesBySOP)
    }

    /// Every instance entry of `archive`: its method by SOP Instance UID, each read back (CRC-32 checked) equal
    /// to its source bytes.
    static func methods(of archive: String, source: [String: [UInt8]]) throws -> [String: ZipMethod] {
        let reader = try ZipReader(path: archive)
        var methods: [String: ZipMethod] = [:]
        for entry in reader.entries where entry.name.hasSuffix(".dcm") {
            let sop = String(entry.name.split(separator: "/")[1].dropLast(4))
            methods[sop] = entry.method
            #expect(try reader.contents(of: entry, maximumSize: 1 << 20) == source[sop], "\(entry.name)")
        }
        #expect(methods.count == source.count)
        return methods
    }

    /// One worker: the first file deflates, the second is held in its start hook (being deflated) until
    /// the precompressor is closed, three are still queued. `spare` answers at once: the first deflated, the
    /// four others stored, the second given up without being waited for.
    @Test func spareStoresWhatWasNotDeflatedAndTheWorkersRunAtTheLowestPriority() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipdeflate-") { dir in
            let tree = dir + "/tree"
            try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
            let secondStarted = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let seen = Mutex<(paths: [String], nice: [Int32])>(([], []))
            let hooks = ZipPrecompressor.Hooks(
                started: { path in
                    let nice = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)  // this thread's, on Linux
                    let count = seen.withLock { seen in
                        seen.paths.append(path)
                        seen.nice.append(nice)
                        return seen.paths.count
                    }
                    guard count == 2 else { return }
                    secondStarted.signal()
                    gate.wait()  // held until nothing queued can start
                },
                closed: { gate.signal() })
            let before = getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
            let precompressor = try ZipPrecompressor(spool: tree + "/.spool", workers: 1, hooks: hooks)
            defer { precompressor.waitUntilIdle() }
            let (paths, source) = try Self.place(into: tree, scratch: dir, observer: precompressor)
            secondStarted.wait()  // one worker: the first file is deflated
            let finished = precompressor.finished(.spare)

            let (started, nice) = seen.withLock { ($0.paths, $0.nice) }
            #expect(started == Array(paths.prefix(2)))
            #expect(nice == [19, 19], "the worker thread's nice value")
            #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == before, "this thread's is unchanged")
            #expect(Set(finished.spooled.keys) == [paths[0]])
            #expect(finished.notDeflated == Set(paths.dropFirst()))

            let archived = try ZipPlace(root: dir + "/zips").archive(
                study: "1.2.3", files: paths, fsync: false, precompressed: finished)
            #expect(archived.added == 5)
            let methods = try Self.methods(of: archived.path, source: source)
            #expect(methods["1.2.3.9.0"] == .deflate)
            for index in 1..<5 { #expect(methods["1.2.3.9.\(index)"] == .stored, "instance \(index)") }
        }
    }

    /// `spare` deflates during a retrieval only on the cores the transfer leaves: two are its own (px
    /// receiving, the peer sending), so a two-core machine gets no worker and stores what it retrieves.
    @Test func spareLeavesTwoCoresToTheTransfer() {
        #expect(ZipPlace.spareWorkers(cores: 1) == 0)
        #expect(ZipPlace.spareWorkers(cores: 2) == 0)
        #expect(ZipPlace.spareWorkers(cores: 3) == 1)
        #expect(ZipPlace.spareWorkers(cores: 16) == 14)
        #expect(ZipPlace.spareWorkers == ZipPlace.spareWorkers(cores: ZipPlace.workers))
    }

    @Test func spareWithNoWorkerStoresEveryInstance() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipdeflate-") { dir in
            let tree = dir + "/tree"
            try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
            let precompressor = try ZipPrecompressor(spool: tree + "/.spool", workers: 0)
            let (paths, source) = try Self.place(into: tree, scratch: dir, observer: precompressor)
            let finished = precompressor.finished(.spare)
            #expect(finished.spooled.isEmpty)
            #expect(finished.notDeflated == Set(paths))
            let archived = try ZipPlace(root: dir + "/zips").archive(
                study: "1.2.3", files: paths, fsync: false, precompressed: finished)
            #expect(try Self.methods(of: archived.path, source: source).values.allSatisfy { $0 == .stored })
            // The archive is a place's like any other: listed, and extracted again byte for byte.
            let study = try #require(try ZipPlace(root: dir + "/zips").study("1.2.3"))
            #expect(study.instanceCount == 5)
        }
    }

    @Test func allDeflatesEveryUncompressedInstance() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-zipdeflate-") { dir in
            let tree = dir + "/tree"
            try FileManager.default.createDirectory(atPath: tree, withIntermediateDirectories: true)
            // No worker: nothing has started when the study is finished, and `all` deflates it all then.
            let precompressor = try ZipPrecompressor(spool: tree + "/.spool", workers: 0)
            let (paths, source) = try Self.place(into: tree, scratch: dir, observer: precompressor)
            let finished = precompressor.finished(.all)
            #expect(finished.notDeflated.isEmpty)
            #expect(Set(finished.spooled.keys) == Set(paths.enumerated().filter { $0.offset != 3 }.map(\.element)))
            let archived = try ZipPlace(root: dir + "/zips").archive(
                study: "1.2.3", files: paths, fsync: false, precompressed: finished)
            let methods = try Self.methods(of: archived.path, source: source)
            for index in 0..<5 {
                #expect(methods["1.2.3.9.\(index)"] == (index == 3 ? .stored : .deflate), "instance \(index)")
            }
        }
    }
}
