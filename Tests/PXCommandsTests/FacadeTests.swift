import DICOMData
import Foundation
import PX
import PXTestSupport
import Synchronization
import Testing

/// The `PX` facade (Sources/PX, its DocC articles): places from the commands' text, and results and events
/// that render byte for byte as the commands print them.
@Suite(.timeLimit(.minutes(3))) struct FacadeTests {
    @Test("PX.place takes the commands' text: an address, a path, zip:, a config node; a folder cannot echo")
    func placesFromText() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-facade-places-") { work in
            try ServeCommandTests.makePlace(work + "/in")
            let config = try PXConfig(
                parsing:
                    "[local]\nae_title = \"ME\"\n[nodes.pacs]\nhost = \"127.0.0.1\"\nport = 4242\nae_title = \"PACS\"\n"
            )
            let node = try await PX.place("PACS@127.0.0.1:4242", config: config)
            #expect(node.kind == .node && node.label == "PACS@127.0.0.1:4242")
            guard case .node(let named) = try await PX.place("pacs", config: config) else {
                Issue.record("a config node name is not a node")
                return
            }
            #expect(named.connection.node.calledAETitle == "PACS" && named.connection.local.aeTitle == "ME")
            // The facade's nodes retrieve with px's own C-GET (files as stored), whatever `auto` picks elsewhere.
            #expect(named.backend.name == "native")
            let folder = try await PX.place(work + "/in", config: config)
            #expect(folder.kind == .folder)
            let zips = try await PX.destination("zip:" + work + "/zips", config: config)
            #expect(zips.kind == .zip && FileManager.default.fileExists(atPath: work + "/zips"))
            await #expect(throws: PXError.self) { try await folder.echo() }
            await #expect(throws: PXError.self) { try await PX.place("no-such-name", config: config) }
        }
    }

    @Test("PX.sync's events and summary render as px-sync prints them for the same run")
    func syncRendersAsPXSync() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-facade-sync-") { work in
            try ServeCommandTests.makePlace(work + "/in")
            let command = try await PeerHarness.runAsync("px-sync", [work + "/in", "zip:" + work + "/by-command"])
            #expect(command.exitCode == 0, "\(command.stderr)")
            var printed = command.stdout.split(separator: "\n").map(String.init)
            let envelope = try #require(printed.popLast().map { try JSONParser.parse($0) })

            var lines: [String] = []
            var summary: SyncSummary?
            let source = try await PX.place(work + "/in", config: PXConfig())
            let zips = try await PX.destination("zip:" + work + "/by-library", config: PXConfig())
            for try await event in PX.sync(from: source, to: zips) {
                if event.isNDJSONLine { lines.append(PX.json(event)) }
                if case .finished(let end) = event { summary = end }
            }
            // Studies run side by side: the same lines, in an order of their own.
            #expect(lines.sorted() == printed.sorted())
            let data = try JSONParser.parse(PX.json(try #require(summary)))
            #expect(data == envelope["data"])
            #expect(data["instancesTransferred"] == .number("4"))
        }
    }

    @Test("PX.listen and store: px-listen's lines, px-push's data, the files filed; echo of the listener")
    func listenAndStore() async throws {
        try await TestSupport.withTemporaryDirectory(prefix: "px-facade-listen-") { work in
            try ServeCommandTests.makePlace(work + "/in")
            let files = SyncTests.files(under: work + "/in").filter { $0.hasSuffix(".dcm") }
            let port = try TestSupport.freePort()
            let received = Mutex<[String]>([])
            let listener = Task {
                for try await event in PX.listen(port: port, into: work + "/incoming") {
                    received.withLock { $0.append(PX.json(event)) }
                    if received.withLock({ $0.count { $0.contains("\"instanceReceived\"") } }) == files.count { break }
                }
            }
            // Its first event says the port is open (generous: the whole suite runs side by side on two cores).
            let ready = await TestSupport.poll(seconds: 60) {
                received.withLock { $0.first?.contains("\"listening\"") == true }
            }
            try #require(ready, "PX.listen reported no listening event: \(received.withLock { $0 })")
            let scp = try await PX.place("PXLISTEN@127.0.0.1:\(port)", config: PXConfig())
            let echo = try JSONParser.parse(PX.json(try await scp.echo()))
            #expect(echo["dimseStatus"]?["code"]?.stringValue == "0x0000")
            let pushed = try await scp.store([work + "/in"])
            #expect(pushed.completed == files.count && pushed.failed == 0)
            // As Store.md reads them: a result per file, the folder walked in byte order of the names.
            #expect(
                pushed.files.map(\.file.path)
                    == files.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
            #expect(pushed.files.allSatisfy { $0.succeeded && $0.attempts == 1 && $0.file.sopInstanceUID.count > 0 })
            let data = try JSONParser.parse(PX.json(pushed))
            #expect(data == PXOutput.json(pushed))
            try await listener.value
            let lines = received.withLock { $0 }.map { try? JSONParser.parse($0) }
            #expect(lines.first??["event"]?.stringValue == "listening")
            let stored = lines.compactMap { $0 }.filter { $0["event"]?.stringValue == "instanceReceived" }
            #expect(stored.count == files.count)
            for line in stored {
                #expect(FileManager.default.fileExists(atPath: line["path"]?.stringValue ?? "/nonexistent"))
            }
        }
    }
}
