import DICOMData

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A remote DICOM application entity: where to connect and which AE title to call.
public struct DICOMNode: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The called AE title (PS3.8 §9.3.2, 1–16 characters).
    public var calledAETitle: String

    /// - Parameter host: a name, an IPv4 address or an IPv6 address (without brackets), as
    ///   ``HostName/parse(_:role:)`` gives it.
    /// - Throws: ``PXError/usage(_:)`` for a bad host (``HostName``), port or AE title.
    public init(host: String, port: Int, calledAETitle: String) throws(PXError) {
        try HostName.validateConnectable(host)
        guard (1...65535).contains(port) else { throw .usage("port \(port) out of range 1-65535") }
        try AETitle.validate(calledAETitle, role: "called AE title")
        self.host = host
        self.port = port
        self.calledAETitle = calledAETitle
    }

    public var description: String { "\(calledAETitle)@\(host):\(port)" }
}

/// Host name rules, checked where a peer is parsed (the command line, the config file) so that no backend
/// (echoscu and the other DCMTK tools, the resolver) is ever given a host with a newline, a control
/// character or a length no name has (issue 36).
public enum HostName {
    /// The longest host name (RFC 1035 §2.3.4: 255 octets on the wire, 253 characters written).
    public static let maximumLength = 253

    /// The host to connect to from a host as written: a name of letters, digits, `-` and `_` in labels
    /// separated by `.` (each label 1–63 characters, a final `.` allowed), an IPv4 address, or an IPv6
    /// address in brackets (`[::1]`), returned without them.
    /// - Parameters:
    ///   - text: the host as written.
    ///   - role: what it is, for messages (`host`, `--serverIP`, `config: [nodes.pacs] host`).
    /// - Throws: ``PXError/usage(_:)`` naming the problem.
    public static func parse(_ text: String, role: String = "host") throws(PXError) -> String {
        if text.hasPrefix("[") {
            guard text.hasSuffix("]"), text.utf8.count > 2 else {
                throw .usage("\(role) '\(shown(text))': an IPv6 address is written in brackets, [::1]")
            }
            let inner = String(text.dropFirst().dropLast())
            guard isIPv6(inner) else { throw .usage("\(role) '\(shown(text))' is not an IPv6 address") }
            return inner
        }
        if isIPv6(text) {
            throw .usage("\(role) '\(shown(text))': write an IPv6 address in brackets, [\(text)]")
        }
        try validateName(text, role: role)
        return text
    }

    /// Checks a host as ``DICOMNode`` keeps it: a name or an IPv4 address (``parse(_:role:)``'s rules), or an
    /// IPv6 address without brackets.
    /// - Throws: ``PXError/usage(_:)`` naming the problem.
    public static func validateConnectable(_ host: String, role: String = "host") throws(PXError) {
        if isIPv6(host) { return }
        _ = try parse(host, role: role)
    }

    /// Whether `text` is an IPv6 address (`inet_pton`'s syntax, no zone).
    public static func isIPv6(_ text: String) -> Bool {
        guard text.contains(":"), text.utf8.count <= 45 else { return false }
        var address = in6_addr()
        return inet_pton(AF_INET6, text, &address) == 1
    }

    /// Checks a name (or an IPv4 address, which is a name of digits by these rules).
    static func validateName(_ text: String, role: String) throws(PXError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw .usage("\(role) is empty") }
        guard bytes.count <= maximumLength else {
            throw .usage("\(role) is \(bytes.count) characters long: a host name has at most \(maximumLength)")
        }
        if let bad = text.unicodeScalars.first(where: { !isNameCharacter($0) }) {
            let what =
                bad.value < 0x20 || bad.value == 0x7F
                ? "a control character" : bad.isASCII ? "'\(Character(bad))'" : "a non-ASCII character"
            throw .usage(
                "\(role) '\(shown(text))' contains \(what): a host is a name (letters, digits, -, _ and .), "
                    + "an IPv4 address or an IPv6 address in brackets")
        }
        let labels = (bytes.last == UInt8(ascii: ".") ? bytes.dropLast() : bytes[...])
            .split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for label in labels {
            guard !label.isEmpty else {
                throw .usage("\(role) '\(shown(text))' has an empty label (two dots, or a leading dot)")
            }
            guard label.count <= 63 else {
                throw .usage("\(role) '\(shown(text))' has a label longer than 63 characters")
            }
        }
    }

    static func isNameCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".": return true
        default: return false
        }
    }

    /// `text` for a message: its first 64 characters, controls escaped (``HumanText/escaped(_:)``: a
    /// usage error is also printed on a terminal).
    public static func shown(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.count > 64 else { return HumanText.escaped(text) }
        var head = String.UnicodeScalarView()
        head.append(contentsOf: scalars.prefix(64))
        return HumanText.escaped(String(head)) + "..."
    }
}

/// Application entity title rules (PS3.5 §6.2, VR AE).
public enum AETitle {
    /// Checks an AE title: 1–16 characters of the default repertoire, no backslash or control
    /// characters, not only spaces.
    /// - Throws: ``PXError/usage(_:)`` naming the problem.
    public static func validate(_ title: String, role: String = "AE title") throws(PXError) {
        let scalars = title.unicodeScalars
        guard !scalars.isEmpty else { throw .usage("\(role) is empty") }
        guard scalars.count <= 16 else { throw .usage("\(role) '\(title)' is longer than 16 characters") }
        for s in scalars {
            if s == "\\" { throw .usage("\(role) '\(title)' contains a backslash") }
            if s.value < 0x20 || s.value >= 0x7F { throw .usage("\(role) contains a control or non-ASCII character") }
        }
        if scalars.allSatisfy({ $0 == " " }) { throw .usage("\(role) is only spaces") }
    }

    /// Whether ``validate(_:role:)`` accepts a title.
    public static func isValid(_ title: String) -> Bool {
        do {
            try validate(title)
            return true
        } catch {
            return false
        }
    }
}

/// The local application entity: the calling AE title px presents.
public struct LocalAE: Hashable, Sendable {
    /// The calling AE title.
    public var aeTitle: String

    public init(aeTitle: String = LocalAE.defaultTitle) throws(PXError) {
        try AETitle.validate(aeTitle, role: "calling AE title")
        self.aeTitle = aeTitle
    }

    /// `PXSCU`.
    public static let defaultTitle = "PXSCU"
}

/// Everything needed to open an association to a peer.
public struct Connection: Hashable, Sendable {
    public var node: DICOMNode
    public var local: LocalAE
    public var timeouts: Timeouts
    /// DICOM TLS (PS3.15 Annex B.9); `nil`: plain TCP.
    public var tls: TLSSettings? = nil
    /// The user identity to present (PS3.7 §D.3.3.7); `nil`: none.
    public var userIdentity: UserIdentity? = nil

    public init(node: DICOMNode, local: LocalAE, timeouts: Timeouts = .standard) {
        self.node = node
        self.local = local
        self.timeouts = timeouts
    }
}
