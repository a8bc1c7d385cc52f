import DICOMWeb
import PXCore

#if canImport(Glibc)
    import Glibc
#endif

/// px's config file, `$PX_CONFIG` or `~/.config/px/config.toml`:
///
/// ```toml
/// [local]
/// ae_title = "PXSCU"
///
/// [nodes.pacs]
/// host = "10.0.0.5"
/// port = 104
/// ae_title = "PACS"
///
/// [nodes.cloud]                      # a DICOMweb service (PS3.18)
/// url = "https://host/dicom-web"
/// auth = "bearer"                    # or "basic"; credentials never in this file:
/// credentials_env = "PACS_TOKEN"     # from this variable (default PX_DICOMWEB_TOKEN / _BASIC),
/// # credentials_file = "/run/secrets/pacs"   # or the first line of this file
/// transfer_syntax = "1.2.840.10008.1.2.1"    # WADO-RS Accept transfer-syntax (default *: as stored)
///
/// [places.archive]                   # a folder or zip place (see ``Place``)
/// path = "/data/archive"
/// kind = "folder"                    # or "zip"
/// layout = "{PatientID}/{StudyInstanceUID}/{SOPInstanceUID}.dcm"   # optional, folders only
/// ```
public struct PXConfig: Hashable, Sendable {
    public struct Node: Hashable, Sendable {
        public var host: String
        public var port: Int
        public var aeTitle: String
        /// `url`: the node is a DICOMweb service; `host`, `port` come from it.
        public var url: String?
        /// `auth` (`bearer` or `basic`) with `credentials_env` or `credentials_file`.
        public var auth: String?
        public var credentialsEnvironmentVariable: String?
        public var credentialsFile: String?
        /// `transfer_syntax`: the transfer syntax WADO-RS asks for (PS3.18 §8.7.3.5.2); `nil` for the stored one.
        public var transferSyntax: String?
        /// `tls = true` and `ca`, `cert`, `key`, `verify` (DICOM TLS, see ``TLSOptions``); `nil`: plain TCP.
        public var tls: TLSSettings? = nil

        public init(host: String, port: Int, aeTitle: String) {
            self.host = host
            self.port = port
            self.aeTitle = aeTitle
        }

        /// The DICOMweb place of a node with a `url`, its credentials read now.
        /// - Throws: ``PXError/usage(_:)``.
        public func dicomWebPlace() throws(PXError) -> DICOMWebPlace? {
            guard let url else { return nil }
            let authentication =
                try auth.map { (kind: String) throws(PXError) in
                    try DICOMWebPlace.authentication(
                        kind: kind, variable: credentialsEnvironmentVariable, file: credentialsFile)
                } ?? .none
            return try DICOMWebPlace(url: url, authentication: authentication)
        }
    }

    public var nodes: [String: Node]
    /// `[places.NAME]`: folder and zip places by name.
    public var places: [String: PlaceEntry] = [:]
    /// `[local] ae_title`: the default calling AE title.
    public var localAETitle: String?

    public init(nodes: [String: Node] = [:], localAETitle: String? = nil) {
        self.nodes = nodes
        self.localAETitle = localAETitle
    }

    /// Parses the file's text.
    /// - Throws: ``PXError/usage(_:)`` for syntax errors or incomplete nodes.
    public init(parsing text: String) throws(PXError) {
        let tables = try TOMLSubset.parse(text)
        var nodes: [String: Node] = [:]
        for (name, keys) in tables where name.hasPrefix("nodes.") {
            let node = String(name.dropFirst("nodes.".count))
            if case .string(let url)? = keys["url"] {
                let place = try DICOMWebPlace(url: url)
                var web = Node(host: place.host, port: place.port, aeTitle: "DICOMWEB")
                web.url = url
                if case .string(let auth)? = keys["auth"] { web.auth = auth }
                if case .string(let variable)? = keys["credentials_env"] {
                    web.credentialsEnvironmentVariable = variable
                }
                if case .string(let file)? = keys["credentials_file"] { web.credentialsFile = file }
                if case .string(let uid)? = keys["transfer_syntax"] { web.transferSyntax = uid }
                nodes[node] = web
                continue
            }
            guard case .string(let host)? = keys["host"] else { throw .usage("config: [\(name)] needs host = \"...\"") }
            guard case .integer(let port)? = keys["port"] else {
                throw .usage("config: [\(name)] needs port = <number>")
            }
            guard case .string(let ae)? = keys["ae_title"] ?? keys["aet"] else {
                throw .usage("config: [\(name)] needs ae_title = \"...\"")
            }
            nodes[node] = Node(host: host, port: port, aeTitle: ae)
            nodes[node]?.tls = try Self.tls(keys, table: name)
        }
        var local: String?
        if case .string(let ae)? = tables["local"]?["ae_title"] { local = ae }
        self.init(nodes: nodes, localAETitle: local)
        for (name, keys) in tables where name.hasPrefix("places.") {
            places[String(name.dropFirst("places.".count))] = try PlaceEntry.parse(keys, table: name)
        }
    }

    /// A node's TLS keys: `tls = true` turns TLS on; `ca`, `cert`, `key` (paths) and `verify` (`peer` or
    /// `none`) set it up. Any of them without `tls = true` is an error (never a silent plain connection).
    static func tls(_ keys: [String: TOMLSubset.Value], table: String) throws(PXError) -> TLSSettings? {
        func path(_ key: String) throws(PXError) -> String? {
            guard let value = keys[key] else { return nil }
            guard case .string(let text) = value else {
                throw .usage("config: [\(table)] \(key) must be a quoted path")
            }
            return text
        }
        let ca = try path("ca")
        let cert = try path("cert")
        let key = try path("key")
        let verifyText = try path("verify")
        var enabled = false
        if let value = keys["tls"] {
            guard case .bool(let flag) = value else { throw .usage("config: [\(table)] tls must be true or false") }
            enabled = flag
        }
        guard enabled else {
            if ca != nil || cert != nil || key != nil || verifyText != nil {
                throw .usage("config: [\(table)] has TLS keys (ca, cert, key, verify) but not tls = true")
            }
            return nil
        }
        var verification = TLSSettings.Verification.peer
        if let verifyText {
            guard let parsed = TLSSettings.Verification(rawValue: verifyText) else {
                throw .usage("config: [\(table)] verify must be \"peer\" or \"none\"")
            }
            verification = parsed
        }
        return try TLSSettings(caFile: ca, certificateFile: cert, keyFile: key, verification: verification)
    }

    /// The config file's path: `$PX_CONFIG`, else `$HOME/.config/px/config.toml`.
    public static var defaultPath: String? {
        if let p = environment("PX_CONFIG"), !p.isEmpty { return p }
        if let home = environment("HOME") { return home + "/.config/px/config.toml" }
        return nil
    }

    /// Loads the config file; an absent default file is an empty config, an absent `$PX_CONFIG` an error.
    public static func load() throws(PXError) -> PXConfig {
        guard let path = defaultPath else { return PXConfig() }
        guard let text = readFile(path) else {
            if environment("PX_CONFIG") != nil { throw .usage("cannot read config file \(path)") }
            return PXConfig()
        }
        return try PXConfig(parsing: text)
    }

    static func environment(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }

    /// A file's text, `nil` when it cannot be read (the config file, px-sync's --from-file).
    public static func readFile(_ path: String) -> String? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
