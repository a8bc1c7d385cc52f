import DICOMData
import Foundation
import PXTestSupport
import Testing

/// What px sends in QIDO-RS URLs (RFC 3986, PS3.18 §8.3.4), seen by a scripted HTTP server, and what
/// Orthanc 1.10's DICOMweb plugin makes of it.
extension DICOMWebCommandTests {
    @Test("px-find over QIDO-RS: the request line carries ^, spaces, brackets, + & = and non-ASCII percent-encoded")
    func queryOnTheWire() async throws {
        let context = try Self.context()
        let file = try #require(context.corpus.files.first)
        let (server, port) = try await Self.startScriptedServer(context, file: file, name: "qido-wire")
        defer { server.kill() }
        for (arguments, expected) in [
            (
                ["--PatientName", "Doe^John", "--StudyDescription", "Chest [PA] view", "--PatientID", "PAT00?"],
                ["00100010=Doe%5EJohn", "00081030=Chest%20%5BPA%5D%20view", "00100020=PAT00?"]
            ),
            (
                ["--PatientName", "Müller^J*", "--AccessionNumber", "A+B&C=D"],
                ["00100010=M%C3%BCller%5EJ*", "00080050=A%2BB%26C%3DD"]
            ),
        ] {
            // The scripted server answers a multipart, not JSON: px-find fails after the request is logged.
            let run = try await PeerHarness.runAsync(
                "px-find", ["http://127.0.0.1:\(port)/qido", "--level", "study"] + arguments)
            #expect(run.exitCode != 0)
            #expect(run.json?["error"]?["code"]?.stringValue == "invalidResponse", "\(run.stdout)")
            let logged = await TestSupport.poll(seconds: 10) {
                expected.allSatisfy { server.log.contains($0) }
            }
            #expect(logged, "expected \(expected) in the request lines: \(server.log)")
        }
        let lines = server.log.split(separator: "\n").dropFirst()
        #expect(lines.count == 2, "\(server.log)")
        for line in lines {
            let target = line.split(separator: " ").first ?? ""
            // Only RFC 3986 query characters: unreserved, sub-delimiters, : @ / ? and %XX escapes.
            let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?%")
            #expect(target.allSatisfy { allowed.contains($0) }, "\(target)")
            #expect(target.hasPrefix("/qido/studies?"), "\(target)")
        }
    }

    @Test(
        "Orthanc 1.10's DICOMweb plugin does not percent-decode QIDO-RS values: Doe^John matches by C-FIND, not by QIDO-RS"
    )
    func orthancDoesNotDecode() async throws {
        let context = try Self.context()
        func count(_ peer: String, _ arguments: [String]) async throws -> Int? {
            let run = try await PeerHarness.runAsync("px-find", [peer, "--level", "study"] + arguments)
            #expect(run.exitCode == 0, "\(peer) \(arguments): \(run.stdout) \(run.stderr)")
            return run.json?["data"]?.arrayValue?.count
        }
        let dimse = [context.peer, "--backend", "native"]
        // Values that need no escape match the same both ways.
        for arguments in [["--PatientName", "Doe*"], ["--PatientID", "PAT00?"], ["--PatientName", "O'Brien*"]] {
            let web = try await count(Self.url(context), arguments)
            #expect(web != nil && web != 0, "\(arguments)")
            #expect(try await count(dimse[0], arguments + Array(dimse.dropFirst())) == web, "\(arguments)")
        }
        // A value with an escape (%5E for ^, %20 for a space, UTF-8 bytes): Orthanc compares the escaped
        // text and finds nothing. Should Orthanc ever decode, these counts become equal and this test
        // says so.
        for arguments in [
            ["--PatientName", "Doe^John"], ["--StudyDescription", "Chest [PA] view"], ["--PatientName", "Müller*"],
        ] {
            let cFind = try await count(dimse[0], arguments + Array(dimse.dropFirst()))
            #expect(cFind != nil && cFind != 0, "C-FIND \(arguments)")
            #expect(try await count(Self.url(context), arguments) == 0, "QIDO-RS \(arguments)")
        }
    }
}
