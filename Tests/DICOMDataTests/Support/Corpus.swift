import Foundation
import PXTestSupport

/// The test inputs: a synthetic corpus made by DCMTK's own tools (`scripts/make-corpus.sh`) and the
/// files bundled with PyPI's pydicom (installed into the test venv).
enum Corpus {
    /// The synthetic corpus, generated once per test process into a temporary folder.
    static func synthetic() async throws -> [URL] { try await cache.synthetic() }

    /// pydicom's test_files and charset_files.
    static func pydicom() async throws -> [URL] { try await cache.pydicom() }

    private static let cache = Cache()

    /// Makes each corpus once, however many tests ask at the same time.
    private actor Cache {
        private var syntheticTask: Task<[URL], any Error>?
        private var pydicomTask: Task<[URL], any Error>?

        func synthetic() async throws -> [URL] {
            if syntheticTask == nil { syntheticTask = Task { try await Corpus.makeSynthetic() } }
            return try await syntheticTask!.value
        }

        func pydicom() async throws -> [URL] {
            if pydicomTask == nil { pydicomTask = Task { try await Corpus.findPydicom() } }
            return try await pydicomTask!.value
        }
    }

    private static func makeSynthetic() async throws -> [URL] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("px-corpus-\(getpid())")
        try? FileManager.default.removeItem(at: dir)
        let script = TestSupport.repositoryRoot + "/scripts/make-corpus.sh"
        let result = try await ExternalTool.run("/bin/bash", [script, dir.path])
        guard result.status == 0 else {
            throw CorpusError(message: "make-corpus.sh failed (\(result.status)): \(result.stderr)")
        }
        return try files(in: dir)
    }

    private static func findPydicom() async throws -> [URL] {
        let result = try await ExternalTool.run(
            TestSupport.python, ["-c", "import pydicom, os; print(os.path.dirname(pydicom.__file__))"])
        guard result.status == 0 else {
            throw CorpusError(
                message: "pydicom is not importable from \(TestSupport.python); run scripts/setup-test-env.sh")
        }
        let root = URL(fileURLWithPath: result.text.trimmingCharacters(in: .whitespacesAndNewlines))
        return try files(in: root.appendingPathComponent("data/test_files"))
            + files(in: root.appendingPathComponent("data/charset_files"))
    }

    static func files(in dir: URL) throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "dcm" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    struct CorpusError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
