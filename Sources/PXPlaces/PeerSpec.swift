import DICOMWeb
import PXCore

/// A peer as written on the command line: `host:port`, `AE@host:port`, `host:AE:port`, a DICOMweb
/// base URL (`http://...`, `https://...`), or the name of a `[nodes.NAME]` table in the config file.
public enum PeerSpec: Hashable, Sendable {
    case address(host: String, port: Int, aeTitle: String?)
    case node(String)
    /// A DICOMweb service (PS3.18), checked when it is used.
    case url(String)

    /// Parses the text. The host is checked by ``HostName/parse(_:role:)`` (a name, an IPv4 address, or an
    /// IPv6 address in brackets: `[::1]:104`, `AE@[::1]:104`, `[::1]:AE:104`), and kept without brackets.
    /// - Throws: ``PXError/usage(_:)`` for a malformed form or host.
    public static func parse(_ text: String) throws(PXError) -> PeerSpec {
        guard !text.isEmpty else { throw .usage("empty peer") }
        if DICOMWebPlace.isURL(text) { return .url(text) }
        func port(_ s: Substring) throws(PXError) -> Int {
            guard let p = Int(s), (1...65535).contains(p) else {
                throw .usage("bad port '\(HostName.shown(String(s)))' in peer '\(HostName.shown(text))'")
            }
            return p
        }
        func host(_ s: Substring) throws(PXError) -> String { try HostName.parse(String(s), role: "peer host") }
        /// `[v6]` and what follows it after a `:` (split on `:`), or `nil` when `rest` has no bracket.
        func bracketed(_ rest: Substring) throws(PXError) -> (host: Substring, parts: [Substring])? {
            guard rest.hasPrefix("[") else { return nil }
            guard let close = rest.firstIndex(of: "]") else {
                throw .usage("peer '\(HostName.shown(text))': an IPv6 host is written [address]")
            }
            let after = rest[rest.index(after: close)...]
            guard after.hasPrefix(":") else { throw .usage("peer '\(HostName.shown(text))': expected [address]:port") }
            return (rest[...close], after.dropFirst().split(separator: ":", omittingEmptySubsequences: false))
        }
        if let at = text.firstIndex(of: "@") {
            let ae = text[..<at]
            let rest = text[text.index(after: at)...]
            if let (h, parts) = try bracketed(rest) {
                guard parts.count == 1, !ae.isEmpty else {
                    throw .usage("peer '\(HostName.shown(text))': expected AE@[address]:port")
                }
                return .address(host: try host(h), port: try port(parts[0]), aeTitle: String(ae))
            }
            let parts = rest.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !ae.isEmpty else {
                throw .usage("peer '\(HostName.shown(text))': expected AE@host:port")
            }
            return .address(host: try host(parts[0]), port: try port(parts[1]), aeTitle: String(ae))
        }
        if let (h, parts) = try bracketed(Substring(text)) {
            switch parts.count {
            case 1: return .address(host: try host(h), port: try port(parts[0]), aeTitle: nil)
            case 2 where !parts[0].isEmpty:
                return .address(host: try host(h), port: try port(parts[1]), aeTitle: String(parts[0]))
            default: throw .usage("peer '\(HostName.shown(text))': expected [address]:port or [address]:AE:port")
            }
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        switch parts.count {
        case 1:
            return .node(text)
        case 2:
            guard !parts[0].isEmpty else { throw .usage("peer '\(HostName.shown(text))': empty host") }
            return .address(host: try host(parts[0]), port: try port(parts[1]), aeTitle: nil)
        case 3:
            guard !parts[0].isEmpty, !parts[1].isEmpty else {
                throw .usage("peer '\(HostName.shown(text))': expected host:AE:port")
            }
            return .address(host: try host(parts[0]), port: try port(parts[2]), aeTitle: String(parts[1]))
        default:
            throw .usage(
                "peer '\(HostName.shown(text))': expected host:port, AE@host:port, host:AE:port or a config node name")
        }
    }
}
