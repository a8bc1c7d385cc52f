import Foundation
import Logging
import Testing

@testable import NativeBackend

/// The storage commitment SCP's record of placed instances lives in an unlinked file (issue 34): every
/// recorded instance is found with its newest class and path, an unknown one is not, and nothing is left in
/// the folder.
struct PlacedInstancesTests {
    @Test func recordsAreFoundFromTheFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("px-placed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let placed = PlacedInstances(folder: folder.path, logger: Logger(label: "test"))
        // More than one write buffer of records, so most lookups read the file back.
        let count = 3000
        for n in 0..<count {
            placed.record(
                sopInstanceUID: "1.2.826.0.1.\(n)", sopClassUID: "1.2.840.10008.5.1.4.1.1.\(n % 7)",
                path: "/data/P\(n % 11)/S/\(n).dcm")
        }
        // A UID placed again: its newest record answers.
        placed.record(sopInstanceUID: "1.2.826.0.1.5", sopClassUID: "1.2.840.10008.5.1.4.1.1.2", path: "/again.dcm")
        for n in stride(from: 0, to: count, by: 7) where n != 5 {
            #expect(
                placed.entry("1.2.826.0.1.\(n)")
                    == PlacedInstances.Entry(
                        sopClassUID: "1.2.840.10008.5.1.4.1.1.\(n % 7)", path: "/data/P\(n % 11)/S/\(n).dcm"))
        }
        #expect(
            placed.entry("1.2.826.0.1.5")
                == PlacedInstances.Entry(sopClassUID: "1.2.840.10008.5.1.4.1.1.2", path: "/again.dcm"))
        #expect(placed.entry("1.2.826.0.1.\(count)") == nil)
        #expect(placed.entry("") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aFolderThatCannotHoldTheFileCommitsNothing() {
        let placed = PlacedInstances(folder: "/nonexistent-px-folder", logger: Logger(label: "test"))
        placed.record(sopInstanceUID: "1.2.3", sopClassUID: "1.2.4", path: "/x.dcm")
        #expect(placed.entry("1.2.3") == nil)
    }
}
