import DICOMData
import PXCore
import Testing

/// ``JSONStreamWriter`` writes the bytes ``JSONValue`` writes for the whole value, piece by piece.
struct JSONStreamWriterTests {
    /// Writes `value` through the writer, containers opened and closed member by member.
    static func streamed(_ value: JSONValue, into writer: inout JSONStreamWriter) {
        switch value {
        case .object(let members):
            writer.beginObject()
            for member in members {
                writer.key(member.key)
                streamed(member.value, into: &writer)
            }
            writer.end()
        case .array(let elements):
            writer.beginArray()
            for element in elements { streamed(element, into: &writer) }
            writer.end()
        default: writer.value(value)
        }
    }

    static let sample = JSONValue.object([
        JSONMember("status", .string("success")),
        JSONMember("command", .array([.string("px-find"), .string("a/b \"q\"\n")])),
        JSONMember(
            "data",
            .array([
                .object([
                    JSONMember("n", .number("1.50")), JSONMember("empty", .array([])), JSONMember("o", .object([])),
                ]),
                .null, .bool(true), .array([.integer(-3)]),
            ])),
        JSONMember("error", .object([JSONMember("code", .string("io"))])),
    ])

    @Test(arguments: [false, true]) func streamedEqualsWhole(pretty: Bool) {
        var writer = JSONStreamWriter(pretty: pretty)
        Self.streamed(Self.sample, into: &writer)
        var whole: [UInt8] = []
        Self.sample.write(into: &whole, pretty: pretty, indent: 0)
        #expect(String(decoding: writer.take(), as: UTF8.self) == String(decoding: whole, as: UTF8.self))
        #expect(writer.bytes.isEmpty)
    }

    /// A value written elsewhere (a spooled array at indentation level 1) fits where ``externalValue()`` is.
    @Test(arguments: [false, true]) func externalValueFitsInPlace(pretty: Bool) {
        let data = JSONValue.array([.object([JSONMember("a", .integer(1))]), .string("b")])
        var outer = JSONStreamWriter(pretty: pretty)
        outer.beginObject()
        outer.member(JSONMember("status", .string("success")))
        outer.key("data")
        outer.externalValue()
        var inner = JSONStreamWriter(pretty: pretty, indent: 1)
        Self.streamed(data, into: &inner)
        var text = outer.take() + inner.take()
        outer.member(JSONMember("after", .null))
        outer.end()
        text += outer.take()
        var whole: [UInt8] = []
        JSONValue.object([
            JSONMember("status", .string("success")), JSONMember("data", data), JSONMember("after", .null),
        ]).write(into: &whole, pretty: pretty, indent: 0)
        #expect(String(decoding: text, as: UTF8.self) == String(decoding: whole, as: UTF8.self))
    }
}
