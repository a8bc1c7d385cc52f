extension DataSet {
    /// A readable dump in the manner of DCMTK's dcmdump: one line per element, nested items indented,
    /// `(gggg,eeee) VR [value]  # length, VM Keyword`.
    public func textDump(indent: Int = 0, maximumValueLength: Int = 64) -> String {
        var lines: [String] = []
        appendDump(to: &lines, indent: indent, maximumValueLength: maximumValueLength)
        return lines.joined(separator: "\n")
    }

    func appendDump(to lines: inout [String], indent: Int, maximumValueLength: Int) {
        let pad = String(repeating: "  ", count: indent)
        for element in elements {
            let head = "\(pad)\(element.tag) \(element.vr.rawValue) "
            switch element.value {
            case .sequence(let items):
                let form = element.hasUndefinedLength ? "undefined" : "explicit"
                lines.append("\(head)(Sequence with \(form) length #=\(items.count))  # \(element.keyword)")
                for item in items {
                    let itemForm = item.hasUndefinedLength ? "undefined" : "explicit"
                    lines.append("\(pad)  (fffe,e000) na (Item with \(itemForm) length #=\(item.dataSet.count))")
                    item.dataSet.appendDump(to: &lines, indent: indent + 2, maximumValueLength: maximumValueLength)
                    if item.hasUndefinedLength { lines.append("\(pad)  (fffe,e00d) na (ItemDelimitationItem)") }
                }
                if element.hasUndefinedLength { lines.append("\(pad)(fffe,e0dd) na (SequenceDelimitationItem)") }
            case .fragments(let pixelData):
                lines.append("\(head)(PixelSequence #=\(pixelData.fragments.count + 1))  # \(element.keyword)")
                lines.append("\(pad)  (fffe,e000) pi (offset table, \(pixelData.basicOffsetTable.count) bytes)")
                for f in pixelData.fragments { lines.append("\(pad)  (fffe,e000) pi (fragment, \(f.count) bytes)") }
            case .bytes(let bytes):
                var text: String
                switch element.vr {
                case .OB, .OW, .OD, .OF, .OL, .OV, .UN:
                    // Only the first bytes are shown, so only those are formatted.
                    text = bytes.prefix(16).map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined(separator: "\\")
                    if bytes.count > 16 { text += "..." }
                default:
                    switch element.pypxValue(characterSet: characterSet) {
                    case .array(let parts): text = parts.compactMap(\.stringValue).joined(separator: "\\")
                    case .string(let s): text = s
                    default: text = ""
                    }
                }
                if text.count > maximumValueLength { text = String(text.prefix(maximumValueLength)) + "..." }
                let shown = bytes.isEmpty ? "(no value available)" : "[\(text)]"
                let vm = bytes.isEmpty ? 0 : (element.vr.isString ? (element.vr.isSingleValued ? 1 : text.split(separator: "\\", omittingEmptySubsequences: false).count) : Swift.max(1, bytes.count / (element.vr.binaryValueSize ?? bytes.count)))
                lines.append("\(head)\(shown)  # \(bytes.count), \(vm) \(element.keyword)")
            }
        }
    }
}
