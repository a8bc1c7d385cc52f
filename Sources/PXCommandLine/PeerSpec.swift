import DICOMWeb
import PXCore

/// A peer as written on the command line: `host:port`, `AE@host:port`, `host:AE:port`, a DICOMweb
/// base URL (`http://...`, `https://...`), or the name of a `[nodes.NAME]` table in the config file.
public enum PeerSpec: Hashable, Sendable {
    case address(host: String, port: Int, aeTitle: String?)
    case node(String)
    /// A DICOMweb service (PS3.18), checked when it is used.
    case url(String)

    /// Parses the text.
    /// - Throws: ``PXError/usage(_:)`` for a malformed form.
    public static func parse(_ text: String) throws(PXError) -> PeerSpec {
        guard !text.isEmpty else { throw .usage("empty peer") }
        if DICOMWebPlace.isURL(text) { return .url(text) }
        func port(_ s: Substring) throws(PXError) -> Int {
            guard let p = Int(s), (1...65535).contains(p) else { throw .usage("bad port '\(s)' in peer '\(text)'") }
            return p
        }
        if let at = text.firstIndex(of: "@") {
            let ae = text[..<at]
            let rest = text[text.index(after: at)...]
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !ae.isEmpty else {
                throw .usage("peer '\(text)': expected AE@host:port")
            }
            return .address(host: String(parts[0]), port: try port(parts[1]), aeTitle: String(ae))
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            return .node(text)
        case 2:
            guard !parts[0].isEmpty else { throw .usage("peer '\(text)': empty host") }
            return .address(host: String(parts[0]), port: try port(parts[1]), aeTitle: nil)
        case 3:
            guard !parts[0].isEmpty, !parts[1].isEmpty else { throw .usage("peer '\(text)': expected host:AE:port") }
            return .address(host: String(parts[0]), port: try port(parts[2]), aeTitle: String(parts[1]))
        default:
            throw .usage("peer '\(text)': expected host:port, AE@host:port, host:AE:port or a config node name")
        }
    }
}
