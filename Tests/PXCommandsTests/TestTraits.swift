// The Swift Testing traits the test targets share. PXTestSupport is an ordinary library (every whole-package
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
