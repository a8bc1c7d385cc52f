import DICOMData
import PXCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// px-push's planning: directory walking and header-only reading, before any association.
@Suite(.timeLimit(.minutes(2))) struct PushRequestTests {
    static func temporaryDirectory() -> String {
        var template = Array("/tmp/px-push-plan.XXXXXX".utf8CString)
        _ = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    static func write(_ bytes: [UInt8], to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
    }

    static func instance(_ sopInstance: String, syntax: TransferSyntax = .explicitVRLittleEndian) throws -> [UInt8] {
        var ds = DataSet()
        ds.set(.sopClassUID, vr: .UI, string: "1.2.840.10008.5.1.4.1.1.2")
        ds.set(.sopInstanceUID, vr: .UI, string: sopInstance)
        ds.set(.patientID, vr: .LO, string: "P1")
        return try Part10File(dataSet: ds, transferSyntax: syntax).encoded()
    }

    @Test func walksDirectoriesInOrderAndFlagsNonDICOM() throws {
        let root = Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        mkdir(root + "/b", 0o755)
        mkdir(root + "/a", 0o755)
        Self.write(try Self.instance("1.2.3.2"), to: root + "/b/x.dcm")
        Self.write(try Self.instance("1.2.3.1", syntax: .implicitVRLittleEndian), to: root + "/a/y.dcm")
        Self.write(Array("just text, definitely not DICOM\n".utf8), to: root + "/a/notes.txt")
        Self.write([], to: root + "/a/empty")

        let request = try PushRequest(paths: [root, root + "/missing.dcm"])
        #expect(
            request.files.map(\.path) == [
                root + "/a/empty", root + "/a/notes.txt", root + "/a/y.dcm", root + "/b/x.dcm", root + "/missing.dcm",
            ])
        let byName = Dictionary(
            uniqueKeysWithValues: request.files.map { ($0.path.split(separator: "/").last.map(String.init) ?? "", $0) })
        #expect(byName["y.dcm"]?.error == nil)
        #expect(byName["y.dcm"]?.sopInstanceUID == "1.2.3.1")
        #expect(byName["y.dcm"]?.transferSyntaxUID == "1.2.840.10008.1.2")
        #expect(byName["x.dcm"]?.sopClassUID == "1.2.840.10008.5.1.4.1.1.2")
        #expect(byName["notes.txt"]?.error?.code == .notDICOM)
        #expect(byName["empty"]?.error != nil)
        #expect(byName["missing.dcm"]?.error?.code == .io)
        #expect(request.sendable.count == 2)
        #expect(request.contextPairs.count == 2)
    }

    @Test func aPlacesOwnFoldersAreNotSent() throws {
        let root = Self.temporaryDirectory()
        defer { _ = system("rm -rf '\(root)'") }
        mkdir(root + "/.px", 0o755)
        mkdir(root + "/.px-incoming", 0o755)
        Self.write(try Self.instance("1.2.3.1"), to: root + "/a.dcm")
        Self.write(Array("SQLite format 3\u{0}".utf8), to: root + "/.px/index.sqlite")
        Self.write(try Self.instance("1.2.3.2"), to: root + "/.px-incoming/partial")
        let request = try PushRequest(paths: [root])
        #expect(request.files.map(\.path) == [root + "/a.dcm"])
    }

    @Test func noPathsIsAUsageError() {
        #expect(throws: PXError.self) { try PushRequest(paths: []) }
    }

    @Test func resultsAndJSON() throws {
        let ok = PushFile(
            path: "a.dcm", sopClassUID: "1.2", sopInstanceUID: "1.2.3", transferSyntaxUID: "1.2.840.10008.1.2.1")
        let warned = PushFileResult(file: ok, status: DIMSEStatus(code: 0xB000, service: .store))
        let refused = PushFileResult(file: ok, status: DIMSEStatus(code: 0xA700, service: .store))
        let result = PushResult(files: [PushFileResult(file: ok, status: .success), warned, refused, .noContext(ok)])
        #expect(result.completed == 1)
        #expect(result.warning == 1)
        #expect(result.failed == 2)
        #expect(refused.error?.code == .dimseFailure)
        let json = PXOutput.json(result)
        let files = json["files"]?.arrayValue ?? []
        #expect(files.map { $0["status"]?.stringValue } == ["success", "warning", "failed", "failed"])
        #expect(files[2]["dimseStatus"]?["code"]?.stringValue == "0xa700")
        #expect(files[3]["error"]?["code"]?.stringValue == "noAcceptablePresentationContext")
        #expect(files[3]["dimseStatus"] == .null)
    }
}
