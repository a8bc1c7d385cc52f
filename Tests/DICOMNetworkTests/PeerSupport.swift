import DICOMData
import DICOMNetwork
import DICOMProtocol
import Foundation
import PXTestSupport
import Synchronization
import Testing

extension TestSupport {
    /// Runs one of the project's scripts with bash; fails the test with its output when it exits non-zero.
    static func script(_ name: String, _ arguments: [String], environment: [String: String] = [:]) async throws
        -> String
    {
        var environment = environment
        environment["PATH"] = environment["PATH"] ?? peerPath
        let result = try await run("bash", [repositoryRoot + "/scripts/" + name] + arguments, environment: environment)
        guard result.status == 0 else {
            throw ScriptFailed(script: name, status: result.status, output: result.output)
        }
        return result.output
    }

    struct ScriptFailed: Error, CustomStringConvertible {
        var script: String
        var status: Int32
        var output: String
        var description: String { "\(script) exited with \(status): \(output)" }
    }
}

/// Element-by-element comparison of two data sets, for instances that went through another implementation.
enum DataSetComparison {
    /// The differences between the data set body of `expected` and `actual` (group 0002 and group lengths left
    /// out), one line per element: missing, unexpected, another VR, or another value. Values are compared decoded
    /// (text through each data set's own Specific Character Set, sequences item by item, binary as bytes), so a
    /// re-encoding in another transfer syntax or character set compares equal when it means the same; the
    /// (0008,0005) values themselves are compared as written.
    static func differences(_ expected: DataSet, _ actual: DataSet) -> [String] {
        func relevant(_ dataSet: DataSet) -> [DICOMData.Tag: DataElement] {
            var elements: [DICOMData.Tag: DataElement] = [:]
            for element in dataSet where element.tag.group != 0x0002 && !element.tag.isGroupLength {
                elements[element.tag] = element
            }
            return elements
        }
        let left = relevant(expected)
        let right = relevant(actual)
        var lines: [String] = []
        for tag in Set(left.keys).union(right.keys).sorted() {
            let name = "\(tag) \(DataDictionary.entry(for: tag)?.keyword ?? "")"
            switch (left[tag], right[tag]) {
            case (let e?, nil):
                lines.append("\(name): missing (expected \(Self.describe(e, in: expected)))")
            case (nil, let a?):
                lines.append("\(name): unexpected \(Self.describe(a, in: actual))")
            case (let e?, let a?):
                if e.vr != a.vr {
                    lines.append("\(name): VR \(a.vr.rawValue), expected \(e.vr.rawValue)")
                } else if tag == .specificCharacterSet {
                    if Self.trimmed(e.bytes) != Self.trimmed(a.bytes) {
                        lines.append("\(name): \(Self.text(a.bytes)), expected \(Self.text(e.bytes))")
                    }
                } else if e.dicomJSON(characterSet: expected.characterSet)
                    != a.dicomJSON(characterSet: actual.characterSet)
                {
                    lines.append("\(name): \(Self.describe(a, in: actual)), expected \(Self.describe(e, in: expected))")
                }
            case (nil, nil):
                break
            }
        }
        return lines
    }

    /// The differences between the data sets of two Part 10 files (their meta information is not compared).
    static func differences(expectedFile: String, actualFile: String) throws -> [String] {
        try Self.differences(Part10File(contentsOf: expectedFile).dataSet, Part10File(contentsOf: actualFile).dataSet)
    }

    private static func describe(_ element: DataElement, in dataSet: DataSet) -> String {
        let json = element.dicomJSON(characterSet: dataSet.characterSet).serialized()
        return json.count > 160 ? String(json.prefix(160)) + "…" : json
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        Array(bytes.reversed().drop { $0 == 0x20 || $0 == 0 }.reversed())
    }

    private static func text(_ bytes: ArraySlice<UInt8>) -> String {
        "\"" + String(decoding: Self.trimmed(bytes), as: UTF8.self) + "\""
    }
}

/// A ``StorageDelegate`` that files instances as `DIRECTORY/<transfer syntax UID>/<SOP Instance UID>.dcm` (so that
/// the same instance in several transfer syntaxes is kept once per syntax) and remembers every one it received.
final class RecordingStorage: StorageDelegate {
    let directory: String
    private let received = Mutex<[IncomingInstance]>([])

    init(directory: String) {
        self.directory = directory
    }

    /// The instances received so far, in arrival order (with their final paths).
    var instances: [IncomingInstance] { self.received.withLock { $0 } }

    func didReceive(_ instance: IncomingInstance) async throws -> DIMSEStatus {
        let folder = self.directory + "/" + instance.transferSyntaxUID
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let status = try await DirectoryStorage(directory: folder).didReceive(instance)
        var placed = instance
        placed.path = folder + "/" + instance.sopInstanceUID + ".dcm"
        self.received.withLock { $0.append(placed) }
        return status
    }
}
