import Foundation
import PXTestSupport
import Testing

/// The ports the tests give their peers (Tests/PXTestSupport/Ports.swift, scripts/test-ports.sh): from a block
/// below the kernel's ephemeral range that one process holds by a lock, so neither an outgoing connection nor
/// another test run can take a port between its choice and the peer's bind.
@Suite("Test ports: a locked block below the ephemeral range")
struct TestPortBlockTests {
    @Test("freePort, holdPort and silentListener: ports of this process's block, below the ephemeral range, each once")
    func portsOfTheBlock() throws {
        let ephemeral = TestPortBlock.ephemeralRange
        let block = try TestPortBlock.shared()
        #expect(!block.ports.overlaps(ephemeral), "block \(block.ports), ephemeral \(ephemeral)")
        var seen = Set<Int>()
        for _ in 0..<20 {
            let port = try TestSupport.freePort()
            #expect(!ephemeral.contains(port) && block.ports.contains(port), "\(port)")
            #expect(seen.insert(port).inserted, "\(port) handed out twice")
        }
        let held = try TestSupport.holdPort()
        defer { held.release() }
        let silent = try TestSupport.silentListener()
        defer { close(silent.fd) }
        for port in [held.port, silent.port] {
            #expect(!ephemeral.contains(port) && block.ports.contains(port), "\(port)")
            #expect(seen.insert(port).inserted, "\(port) handed out twice")
        }
        #expect(!TestSupport.connects(to: held.port), "a held port is refused")
        #expect(TestSupport.connects(to: silent.port), "the silent listener accepts")
    }

    @Test("A second holder in the same folder gets the next block; a block given up is taken again")
    func secondHolderInProcess() throws {
        let directory = try TestSupport.makeTemporaryDirectory(prefix: "px-ports-")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var first: TestPortBlock? = try TestPortBlock(directory: directory)
        let second = try TestPortBlock(directory: directory)
        #expect(first?.number == 0)
        #expect(second.number == 1)
        #expect(first.map { !$0.ports.overlaps(second.ports) } == true)
        first = nil
        let third = try TestPortBlock(directory: directory)
        #expect(third.number == 0, "block 0 is free again once its holder is gone")
    }

    @Test("Another process (scripts/test-ports.sh, Python's flock) cannot take this process's block")
    func otherProcesses() async throws {
        let script = TestSupport.repositoryRoot + "/scripts/test-ports.sh"
        let shell = "source \"$1\"; px_take_port_block; px_free_ports 3; echo \"$px_port_lock_file\""

        // In a folder of its own: this process holds block 0, so the script gets block 1's ports.
        let directory = try TestSupport.makeTemporaryDirectory(prefix: "px-ports-")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mine = try TestPortBlock(directory: directory)
        let theirs = try await TestSupport.run(
            "/bin/bash", ["-c", shell, "bash", script], environment: ["PX_TEST_PORTS_DIR": directory],
            separateErrorOutput: true)
        #expect(theirs.status == 0, "\(theirs.output) \(theirs.errorOutput)")
        let lines = theirs.output.split(separator: "\n").map(String.init)
        #expect(lines.last == directory + "/block-1.lock", "\(theirs.output)")
        let ports = lines.first.map { $0.split(separator: " ").compactMap { Int($0) } } ?? []
        #expect(ports.count == 3, "\(theirs.output)")
        for port in ports {
            #expect(!mine.ports.contains(port), "\(port) is in this process's block \(mine.ports)")
            #expect(!TestPortBlock.ephemeralRange.contains(port), "\(port)")
        }
        #expect(ports.min().map { $0 == mine.ports.upperBound } == true, "block 1 follows block 0: \(ports)")

        // The shared block of the test process, in the real folder: another process cannot lock it.
        let shared = try TestPortBlock.shared()
        let python = try await TestSupport.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)",
                shared.lockPath,
            ], separateErrorOutput: true)
        #expect(python.status != 0, "another process locked \(shared.lockPath), the block of this one")
        let other = try await TestSupport.run("/bin/bash", ["-c", shell, "bash", script], separateErrorOutput: true)
        #expect(other.status == 0, "\(other.output) \(other.errorOutput)")
        #expect(!other.output.contains(shared.lockPath), "\(other.output)")
    }
}
