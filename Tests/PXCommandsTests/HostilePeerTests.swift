import DICOMData
import Foundation
import PXTestSupport
import Testing

/// px-listen (native) and px-dump against hostile peers and files (issue 14 items 1-4), with the scripted
/// raw-socket peers of scripts/hostile-peer.py on loopback: memory stays within a stated budget (peak RSS
/// from /proc/PID/status VmHWM), slots are freed within the documented time, legitimate peers still get in.
@Suite(.tags(.integration), .integrationTier, .serialized, .timeLimit(.minutes(10))) struct HostilePeerTests {
    static let tools = ["echoscu"]
    /// px-listen's peak resident memory allowed in these tests: a debug build idles at ~30 MB; before the
    /// budgets one 1 GiB deflate bomb took ~2 GB and a 128 MiB element before Pixel Data ~280 MB.
    static let listenerBudgetKiB = 120 * 1024

    static func script() -> String { TestSupport.repositoryRoot + "/scripts/hostile-peer.py" }

    static func peer(_ arguments: [String]) async throws -> JSONValue {
        let run = try await PeerHarness.runAsync(TestSupport.python, [script()] + arguments)
        guard run.exitCode == 0, let json = run.json else {
            throw ListenerProcess.ListenerFailed(
                message: "hostile-peer.py \(arguments.first ?? ""): \(run.stdout) \(run.stderr)")
        }
        return json
    }

    /// Peak resident memory of a process (VmHWM), in KiB.
    static func peakRSS(_ pid: pid_t) -> Int? {
        let status = String(
            decoding: FileManager.default.contents(atPath: "/proc/\(pid)/status") ?? Data(), as: UTF8.self)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }

    static func echo(_ port: Int) async throws -> (ok: Bool, seconds: Double) {
        let start = ContinuousClock.now
        let run = try await PeerHarness.runAsync(
            "/usr/bin/echoscu", ["-aec", "PXLISTEN", "-to", "10", "127.0.0.1", String(port)])
        let elapsed = ContinuousClock.now - start
        return (run.exitCode == 0, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    static func number(_ value: JSONValue?) -> Double? {
        if case .number(let text)? = value { return Double(text) }
        return nil
    }

    /// Three 1 MB C-STOREs in Deflated Explicit VR Little Endian whose data sets inflate to 1 GiB each, at
    /// once: each is refused with 0xA700 and a `storeFailed` event naming the bomb, nothing is placed,
    /// px-listen's peak memory stays within the budget, and a C-ECHO sent meanwhile is answered at once.
    @Test func deflateBombsAreRefusedWithinTheMemoryBudget() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let made = try await Self.peer(["bomb-file", work + "/bomb0.dcm", "--inflated-mib", "1024"])
        #expect(Self.number(made["bytes"]).map { $0 < 2_000_000 } == true)
        let bombs = [work + "/bomb0.dcm", work + "/bomb1.dcm", work + "/bomb2.dcm"]
        for copy in bombs.dropFirst() { try FileManager.default.copyItem(atPath: bombs[0], toPath: copy) }
        let root = work + "/root"
        let listener = try await ListenerProcess.start(backend: "native", root: root, work: work)
        let port = listener.port
        let results = try await withThrowingTaskGroup(of: JSONValue?.self) { group in
            for bomb in bombs {
                group.addTask { try await Self.peer(["store", "127.0.0.1", String(port), bomb]) }
            }
            group.addTask {
                let echo = try await Self.echo(port)
                #expect(echo.ok)
                #expect(echo.seconds < 5, "C-ECHO waited \(echo.seconds) s while bombs were decoded")
                return nil
            }
            var all: [JSONValue] = []
            for try await result in group { if let result { all.append(result) } }
            return all
        }
        #expect(results.map { Self.number($0["status"]) } == [0xA700, 0xA700, 0xA700], "\(results)")
        #expect(
            await listener.waitFor(seconds: 10) { $0.filter { $0["event"]?.stringValue == "storeFailed" }.count == 3 })
        let peak = try #require(Self.peakRSS(listener.pid))
        #expect(peak < Self.listenerBudgetKiB, "px-listen peaked at \(peak) KiB")
        let failures = listener.events("storeFailed")
        let messages = failures.map { $0["error"]?["message"]?.stringValue ?? "" }
        #expect(messages.allSatisfy { $0.contains("decompression bomb") }, "\(failures)")
        #expect(listener.events("instanceReceived").isEmpty)
        #expect(await listener.stop() == 0)
        #expect(ListenerFiles.placed(under: root).isEmpty)
        #expect(ListenerFiles.temporaries(under: root).isEmpty)

        // px-dump on the same file: a clear JSON error, with bounded memory, whole or header only.
        for extra in [[], ["--header-only"]] {
            let dump = try await Self.peer(["measure", TestSupport.binDirectory + "/px-dump"] + extra + [bombs[0]])
            #expect(Self.number(dump["exitCode"]) == 1)
            let rss = try #require(Self.number(dump["maxRSSKiB"]))
            #expect(rss < 100 * 1024, "px-dump \(extra) peaked at \(rss) KiB")
            let output = try JSONParser.parse(dump["stdout"]?.stringValue ?? "")
            #expect(output["status"]?.stringValue == "error")
            #expect(output["error"]?["code"]?.stringValue == "tooLarge", "\(output)")
        }
    }

    /// A 128 MiB element before Pixel Data, uncompressed: the instance is stored (the header read skips the
    /// long value instead of reading the file whole) and px-listen's memory stays within the budget.
    @Test func aLongElementBeforePixelDataIsNotRead() async throws {
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let made = try await Self.peer(["bomb-file", work + "/long.dcm", "--plain", "--inflated-mib", "128"])
        let root = work + "/root"
        let listener = try await ListenerProcess.start(backend: "native", root: root, work: work)
        let stored = try await Self.peer(["store", "127.0.0.1", String(listener.port), work + "/long.dcm"])
        #expect(Self.number(stored["status"]) == 0, "\(stored)")
        #expect(await listener.waitFor(seconds: 10) { $0.contains { $0["event"]?.stringValue == "instanceReceived" } })
        let peak = try #require(Self.peakRSS(listener.pid))
        #expect(peak < Self.listenerBudgetKiB, "px-listen peaked at \(peak) KiB")
        #expect(
            listener.events("instanceReceived").first?["SOPInstanceUID"]?.stringValue
                == made["sopInstanceUID"]?.stringValue)
        await listener.stop()
        #expect(ListenerFiles.placed(under: root).count == 1)
    }

    /// One byte of a data PDV every 0.5 s no longer holds a slot: with a 2 s rate window the trickler is
    /// aborted within about 2.5 s (the idle timer alone would keep it for ever), and with
    /// `--max-associations 1` a legitimate C-ECHO then gets in.
    @Test func aTricklingSenderLosesItsSlot() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work,
            extra: ["--max-associations", "1", "--transfer-rate-window", "2"])
        let trickle = try await Self.peer([
            "trickle", "127.0.0.1", String(listener.port), "--interval", "0.5", "--seconds", "20",
        ])
        let closed = try #require(
            Self.number(trickle["closedAfter"]), "the trickling sender kept its association: \(trickle)")
        #expect(closed < 6, "closed after \(closed) s")
        #expect(await listener.waitFor(seconds: 5) { $0.contains { $0["event"]?.stringValue == "associationClosed" } })
        #expect(listener.events("associationClosed").first?["aborted"] == JSONValue.bool(true))
        #expect(try await Self.echo(listener.port).ok)
        #expect(listener.stderr().contains("below the minimum transfer rate"))
        await listener.stop()
    }

    /// A peer that floods C-ECHO-RQs and never reads the responses is disconnected once the responses have
    /// made no progress for the write timeout (2 s here), and its slot is free again. The peer sees it later
    /// than 2 s after its own sends stall: px-listen first answers the requests already in the socket
    /// buffers (megabytes on loopback). Without a write timeout it is never disconnected.
    @Test func aPeerThatDoesNotReadIsDisconnected() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work,
            extra: ["--max-associations", "1", "--write-timeout", "2"])
        // Alone this takes a few seconds; beside the whole suite on 2 cores answering the buffered requests took
        // 49.7 s once. The peer floods for 120 s: being closed while it still floods is the point, and stderr
        // says it was the write timeout.
        let flood = try await Self.peer(["no-read", "127.0.0.1", String(listener.port), "--seconds", "120"])
        let closed = try #require(Self.number(flood["closedAfter"]), "the peer was never disconnected: \(flood)")
        #expect(Self.number(flood["stalledAfter"]) != nil, "the peer's sends never stalled: \(flood)")
        #expect(closed < 110, "disconnected after \(closed) s")
        #expect(try await Self.echo(listener.port).ok)
        #expect(listener.stderr().contains("has not read for the write timeout"))
        await listener.stop()
    }

    /// A peer that keeps its association busy with valid C-ECHOs, answered at once, is aborted (A-ABORT from the
    /// service provider) when the association reaches --max-association-seconds (2 s here), and its slot is free
    /// again. Without the limit every idle and rate check is satisfied and it holds the slot forever.
    @Test func anEndlessStreamOfEchoesEndsAtTheMaximumAssociationLifetime() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work,
            extra: ["--max-associations", "1", "--max-association-seconds", "2"])
        let loop = try await Self.peer(["echo-loop", "127.0.0.1", String(listener.port), "--seconds", "30"])
        let closed = try #require(Self.number(loop["closedAfter"]), "the echoing peer kept its association: \(loop)")
        #expect(closed >= 1.9 && closed < 15, "aborted after \(closed) s")
        #expect((Self.number(loop["echoes"]) ?? 0) > 0, "\(loop)")
        #expect(loop["abortSource"] == .number("2"), "\(loop)")
        #expect(await listener.waitFor(seconds: 5) { $0.contains { $0["event"]?.stringValue == "associationClosed" } })
        #expect(listener.events("associationClosed").first?["aborted"] == JSONValue.bool(true))
        #expect(try await Self.echo(listener.port).ok)
        #expect(listener.stderr().contains("maximum association lifetime"))
        await listener.stop()
    }

    /// Connections that never complete their A-ASSOCIATE-RQ: 100 sending most of a ~1 MB request are closed on
    /// its header (the limit is 64 KiB), and of 200 that send 3 bytes only the newest 20
    /// (`--max-pending-connections 20`) stay open. Meanwhile a legitimate peer associates, and px-listen's
    /// memory and open descriptors stay bounded.
    @Test func connectionsBeforeNegotiationAreCapped() async throws {
        guard PeerHarness.requireTools(Self.tools) else { return }
        let work = try TestSupport.makeTemporaryDirectory(prefix: "px-hostile-")
        defer { try? FileManager.default.removeItem(atPath: work) }
        let listener = try await ListenerProcess.start(
            backend: "native", root: work + "/root", work: work, extra: ["--max-pending-connections", "20"])
        let port = String(listener.port)
        let large = try await Self.peer([
            "pre-association", "127.0.0.1", port, "--connections", "100", "--bytes", "900000", "--seconds", "10",
        ])
        #expect(Self.number(large["opened"]) == 100)
        #expect(Self.number(large["closedByServer"]) == 100, "\(large)")

        let held = Task {
            try await Self.peer([
                "pre-association", "127.0.0.1", port, "--connections", "200", "--bytes", "3", "--seconds", "6",
            ])
        }
        // While the 200 are held open: a legitimate C-ECHO, and the listener's descriptors.
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline
            && listener.stderr().components(separatedBy: "closing the oldest connections").count < 150
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try await Self.echo(listener.port).ok)
        let openNow = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(listener.pid)/fd").count) ?? 0
        #expect(openNow < 80, "px-listen holds \(openNow) descriptors")
        let small = try await held.value
        #expect(Self.number(small["opened"]) == 200)
        #expect((Self.number(small["closedByServer"]) ?? 0) >= 180, "\(small)")
        let peak = try #require(Self.peakRSS(listener.pid))
        #expect(peak < Self.listenerBudgetKiB, "px-listen peaked at \(peak) KiB")
        await listener.stop()
    }
}
