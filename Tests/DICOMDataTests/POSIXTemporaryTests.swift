import DICOMData
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// POSIX.makeTemporaryFile / makeTemporaryDirectory: the one template helper the DCMTK backend's
/// temporary directory and dictionary file and DICOMweb's WADO part sink use.
@Suite(.timeLimit(.minutes(1))) struct POSIXTemporaryTests {
    @Test("a temporary file is new, private (0600), named prefix + 6 characters + suffix")
    func file() throws {
        let parent = try POSIX.makeTemporaryDirectory(prefix: NSTemporaryDirectory() + "/px-posix-test.")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let first = try POSIX.makeTemporaryFile(prefix: parent + "/d-", suffix: ".dic")
        let second = try POSIX.makeTemporaryFile(prefix: parent + "/d-", suffix: ".dic")
        close(first.descriptor)
        close(second.descriptor)
        #expect(first.path != second.path)
        let name = (first.path as NSString).lastPathComponent
        #expect(name.hasPrefix("d-") && name.hasSuffix(".dic") && name.count == "d-".count + 6 + ".dic".count)
        #expect(!name.contains("XXXXXX"))  // the template was filled in (a random X may stay)
        var info = stat()
        #expect(stat(first.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    @Test("a temporary directory is a new directory (0700)")
    func directory() throws {
        let path = try POSIX.makeTemporaryDirectory(prefix: NSTemporaryDirectory() + "/px-posix-test.")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFDIR)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(path.hasPrefix(NSTemporaryDirectory() + "/px-posix-test.") && !path.hasSuffix("XXXXXX"))
    }

    @Test("a parent that does not exist is an errno failure (ENOENT), not a crash")
    func missingParent() {
        let file = #expect(throws: POSIX.Failure.self) {
            try POSIX.makeTemporaryFile(prefix: "/nonexistent-px-parent/x-")
        }
        #expect(file?.code == ENOENT)
        let directory = #expect(throws: POSIX.Failure.self) {
            try POSIX.makeTemporaryDirectory(prefix: "/nonexistent-px-parent/x-")
        }
        #expect(directory?.code == ENOENT)
    }
}
