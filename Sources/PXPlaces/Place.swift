import DICOMWeb
import PXCore
import PXStorage

/// Where studies are, as px-sync (and later every command that reads or writes studies) names it:
///
/// - a DIMSE node: `AE@host:port`, `host:AE:port`, `host:port` or a `[nodes.NAME]` of the config file;
/// - a folder of DICOM files: a path with a `/` in it (`/data/archive`, `./in`, `../x`), `.`, `..`,
///   `~/...`, `folder:PATH`, or a `[places.NAME]` with `kind = "folder"` (the default);
/// - a zip folder (one `.zip` per study under `<patient>/`): `zip:PATH` or a `[places.NAME]` with
///   `kind = "zip"`;
/// - a DICOMweb service (PS3.18): `http(s)://host/dicom-web`, or a `[nodes.NAME]` with `url`.
///
/// A bare word is always a config name (a place first, then a node), never a relative folder: write
/// `./word` for that.
public enum Place: Hashable, Sendable, CustomStringConvertible {
    /// A DIMSE peer, as ``PeerSpec`` parses it (an address or a config node name).
    case node(PeerSpec)
    /// A folder; `layout` is the ``StorageLayout`` template files are placed with (`nil`: pypx's tree).
    case folder(path: String, layout: String?)
    /// A zip folder, one archive per study.
    case zip(path: String)
    /// A DICOMweb base URL.
    case web(url: String)

    /// Parses what the command line gave, resolving config names in `config`.
    /// - Throws: ``PXError/usage(_:)`` for a malformed place or an unknown name.
    public static func parse(_ text: String, config: PXConfig) throws(PXError) -> Place {
        guard !text.isEmpty else { throw .usage("empty place") }
        if text.hasPrefix("zip:") { return .zip(path: try path(String(text.dropFirst(4)), in: text)) }
        if text.hasPrefix("folder:") {
            return .folder(path: try path(String(text.dropFirst(7)), in: text), layout: nil)
        }
        if DICOMWebPlace.isURL(text) { return .web(url: text) }
        if looksLikePath(text) { return .folder(path: try path(text, in: text), layout: nil) }
        if let place = config.places[text] { return place.place }
        let peer = try PeerSpec.parse(text)
        if case .node(let name) = peer {
            guard let node = config.nodes[name] else {
                throw .usage(
                    "'\(text)' is not a place: not AE@host:port, host:AE:port, a path (write ./\(text) for a folder here), "
                        + "zip:PATH, a URL, or a [places.\(text)] / [nodes.\(text)] in \(PXConfig.defaultPath ?? "the config file")"
                )
            }
            if let url = node.url { return .web(url: url) }
        }
        return .node(peer)
    }

    /// Whether `text` is written as a path: `.`, `..`, `~`, or with a `/` and no `@` before it.
    static func looksLikePath(_ text: String) -> Bool {
        if text == "." || text == ".." || text == "~" { return true }
        if text.hasPrefix("/") || text.hasPrefix("./") || text.hasPrefix("../") || text.hasPrefix("~/") { return true }
        return text.contains("/") && !text.contains("@") && !text.contains(":")
    }

    /// `text` made absolute, `~` expanded from `$HOME`.
    static func path(_ text: String, in whole: String) throws(PXError) -> String {
        guard !text.isEmpty else { throw .usage("place '\(whole)': empty path") }
        var expanded = text
        if text == "~" || text.hasPrefix("~/") {
            guard let home = PXConfig.environment("HOME") else { throw .usage("place '\(whole)': no $HOME for ~") }
            expanded = home + text.dropFirst()
        }
        var absolute = absolutePath(expanded)
        while absolute.count > 1 && absolute.hasSuffix("/") { absolute.removeLast() }
        return absolute
    }

    /// The place with `layout` as its layout template when it is a folder (`--layout`), else as it is.
    /// - Throws: ``PXError/usage(_:)`` for a template ``StorageLayout`` refuses.
    public func withLayout(_ template: String?) throws(PXError) -> Place {
        guard let template, case .folder(let path, _) = self else { return self }
        do { _ = try StorageLayout(template: template) } catch { throw .usage("--layout: \(error)") }
        return .folder(path: path, layout: template)
    }

    /// The place's kind (the one definition, ``PlaceKind``).
    public var kind: PlaceKind {
        switch self {
        case .node: return .node
        case .folder: return .folder
        case .zip: return .zip
        case .web: return .web
        }
    }

    public var description: String {
        switch self {
        case .node(.address(let host, let port, let ae)): return "\(ae.map { $0 + "@" } ?? "")\(host):\(port)"
        case .node(.node(let name)): return name
        case .node(.url(let url)), .web(let url): return url
        case .folder(let path, _): return path
        case .zip(let path): return "zip:" + path
        }
    }
}

extension PXConfig {
    /// A `[places.NAME]` table: `path = "/data/archive"`, `kind = "folder"` (default) or `"zip"`, and for a
    /// folder an optional `layout` template (see ``StorageLayout``).
    public struct PlaceEntry: Hashable, Sendable {
        public var path: String
        /// `folder` or `zip`.
        public var kind: PlaceKind
        public var layout: String?

        public init(path: String, kind: PlaceKind = .folder, layout: String? = nil) {
            self.path = path
            self.kind = kind
            self.layout = layout
        }

        /// The ``Place`` this entry names.
        public var place: Place {
            kind == .zip ? .zip(path: path) : .folder(path: path, layout: layout)
        }

        /// Reads one `[places.NAME]` table.
        /// - Throws: ``PXError/usage(_:)`` for a missing or relative path, an unknown kind, a bad layout.
        static func parse(_ keys: PlaceTable, table: String) throws(PXError) -> PlaceEntry {
            guard let path = keys.path, path.hasPrefix("/") else {
                throw .usage("config: [\(table)] needs path = \"/absolute/path\"")
            }
            var entry = PlaceEntry(path: path)
            if let text = keys.kind {
                guard let kind = PlaceKind(rawValue: text), kind == .folder || kind == .zip else {
                    throw .usage("config: [\(table)] kind must be \"folder\" or \"zip\"")
                }
                entry.kind = kind
            }
            if let template = keys.layout {
                guard entry.kind == .folder else {
                    throw .usage("config: [\(table)] layout must be a quoted template, for a folder place")
                }
                do { _ = try StorageLayout(template: template) } catch {
                    throw .usage("config: [\(table)] layout: \(error)")
                }
                entry.layout = template
            }
            return entry
        }
    }
}
