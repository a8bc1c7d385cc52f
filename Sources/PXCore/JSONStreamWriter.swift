import DICOMData

/// Writes one JSON document piece by piece (open a container, its members or elements as they come, close it)
/// with exactly the bytes ``JSONValue/write(into:pretty:indent:)`` gives for the whole value held in memory:
/// members in the order written, numbers as their text, the same escaping, the same indentation.
///
/// The bytes collect in ``bytes``; the owner takes them (``take()``) to stdout or a file whenever it likes, so
/// a large array never has to be held whole. A value written elsewhere (an array spooled to a file) takes its
/// place with ``externalValue()``.
public struct JSONStreamWriter: Sendable {
    /// Indented (two spaces a level) instead of one line.
    public let pretty: Bool
    /// The text written and not yet taken.
    public private(set) var bytes: [UInt8] = []

    private struct Container {
        var isObject: Bool
        var count = 0
    }
    private var open: [Container] = []
    /// The indentation level of the document's top value (a value written inside a larger document).
    private let baseIndent: Int
    /// A key was written and its value has not been.
    private var keyWritten = false

    /// - Parameter indent: the nesting level the document's top value sits at (0 for a whole document).
    public init(pretty: Bool, indent: Int = 0) {
        self.pretty = pretty
        self.baseIndent = indent
    }

    /// The level of the next value's contents.
    private var indent: Int { baseIndent + open.count }

    /// Opens an object.
    public mutating func beginObject() {
        position()
        bytes.append(UInt8(ascii: "{"))
        open.append(Container(isObject: true))
    }

    /// Opens an array.
    public mutating func beginArray() {
        position()
        bytes.append(UInt8(ascii: "["))
        open.append(Container(isObject: false))
    }

    /// Closes the innermost object or array (`{}` and `[]` when nothing was written in it).
    public mutating func end() {
        guard let container = open.popLast() else { preconditionFailure("JSONStreamWriter: nothing to close") }
        if container.count > 0 && pretty { newline(indent) }
        bytes.append(UInt8(ascii: container.isObject ? "}" : "]"))
    }

    /// Writes an object's key; the value comes next.
    public mutating func key(_ key: String) {
        precondition(open.last?.isObject == true && !keyWritten, "JSONStreamWriter: a key outside an object")
        separate()
        JSONValue.string(key).write(into: &bytes, pretty: false, indent: 0)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(UInt8(ascii: " ")) }
        keyWritten = true
    }

    /// Writes a value: an array's next element, or the value of the key just written.
    public mutating func value(_ value: JSONValue) {
        position()
        value.write(into: &bytes, pretty: pretty, indent: indent)
    }

    /// Writes an object's member.
    public mutating func member(_ member: JSONMember) {
        key(member.key)
        value(member.value)
    }

    /// Writes the members of the object `value` encodes to (``JSONValueEncoder``) into the open object, in
    /// their order: a typed value's members around others streamed separately (the envelope around a spooled
    /// `data`).
    public mutating func members(of value: some Encodable) {
        for member in PXOutput.members(of: value) { self.member(member) }
    }

    /// Takes the place of one value the caller writes itself, after taking ``bytes``: the value must be
    /// written as this writer would write it at this place (at ``init(pretty:indent:)``'s `indent` one more
    /// than the number of containers open).
    public mutating func externalValue() {
        position()
    }

    /// Returns the text written so far and forgets it.
    public mutating func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }

    /// Before a value: after its key nothing; in an array the comma and the new line.
    private mutating func position() {
        if keyWritten {
            keyWritten = false
            return
        }
        precondition(open.last?.isObject != true, "JSONStreamWriter: a value without its key")
        if !open.isEmpty { separate() }
    }

    private mutating func separate() {
        if open[open.count - 1].count > 0 { bytes.append(UInt8(ascii: ",")) }
        open[open.count - 1].count += 1
        if pretty { newline(indent) }
    }

    private mutating func newline(_ indent: Int) {
        bytes.append(0x0A)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }
}
