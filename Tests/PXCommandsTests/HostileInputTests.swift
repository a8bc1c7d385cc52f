import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 36, hostile text from the user's side: config and argument files that never end or never open, host
/// names no backend should see, query keys that have no place in an identifier; and from a place's side, values
/// that would act on a terminal or a spreadsheet. Each is refused (exit 64, `usage`) or escaped, and quickly.
@Suite(.serialized, .timeLimit(.minutes(5))) struct HostileInputTests {
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    /// A run refused as a usage error, in the JSON envelope, with `fragment` in its message.
    static func expectUsage(
        _ run: PeerHarness.Run, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(run.exitCode == 64, "\(run.stdout) \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.json?["error"]?["code"]?.stringValue == "usage", "\(run.stdout)", sourceLocation: sourceLocation)
        let message = run.json?["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains(fragment), "\(message)", sourceLocation: sourceLocation)
    }

    // MARK: Bounded files

    @Test func boundedFileRefusesWhatIsNotASmallRegularFile() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-bounded-") { work in
            let fifo = work + "/fifo"
            #expect(mkfifo(fifo, 0o600) == 0)
            let big = work + "/big.toml"
            try Data(repeating: 0x23, count: 1024 + 1).write(to: URL(fileURLWithPath: big))
            let small = work + "/small.toml"
            try Data("a = 1\n".utf8).write(to: URL(fileURLWithPath: small))
            for (path, reason) in [
                ("/dev/zero", "not a regular file (a character device)"),
                ("/dev/urandom", "not a regular file (a character device)"),
                (fifo, "not a regular file (a FIFO)"), (work, "not a regular file (a directory)"),
                (big, "larger than 1 KiB (1025 bytes)"),
            ] {
                let start = ContinuousClock.now
                let error = #expect(throws: PXError.self) {
                    try BoundedFile.readText(path, limit: 1024, role: "config file")
                }
                #expect(error?.code == .usage)
                #expect(error?.message == "config file \(path): \(reason)")
                #expect(Self.seconds(since: start) < 2, "\(path)")
            }
            #expect(try BoundedFile.readText(small, limit: 1024, role: "config file") == "a = 1\n")
            #expect(try BoundedFile.readText(work + "/absent", limit: 1024, role: "config file") == nil)
            #expect(try PXConfig.readFile(small, limit: 6, role: "x") == "a = 1\n")
        }
    }

    @Test(arguments: ["/dev/zero", "/dev/urandom"])
    func endlessConfigIsAUsageErrorAtOnce(path: String) async throws {
        let start = ContinuousClock.now
        let run = try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": path])
        Self.expectUsage(run, "config file \(path): not a regular file")
        // Before: 2-5 GB of memory in seconds, and no end.
        #expect(Self.seconds(since: start) < 20)
    }

    @Test func fifoDirectoryAndOversizedConfigsAreUsageErrors() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-config-") { work in
            let fifo = work + "/config.toml"
            #expect(mkfifo(fifo, 0o600) == 0)
            // A FIFO with no writer: opening it blocked px forever.
            Self.expectUsage(
                try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": fifo]), "(a FIFO)")
            Self.expectUsage(
                try await PeerHarness.run("px-find", ["pacs"], environment: ["PX_CONFIG": work]), "(a directory)")
            let big = work + "/big.toml"
            try Data(("# " + String(repeating: "x", count: 1 << 20) + "\n").utf8).write(to: URL(fileURLWithPath: big))
            Self.expectUsage(
                try await PeerHarness.run("px-echo", ["pacs"], environment: ["PX_CONFIG": big]), "larger than 1 MiB")
            // --JSONargs FILE is bounded the same way.
            Self.expectUsage(try await PeerHarness.run("px-echo", ["--JSONargs", "/dev/zero"]), "not a regular file")
        }
    }

}
