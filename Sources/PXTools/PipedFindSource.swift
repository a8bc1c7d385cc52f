import ArgumentParser
import DICOMData
import PXCommandLine
import PXCore
import PXPlaces

/// dcm's `query ... | sync DEST` as px spells it, `px-find PEER ... | px-sync DEST`: the source is the peer
/// px-find asked, read from the `command` of its envelope on stdin.
enum PipedFindSource {
    /// The place px-find queried, as px-sync names places: px-find's own peer argument (a config node name,
    /// `AE@host:port`, a URL), with its `--aec` (or pypx's `--serverIP`/`--serverPort`); from the pypx
    /// format's findscu command line, `AE@host:port`.
    /// - Throws: ``PXError/usage(_:)`` when stdin holds no px-find envelope, or one without a peer.
    static func place(pxFindOutput text: String) throws(PXError) -> String {
        switch try RetrieveSelection.findCommand(pxFindOutput: text) {
        case .argv(let argv)?:
            return try place(findArguments: Array(argv.dropFirst()))
        case .line(let line)?:
            return try place(findscuLine: line)
        case nil:
            throw .usage(
                "px-sync DEST reads its source from px-find's output on stdin, which has no px-find envelope: "
                    + "give SOURCE DEST")
        }
    }

    /// From px-find's arguments, parsed as px-find parses them.
    static func place(findArguments arguments: [String]) throws(PXError) -> String {
        let find: PXFind
        do { find = try PXFind.parse(arguments) } catch {
            throw .usage("px-sync DEST: cannot read the peer from px-find's command: \(PXFind.message(for: error))")
        }
        let connection = find.common.connection
        let called = connection.calledAETitle
        if let peer = connection.peer {
            guard let called else { return peer }
            switch try PeerSpec.parse(peer) {
            case .address(let host, let port, _): return address(called, host, port)
            case .node, .url: return peer
            }
        }
        guard let host = connection.serverIP, let port = connection.serverPort else {
            throw .usage("px-sync DEST: px-find's command names no peer")
        }
        return address(called, host, port)
    }

    /// From the pypx format's `findscu ... -aec AE -aet AE host port`.
    static func place(findscuLine line: String) throws(PXError) -> String {
        let words = line.split(separator: " ").map(String.init)
        guard words.first == "findscu", words.count >= 3, let port = Int(words[words.count - 1]),
            let at = words.firstIndex(of: "-aec"), at + 1 < words.count
        else {
            throw .usage("px-sync DEST: px-find's command line names no peer: \(HumanText.escaped(line))")
        }
        return address(words[at + 1], words[words.count - 2], port)
    }

    /// `AE@host:port` (`host:port` without an AE title), an IPv6 host in brackets.
    static func address(_ aeTitle: String?, _ host: String, _ port: Int) -> String {
        (aeTitle.map { $0 + "@" } ?? "") + "\(host.contains(":") ? "[\(host)]" : host):\(port)"
    }
}
