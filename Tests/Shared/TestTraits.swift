// The Swift Testing traits and tags the test targets share. PXTestSupport is an ordinary library (every whole-package
// build compiles it, the static-stdlib release toolchain too, which has no Testing module), so this file
// lives here and each test target that needs it holds a symbolic link to it: one definition, compiled into
// each target.
import PXTestSupport
import Testing

/// A suite trait that checks, once before the suite runs, that the peer programs it needs are installed; a
/// missing one fails the suite with an install hint instead of skipping it.
struct RequiredPeers: SuiteTrait, TestScoping {
    var tools: [String]
    var pythonModules: [String]

    var isRecursive: Bool { false }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSupport.requirePeers(self.tools, pythonModules: self.pythonModules)
        try await function()
    }
}

extension Trait where Self == RequiredPeers {
    /// Fails (never skips) the suite when one of these programs or Python modules is missing.
    static func requires(_ tools: String..., pythonModules: [String] = []) -> Self {
        RequiredPeers(tools: tools, pythonModules: pythonModules)
    }
}

// Qualified: the test targets also import DICOMData, whose `Tag` is a DICOM tag.
extension Testing.Tag {
    /// Needs programs outside Swift: DCMTK, Orthanc, the Python venv (pydicom, pynetdicom), OpenSSL, zip. Goes
    /// with ``Trait/integrationTier`` on every such suite (or test); `make test` runs them all.
    @Testing.Tag static var integration: Self
}

extension Trait where Self == ConditionTrait {
    /// Off in the fast tier (`PX_TEST_TIER=fast`, `make test-fast`), which needs only Swift; on otherwise, so
    /// `make test` skips nothing. (Swift 6.3's `swift test` cannot skip by tag yet; when it can, the
    /// `integration` tag alone does this.)
    static var integrationTier: Self {
        .enabled(
            if: TestSupport.runsIntegrationTests, "needs DCMTK, Orthanc or Python; PX_TEST_TIER=fast leaves it out")
    }
}
