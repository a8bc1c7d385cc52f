import DICOMData
import PXCore
import Testing

/// ``JSONValueEncoder`` keeps the declaration order, leaves a `nil` optional out and writes ``PXOutput/Nullable``'s
/// `nil` as `null`, numbers as ``JSONValue`` writes them and strings unescaped but for JSON's own escapes.
struct JSONValueEncoderTests {
    struct Inner: Encodable {
        var b: Int
        var a: [Double]
    }
    struct Outer: Encodable {
        var zeta: String
        var alpha: Inner
        var missing: String?
        var kept: PXOutput.Nullable<Int>
        var flag: Bool
        var list: [Inner]
        var details: PXOutput.SortedStrings
    }

    @Test func keepsOrderAndBytes() {
        let value = Outer(
            zeta: "a/b \"c\"\u{1}", alpha: Inner(b: -2, a: [1, 1.5, .infinity]), missing: nil, kept: .init(nil),
            flag: true, list: [], details: .init(["z": "1", "a": "2"]))
        let expected = JSONValue.object([
            JSONMember("zeta", .string("a/b \"c\"\u{1}")),
            JSONMember(
                "alpha",
                .object([
                    JSONMember("b", .integer(-2)),
                    JSONMember("a", .array([.double(1), .double(1.5), .double(.infinity)])),
                ])),
            JSONMember("kept", .null), JSONMember("flag", .bool(true)), JSONMember("list", .array([])),
            JSONMember("details", .object([JSONMember("a", .string("2")), JSONMember("z", .string("1"))])),
        ])
        #expect(JSONValueEncoder.encode(value) == expected)
        #expect(JSONValueEncoder.encode(value).serialized() == expected.serialized())
    }

    @Test func errorAndStatus() {
        let error = PXError.io("disk full", path: "/tmp/x")
        var members = [
            JSONMember("code", .string(error.code.description)), JSONMember("message", .string(error.message)),
        ]
        if !error.details.isEmpty {
            members.append(
                JSONMember(
                    "details",
                    .object(error.details.sorted { $0.key < $1.key }.map { JSONMember($0.key, .string($0.value)) })))
        }
        #expect(PXOutput.json(error) == .object(members))
    }
}
