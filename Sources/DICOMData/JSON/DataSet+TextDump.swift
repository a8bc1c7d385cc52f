extension DataSet {
    /// A readable dump in the manner of DCMTK's dcmdump: one line per element, nested items indented,
    /// `(gggg,eeee) VR [value]  # length, VM Keyword`.
    ///
    /// VM is counted on the whole value (PS3.5 §6.4), before a long value is shortened for display. Control and
    /// bidi characters in values, and a value's own backslash, are escaped (``HumanText/escaped(_:)``).
    public func textDump(indent: Int = 0, maximumValueLength: Int = 64) -> String {
        var out = ""
        out.reserveCapacity(64 * elements.count)
        appendDump(to: &out, indent: indent, maximumValueLength: maximumValueLength)
        if out.utf8.last == 0x0A { out.removeLast() }
        return out
    }

    /// Appends one line per element (each ending in a newline) to `out`.
    func appendDump(to out: inout String, indent: Int, maximumValueLength: Int) {
        let pad = String(repeating: "  ", count: indent)
        for element in elements {
            out += pad
            Self.appendTag(element.tag, to: &out)
            out += " "
            out += element.vr.rawValue
            out += " "
            switch element.value {
            case .sequence(let items):
                out +=
                    element.hasUndefinedLength
                    ? "(Sequence with undefined length #=" : "(Sequence with explicit length #="
                out += String(items.count)
                out += ")  # "
                out += element.keyword
                out += "\n"
                for item in items {
                    out += pad
                    out +=
                        item.hasUndefinedLength
                        ? "  (fffe,e000) na (Item with undefined length #="
                        : "  (fffe,e000) na (Item with explicit length #="
                    out += String(item.dataSet.count)
                    out += ")\n"
                    item.dataSet.appendDump(to: &out, indent: indent + 2, maximumValueLength: maximumValueLength)
                    if item.hasUndefinedLength { out += pad + "  (fffe,e00d) na (ItemDelimitationItem)\n" }
                }
                if element.hasUndefinedLength { out += pad + "(fffe,e0dd) na (SequenceDelimitationItem)\n" }
            case .fragments(let pixelData):
                out += "(PixelSequence #=\(pixelData.fragments.count + 1))  # \(element.keyword)\n"
                out += "\(pad)  (fffe,e000) pi (offset table, \(pixelData.basicOffsetTable.count) bytes)\n"
                for f in pixelData.fragments { out += "\(pad)  (fffe,e000) pi (fragment, \(f.count) bytes)\n" }
            case .bytes(let bytes):
                var text: String
                var vm: Int
                switch element.vr {
                case .OB, .OW, .OD, .OF, .OL, .OV, .UN:
                    // Only the first bytes are shown, so only those are formatted.
                    text = ""
                    for (i, b) in bytes.prefix(16).enumerated() {
                        if i > 0 { text += "\\" }
                        Self.appendHexByte(b, to: &text)
                    }
                    if bytes.count > 16 { text += "..." }
                    // dcmdump counts one value for these VRs, empty or not.
                    vm = 1
                default:
                    switch element.pypxValue(characterSet: characterSet) {
                    // Each value escaped (``HumanText``): a value's control characters never reach the terminal.
                    case .array(let parts):
                        text = HumanText.escaped(values: parts.compactMap(\.stringValue))
                        vm = parts.count
                    case .string(let s):
                        text = HumanText.escaped(s)
                        vm = 1
                    default:
                        text = ""
                        vm = 1
                    }
                    if !element.vr.isString {
                        vm = Swift.max(1, bytes.count / (element.vr.binaryValueSize ?? Swift.max(1, bytes.count)))
                    } else if element.vr.isSingleValued {
                        vm = 1
                    }
                    // No value, or only padding: VM 0, as dcmdump counts it.
                    if bytes.isEmpty || (vm == 1 && text.isEmpty) { vm = 0 }
                }
                // A value no longer than the limit in UTF-8 bytes is no longer in characters: skip the count.
                if text.utf8.count > maximumValueLength && text.count > maximumValueLength {
                    text = String(text.prefix(maximumValueLength)) + "..."
                }
                if bytes.isEmpty {
                    out += "(no value available)"
                } else {
                    out += "["
                    out += text
                    out += "]"
                }
                out += "  # "
                out += String(bytes.count)
                out += ", "
                out += String(vm)
                out += " "
                out += element.keyword
                out += "\n"
            }
        }
    }

    private static let hexDigits: [Character] = Array("0123456789abcdef")

    private static func appendHexByte(_ byte: UInt8, to out: inout String) {
        out.append(hexDigits[Int(byte >> 4)])
        out.append(hexDigits[Int(byte & 0x0F)])
    }

    /// `(gggg,eeee)` in lower-case hexadecimal, without building intermediate strings.
    private static func appendTag(_ tag: Tag, to out: inout String) {
        out += "("
        appendHexByte(UInt8(tag.group >> 8), to: &out)
        appendHexByte(UInt8(tag.group & 0xFF), to: &out)
        out += ","
        appendHexByte(UInt8(tag.element >> 8), to: &out)
        appendHexByte(UInt8(tag.element & 0xFF), to: &out)
        out += ")"
    }
}
