import DICOMData
import PXCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A DICOMweb service (PS3.18): its base URL (`https://host/dicom-web`, to which `/studies` is
/// appended) and the credentials to present.
///
/// The credentials come from an environment variable or a file, never from the command line, and
/// are never logged: ``description`` and every error name the URL only.
public struct DICOMWebPlace: Hashable, Sendable, CustomStringConvertible {
    /// How px authenticates (PS3.18 §8.5 leaves it to HTTP).
    public enum Authentication: Hashable, Sendable {
        case none
        /// `Authorization: Bearer <token>` (RFC 6750).
        case bearer(token: String)
        /// `Authorization: Basic base64(user:password)` (RFC 7617); the secret is `user:password`.
        case basic(userAndPassword: String)
    }

    /// The base URL without a trailing slash.
    public let baseURL: String
    public let scheme: String
    public let host: String
    public let port: Int
    public let authentication: Authentication

    /// - Throws: ``PXError/usage(_:)`` for a URL that is not `http://` or `https://` with a host, or
    ///   that carries credentials (`user:password@`), which would end up in logs.
    public init(url: String, authentication: Authentication = .none) throws(PXError) {
        let lower = url.lowercased()
        let scheme: String
        if lower.hasPrefix("https://") {
            scheme = "https"
        } else if lower.hasPrefix("http://") {
            scheme = "http"
        } else {
            throw .usage("DICOMweb URL '\(url)' must start with http:// or https://")
        }
        var rest = Substring(url.dropFirst(scheme.count + 3))
        while rest.hasSuffix("/") { rest.removeLast() }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty else { throw .usage("DICOMweb URL '\(url)' has no host") }
        guard !authority.contains("@") else {
            throw .usage("DICOMweb URL must not carry credentials; give them in an environment variable or a file")
        }
        guard !rest.contains("?"), !rest.contains("#") else {
            throw .usage("DICOMweb URL '\(url)' must not have a query or fragment")
        }
        var host = String(authority)
        var port = scheme == "https" ? 443 : 80
        if host.hasPrefix("[") {
            // [IPv6]:port
            guard let close = host.firstIndex(of: "]") else { throw .usage("DICOMweb URL '\(url)': bad IPv6 host") }
            let after = host[host.index(after: close)...]
            if after.hasPrefix(":") {
                guard let p = Int(after.dropFirst()), (1...65535).contains(p) else {
                    throw .usage("DICOMweb URL '\(url)': bad port")
                }
                port = p
            }
            host = String(host[host.index(after: host.startIndex)..<close])
        } else if let colon = host.lastIndex(of: ":") {
            guard let p = Int(host[host.index(after: colon)...]), (1...65535).contains(p) else {
                throw .usage("DICOMweb URL '\(url)': bad port")
            }
            port = p
            host = String(host[..<colon])
        }
        guard !host.isEmpty else { throw .usage("DICOMweb URL '\(url)' has no host") }
        try HostName.validateConnectable(host, role: "DICOMweb URL host")
        self.scheme = scheme
        self.host = host
        self.port = port
        self.baseURL = scheme + "://" + rest
        self.authentication = authentication
    }

    /// Whether `text` names a DICOMweb place (`http://` or `https://`).
    public static func isURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("http://") || lower.hasPrefix("https://")
    }

    public var description: String { baseURL }

    /// The `Authorization` header value, `nil` without credentials.
    var authorization: String? {
        switch authentication {
        case .none: return nil
        case .bearer(let token): return "Bearer " + token
        case .basic(let secret): return "Basic " + Base64.encode(Array(secret.utf8))
        }
    }

    /// The secret for `kind` (`bearer` or `basic`) from the environment variable `variable` or,
    /// when `file` is given, from that file's first line.
    ///
    /// - Throws: ``PXError/usage(_:)`` for an unknown kind, an unset variable or an unreadable file.
    public static func authentication(kind: String, variable: String?, file: String?) throws(PXError) -> Authentication
    {
        guard kind == "bearer" || kind == "basic" else {
            throw .usage("auth must be \"bearer\" or \"basic\", not '\(kind)'")
        }
        let secret: String
        if let file {
            secret = try readSecret(file)
        } else {
            let name = variable ?? (kind == "bearer" ? "PX_DICOMWEB_TOKEN" : "PX_DICOMWEB_BASIC")
            guard let raw = getenv(name) else {
                throw .usage("auth = \"\(kind)\" needs the environment variable \(name)")
            }
            secret = String(cString: raw)
        }
        guard !secret.isEmpty else { throw .usage("the \(kind) credentials are empty") }
        if kind == "basic" {
            guard secret.contains(":") else { throw .usage("basic credentials must be user:password") }
            return .basic(userAndPassword: secret)
        }
        return .bearer(token: secret)
    }

    /// Credentials for a URL given on the command line: `$PX_DICOMWEB_TOKEN` (bearer), else
    /// `$PX_DICOMWEB_BASIC` (`user:password`), else none.
    public static func authenticationFromEnvironment() -> Authentication {
        if let raw = getenv("PX_DICOMWEB_TOKEN"), raw.pointee != 0 { return .bearer(token: String(cString: raw)) }
        if let raw = getenv("PX_DICOMWEB_BASIC"), raw.pointee != 0 {
            return .basic(userAndPassword: String(cString: raw))
        }
        return .none
    }

    /// The first line of a credentials file: a regular file of at most 64 KiB (``BoundedFile``).
    private static func readSecret(_ path: String) throws(PXError) -> String {
        guard let text = try BoundedFile.readText(path, limit: BoundedFile.credentialsLimit, role: "credentials file")
        else { throw .usage("cannot read the credentials file \(path)") }
        return String(text.prefix { $0 != "\n" && $0 != "\r" && $0 != "\r\n" })
    }
}
