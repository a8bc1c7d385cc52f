import DICOMData
import PXCommandLine
import PXCore
import Synchronization
import Testing

/// The envelope is the same bytes whether its `data` is held in memory or streamed from a ``JSONArraySpool``
/// (px-find; px-get's `gets`, a member of `data`): `status`, `backend`, `command` (the argv or pypx's one
/// string), `data`, `error` on failure, one line or indented.
struct EnvelopeStreamingTests {
    static func streamed(
        pretty: Bool, entries: [JSONValue], error: PXError?, commandLine: String?, member: String? = nil,
        data: JSONValue? = nil
    ) throws -> String {
        let bytes = Mutex<[UInt8]>([])
        var output = CommandOutput(pretty: pretty, command: ["px-find", "--json"]) { new in
            bytes.withLock { $0 += new }
        }
        let spool = try JSONArraySpool(pretty: pretty, member: member)
        for entry in entries { spool.append(entry) }
        spool.complete()
        output.spool = spool
        output.commandLine = commandLine
        output.finish(backend: "native", data: data, error: error)
        return bytes.withLock { String(decoding: $0, as: UTF8.self) }
    }

    @Test func streamedIsHeld() throws {
        let entries: [JSONValue] = [
            .object([JSONMember("a", .string("x/y \"z\""))]), .array([.integer(1), .double(2.5)]), .null,
        ]
        for pretty in [false, true] {
            for error in [nil, PXError.timeout("C-FIND")] {
                for commandLine in [nil, "findscu -S host 104"] {
                    for entries in [entries, []] {
                        let held = PXOutput.envelope(
                            backend: "native", command: ["px-find", "--json"], data: .array(entries), error: error,
                            commandLine: commandLine)
                        #expect(
                            try Self.streamed(pretty: pretty, entries: entries, error: error, commandLine: commandLine)
                                == held.serialized(pretty: pretty) + "\n")
                    }
                }
            }
        }
    }

    /// px-get's `gets` streamed in its place among `data`'s other members (first, middle, last), and `data`
    /// written as it is when it has no such member.
    @Test func spooledMemberIsHeld() throws {
        let entries: [JSONValue] = [
            .object([JSONMember("instances", .array([.object([JSONMember("path", .string("a/b"))])]))]),
            .object([JSONMember("instances", .array([]))]),
        ]
        let others = [JSONMember("targets", .array([.integer(1)])), JSONMember("completed", .integer(3))]
        for pretty in [false, true] {
            for error in [nil, PXError.timeout("C-GET")] {
                for entries in [entries, []] {
                    for position in 0...others.count {
                        var placeholder = others
                        placeholder.insert(JSONMember("gets", .array([])), at: position)
                        var held = others
                        held.insert(JSONMember("gets", .array(entries)), at: position)
                        let expected = PXOutput.envelope(
                            backend: "native", command: ["px-find", "--json"], data: .object(held), error: error)
                        #expect(
                            try Self.streamed(
                                pretty: pretty, entries: entries, error: error, commandLine: nil, member: "gets",
                                data: .object(placeholder)) == expected.serialized(pretty: pretty) + "\n")
                    }
                }
            }
            let without = PXOutput.envelope(
                backend: "native", command: ["px-find", "--json"], data: .object(others), error: nil)
            #expect(
                try Self.streamed(
                    pretty: pretty, entries: entries, error: nil, commandLine: nil, member: "gets",
                    data: .object(others)) == without.serialized(pretty: pretty) + "\n")
        }
    }

    @Test func envelopeBytes() {
        #expect(
            PXOutput.envelope(backend: "dcmtk", command: [], data: nil, commandLine: "findscu h 1").serialized()
                == #"{"status":"success","backend":"dcmtk","command":"findscu h 1","data":null}"#)
        let error = PXOutput.json(PXError.timeout("C-FIND")).serialized()
        #expect(
            PXOutput.envelope(backend: "native", command: ["px-echo"], data: .integer(1), error: .timeout("C-FIND"))
                .serialized()
                == #"{"status":"error","backend":"native","command":["px-echo"],"data":1,"error":"# + error + "}")
    }
}
