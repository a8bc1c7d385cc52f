import DICOMData
import Foundation
import PXTestSupport
import Testing

/// ``IndexedFile/open()`` on a real folder: the indexed file opens; a link where the file or a folder was, a
/// FIFO (without blocking), a rewritten file and a removed one are each refused as not the indexed file.
@Suite struct IndexedFileTests {
    /// Writes `text` at `root/relative` and returns what an index would record of it.
    static func indexed(_ root: String, _ relative: String, _ text: String) throws -> IndexedFile {
        let path = root + "/" + relative
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let entry = try #require(FolderWalk.entry(at: path, relativePath: relative))
        return IndexedFile(root: root, relativePath: relative, size: entry.size, modified: entry.modified)
    }

    static func refused(_ file: IndexedFile) -> Bool {
        do {
            try file.open().close()
            return false
        } catch {
            return error.code == .notTheIndexedFile
        }
    }

    @Test func opensOnlyTheFileTheIndexRecorded() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-indexed-") { work in
            let fm = FileManager.default
            let root = work + "/place"
            _ = try Self.indexed(work, "outside/a.dcm", "OUTSIDE")
            let kept = try Self.indexed(root, "a/kept.dcm", "kept")
            let opened = try kept.open()
            #expect(String(decoding: try opened.readAll(), as: UTF8.self) == "kept")
            opened.close()

            let linked = try Self.indexed(root, "a/linked.dcm", "inside")
            try fm.removeItem(atPath: linked.path)
            try fm.createSymbolicLink(atPath: linked.path, withDestinationPath: work + "/outside/a.dcm")
            #expect(Self.refused(linked))

            let underLinkedFolder = try Self.indexed(root, "b/a.dcm", "inside")
            try fm.moveItem(atPath: root + "/b", toPath: work + "/b-away")
            try fm.createSymbolicLink(atPath: root + "/b", withDestinationPath: work + "/outside")
            #expect(Self.refused(underLinkedFolder))

            let fifo = try Self.indexed(root, "a/fifo.dcm", "inside")
            try fm.removeItem(atPath: fifo.path)
            #expect(mkfifo(fifo.path, 0o644) == 0)
            #expect(Self.refused(fifo))

            let rewritten = try Self.indexed(root, "a/rewritten.dcm", "inside")
            try Data("rewritten, longer".utf8).write(to: URL(fileURLWithPath: rewritten.path))
            #expect(Self.refused(rewritten))

            let removed = try Self.indexed(root, "a/removed.dcm", "inside")
            try fm.removeItem(atPath: removed.path)
            #expect(Self.refused(removed))

            var climbing = kept
            climbing.relativePath = "a/../a/kept.dcm"
            #expect(Self.refused(climbing))
        }
    }
}
