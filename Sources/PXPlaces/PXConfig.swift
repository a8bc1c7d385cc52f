import DICOMWeb
import PXCore
import TOMLKit

#if canImport(Glibc)
    import Glibc
#endif

/// px's config file, `$PX_CONFIG` or `~/.config/px/config.toml` (TOML 1.0, read with TOMLKit):
///
/// ```toml
/// [local]
/// ae_title = "PXSCU"
/// port = 11112                       # where px listens for a storage commitment report (px-push --commit)
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
///
/// # dcm's sections are read too (its dcm_conf.toml can be used as it is):
/// [remote_nodes.mypacs]              # a node, as [nodes.mypacs]; host (or hostname), ae_title
/// host = "mypacs.org"                # (default ANYAE) and port (default 11112), as dcm defaults them
/// ae_title = "MYPACS"
/// port = 11112
///
/// [local_nodes.default]              # the calling AE title, as [local] ae_title
/// ae_title = "YOURAE"
/// port = 11112
/// ```
///
/// Without px's own file (no `$PX_CONFIG` and no `~/.config/px/config.toml`), px reads dcm's:
/// `$DCM_CONFIG_PATH`, else `~/.config/dcm/dcm_conf.toml`. Tables and keys px does not know are left alone.
public struct PXConfig: Hashable, Sendable {
    public struct Node: Hashable, Sendable {
        public var host: String
        public var port: Int
        /// The called AE title; empty for a DICOMweb service (a node with `url`), which has none.
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
        /// `user`: the username presented to the node (User Identity Negotiation, PS3.7 §D.3.3.7; see
        /// ``UserIdentityOptions``), with its password from `password_env` (a variable's name) or
        /// `password_file` (the file's first line); never the password itself in this file.
        public var user: String? = nil
        public var passwordEnvironmentVariable: String? = nil
        public var passwordFile: String? = nil

        public init(host: String, port: Int, aeTitle: String) {
            self.host = host
            self.port = port
            self.aeTitle = aeTitle
        }

        /// The password for ``user``: `password_env`'s variable, else `password_file`'s first line, else `nil`.
        /// - Throws: ``PXError/usage(_:)`` for an unset variable or an unreadable file.
        public func password() throws(PXError) -> String? {
            if let variable = passwordEnvironmentVariable {
                guard let value = PXConfig.environment(variable) else {
                    throw .usage("config: the node's password_env names \(variable), which is not set")
                }
                return value
            }
            guard let passwordFile else { return nil }
            guard
                let text = try PXConfig.readFile(
                    passwordFile, limit: BoundedFile.credentialsLimit, role: "the node's password_file")
            else {
                throw .usage("config: cannot read the node's password_file \(passwordFile)")
            }
            return String(text.prefix { $0 != "\n" && $0 != "\r" })
        }

        /// The identity the node presents on its own (User Identity Negotiation, PS3.7 §D.3.3.7): its `user`,
        /// with the password of `password_env` or `password_file`, else `$PX_PASSWORD`; `nil` without `user`.
        /// - Throws: ``PXError/usage(_:)`` for an empty user, an unset `password_env` or an unreadable
        ///   `password_file`.
        public func userIdentity() throws(PXError) -> UserIdentity? {
            guard let name = user else { return nil }
            guard !name.isEmpty else { throw .usage("config: a node's user is empty") }
            let passcode = try password() ?? PXConfig.environment(PXConfig.passwordVariable)
            return UserIdentity(passcode.map { .usernameAndPasscode(name, passcode: $0) } ?? .username(name))
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
    /// `[local] ae_title`, else dcm's `[local_nodes.default] ae_title`: the default calling AE title.
    public var localAETitle: String?
    /// `[local] port`, else dcm's `[local_nodes.default] port`: the port the local AE listens on, when the file
    /// says (px-push `--commit` waits there for a storage commitment report).
    public var localPort: Int?

    public init(nodes: [String: Node] = [:], localAETitle: String? = nil) {
        self.nodes = nodes
        self.localAETitle = localAETitle
    }

    /// Parses the file's text (any TOML 1.0 document).
    /// - Parameters:
    ///   - text: the file's contents.
    ///   - path: the file, named in messages.
    /// - Throws: ``PXError/usage(_:)`` for invalid TOML (with its line and column), a key of the wrong type,
    ///   or an incomplete node.
    public init(parsing text: String, path: String? = nil) throws(PXError) {
        let file = try ConfigFile.decode(text, path: path)
        self.init(nodes: [:], localAETitle: file.local?.aeTitle)
        for (name, table) in file.nodes ?? [:] {
            nodes[name] = try table.node(table: "nodes.\(name)")
        }
        for (name, table) in file.remoteNodes ?? [:] {
            guard nodes[name] == nil else {
                throw .usage("config: node '\(name)' is both [nodes.\(name)] and [remote_nodes.\(name)]")
            }
            nodes[name] = try table.node(table: "remote_nodes.\(name)", dcmDefaults: true)
        }
        // dcm's default local node is the one named `default`, else the first (dcm's own rule).
        let locals = file.localNodes ?? [:]
        if let local = locals["default"] ?? locals.sorted(by: { $0.key < $1.key }).first?.value {
            if localAETitle == nil { localAETitle = local.aeTitle }
            localPort = local.port
        }
        if let port = file.local?.port {
            guard (1...65535).contains(port) else { throw .usage("config: [local] port \(port) is out of range") }
            localPort = port
        }
        for (name, table) in file.places ?? [:] {
            places[name] = try PlaceEntry.parse(table, table: "places.\(name)")
        }
    }

    /// The config file's path: `$PX_CONFIG`, else `$HOME/.config/px/config.toml`.
    public static var defaultPath: String? {
        if let p = environment("PX_CONFIG"), !p.isEmpty { return p }
        if let home = environment("HOME") { return home + "/.config/px/config.toml" }
        return nil
    }

    /// dcm's config file, read when px has none of its own: `$DCM_CONFIG_PATH`, else
    /// `$HOME/.config/dcm/dcm_conf.toml` (where dcm keeps it on Linux).
    public static var dcmPath: String? {
        if let p = environment("DCM_CONFIG_PATH"), !p.isEmpty { return p }
        if let home = environment("HOME") { return home + "/.config/dcm/dcm_conf.toml" }
        return nil
    }

    /// Loads the config file; an absent default file is an empty config (or dcm's file, when there is one),
    /// an absent `$PX_CONFIG` an error. The file is read by ``readFile(_:limit:role:)``: a regular file of at
    /// most 1 MiB (``BoundedFile/configLimit``).
    /// - Throws: ``PXError/usage(_:)``: an unreadable `$PX_CONFIG`, a config that is not a regular file or is
    ///   over 1 MiB, invalid TOML, a bad node or place.
    public static func load() throws(PXError) -> PXConfig {
        guard let path = defaultPath else { return PXConfig() }
        if let text = try readFile(path, limit: BoundedFile.configLimit, role: "config file") {
            return try PXConfig(parsing: text, path: path)
        }
        if let p = environment("PX_CONFIG"), !p.isEmpty { throw .usage("cannot read config file \(path)") }
        if let dcm = dcmPath, let text = try readFile(dcm, limit: BoundedFile.configLimit, role: "config file") {
            return try PXConfig(parsing: text, path: dcm)
        }
        return PXConfig()
    }

    /// The variable a password is read from when no other source gives one: `PX_PASSWORD`.
    public static let passwordVariable = "PX_PASSWORD"

    public static func environment(_ name: String) -> String? {
        guard let raw = getenv(name) else { return nil }
        return String(cString: raw)
    }

    /// A file's text, `nil` when there is no file at `path` (the config file, `--JSONargs FILE`, px-sync's
    /// `--from-file`): a regular file of at most `limit` bytes (``BoundedFile/readText(_:limit:role:)``).
    /// - Throws: ``PXError/usage(_:)`` naming `role`, the file and the reason (a FIFO, a device, a directory,
    ///   over `limit`, unreadable).
    public static func readFile(_ path: String, limit: Int, role: String) throws(PXError) -> String? {
        try BoundedFile.readText(path, limit: limit, role: role)
    }
}

extension PXConfig {
    /// The tables px reads from the file, decoded by TOMLKit; every key optional, so that what is required is
    /// said by ``NodeTable/node(table:dcmDefaults:)`` in px's words.
    struct ConfigFile: Decodable {
        var local: LocalTable?
        var nodes: [String: NodeTable]?
        var places: [String: PlaceTable]?
        /// dcm's `[remote_nodes.NAME]` and `[local_nodes.NAME]`.
        var remoteNodes: [String: NodeTable]?
        var localNodes: [String: NodeTable]?

        enum CodingKeys: String, CodingKey {
            case local, nodes, places
            case remoteNodes = "remote_nodes"
            case localNodes = "local_nodes"
        }

        /// Parses and decodes `text`.
        /// - Throws: ``PXError/usage(_:)`` naming the line of a TOML syntax error, or the key of a wrong type.
        static func decode(_ text: String, path: String?) throws(PXError) -> ConfigFile {
            let name = path.map { "config file \($0)" } ?? "config"
            do {
                return try TOMLDecoder().decode(ConfigFile.self, from: text)
            } catch let error as TOMLParseError {
                let at = error.source.begin
                throw .usage("\(name) line \(at.line), column \(at.column): \(error.description)")
            } catch let error as DecodingError {
                throw .usage("\(name): \(Self.describe(error))")
            } catch {
                throw .usage("\(name): \(error)")
            }
        }

        /// A decoding failure as `nodes.pacs.port must be a number`.
        static func describe(_ error: DecodingError) -> String {
            let context: DecodingError.Context
            var expected: String?
            switch error {
            case .typeMismatch(let type, let c):
                context = c
                expected = "\(type)"
            case .keyNotFound(_, let c), .valueNotFound(_, let c):
                // TOMLKit reports a key of the wrong type as `A "Int" does not exist at "port"`.
                context = c
                let parts = c.debugDescription.split(separator: "\"")
                if parts.count >= 2 { expected = String(parts[1]) }
            case .dataCorrupted(let c):
                context = c
            @unknown default:
                return "\(error)"
            }
            let key = context.codingPath.map(\.stringValue).joined(separator: ".")
            switch expected {
            case "Int"?: return "\(key) must be a number"
            case "String"?: return "\(key) must be a quoted string"
            case "Bool"?: return "\(key) must be true or false"
            case let type?:
                return "\(key) must be a \(type.contains("Table") || type.contains("Dictionary") ? "table" : type)"
            case nil: return "\(key): \(context.debugDescription)"
            }
        }
    }

    /// `[local]`.
    struct LocalTable: Decodable {
        var aeTitle: String?
        var port: Int?
        enum CodingKeys: String, CodingKey {
            case aeTitle = "ae_title"
            case port
        }
    }

    /// `[nodes.NAME]`, dcm's `[remote_nodes.NAME]` and `[local_nodes.NAME]`.
    struct NodeTable: Decodable {
        var host: String?
        /// dcm's README spelling of `host`.
        var hostname: String?
        var port: Int?
        var aeTitle: String?
        var aet: String?
        var url: String?
        var auth: String?
        var credentialsEnvironmentVariable: String?
        var credentialsFile: String?
        var transferSyntax: String?
        var tls: Bool?
        var ca: String?
        var cert: String?
        var key: String?
        var verify: String?
        var user: String?
        var passwordEnvironmentVariable: String?
        var passwordFile: String?

        enum CodingKeys: String, CodingKey {
            case host, hostname, port, aet, url, auth, tls, ca, cert, key, verify, user
            case passwordEnvironmentVariable = "password_env"
            case passwordFile = "password_file"
            case aeTitle = "ae_title"
            case credentialsEnvironmentVariable = "credentials_env"
            case credentialsFile = "credentials_file"
            case transferSyntax = "transfer_syntax"
        }

        /// The node this table describes. px's own `[nodes.NAME]` needs host, port and ae_title; dcm's
        /// `[remote_nodes.NAME]` needs only a host (`ae_title` ANYAE and `port` 11112 by default, as in dcm).
        /// - Throws: ``PXError/usage(_:)`` for a missing key, a bad URL or TLS keys without `tls = true`.
        func node(table: String, dcmDefaults: Bool = false) throws(PXError) -> Node {
            if let url {
                let place = try DICOMWebPlace(url: url)
                // A DICOMweb service has no AE title: `url` is what commands look at, never `aeTitle`.
                var web = Node(host: place.host, port: place.port, aeTitle: "")
                web.url = url
                web.auth = auth
                web.credentialsEnvironmentVariable = credentialsEnvironmentVariable
                web.credentialsFile = credentialsFile
                web.transferSyntax = transferSyntax
                return web
            }
            guard let written = host ?? hostname else { throw .usage("config: [\(table)] needs host = \"...\"") }
            let host = try HostName.parse(written, role: "config: [\(table)] host")
            guard let port = port ?? (dcmDefaults ? 11112 : nil) else {
                throw .usage("config: [\(table)] needs port = <number>")
            }
            guard let ae = aeTitle ?? aet ?? (dcmDefaults ? "ANYAE" : nil) else {
                throw .usage("config: [\(table)] needs ae_title = \"...\"")
            }
            var node = Node(host: host, port: port, aeTitle: ae)
            node.tls = try tlsSettings(table: table)
            if user == nil && (passwordEnvironmentVariable != nil || passwordFile != nil) {
                throw .usage("config: [\(table)] has password_env or password_file but no user")
            }
            node.user = user
            node.passwordEnvironmentVariable = passwordEnvironmentVariable
            node.passwordFile = passwordFile
            return node
        }

        /// The TLS keys: `tls = true` turns TLS on; `ca`, `cert`, `key` (paths) and `verify` (`peer` or
        /// `none`) set it up. Any of them without `tls = true` is an error (never a silent plain connection).
        func tlsSettings(table: String) throws(PXError) -> TLSSettings? {
            guard tls == true else {
                if ca != nil || cert != nil || key != nil || verify != nil {
                    throw .usage("config: [\(table)] has TLS keys (ca, cert, key, verify) but not tls = true")
                }
                return nil
            }
            var verification = TLSSettings.Verification.peer
            if let verify {
                guard let parsed = TLSSettings.Verification(rawValue: verify) else {
                    throw .usage("config: [\(table)] verify must be \"peer\" or \"none\"")
                }
                verification = parsed
            }
            return try TLSSettings(caFile: ca, certificateFile: cert, keyFile: key, verification: verification)
        }
    }

    /// `[places.NAME]`, checked by ``PlaceEntry``.
    struct PlaceTable: Decodable {
        var path: String?
        var kind: String?
        var layout: String?
    }
}
